// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package hostname

import (
	"net/netip"
	"strings"
)

// One is a host's name (no port, no brackets) written one way: its ASCII
// letters in lower case (no copy when they are already; a DNS name's case
// is ASCII's: strings.ToLower would make "İ.test", which net/http dials as
// xn--i-9bb.test, i.test), but for an IPv6 zone (an interface's name,
// whose case tells interfaces apart), without the trailing dot of a fully
// qualified name (the root, ".", is kept), and an IP address in its one
// written form (RFC 5952: 0:0::1 and ::0001 are ::1; an IPv4-mapped
// ::ffff:127.0.0.1 is 127.0.0.1, which Go dials for it).
func One(name string) string {
	if strings.IndexByte(name, ':') < 0 {
		if len(name) > 1 { // "." is the root, no name's trailing dot
			name = strings.TrimSuffix(name, ".")
		}
		return LowerASCII(name)
	}
	addr, err := netip.ParseAddr(name)
	switch {
	case err != nil:
		if zone := strings.IndexByte(name, '%'); zone >= 0 {
			return LowerASCII(name[:zone]) + name[zone:]
		}
		return LowerASCII(name)
	case addr.Is4In6() && addr.Zone() == "":
		return addr.Unmap().String()
	}
	return addr.String()
}

// LowerASCII is s with its ASCII letters in lower case, s itself when it
// has none in upper case.
func LowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for ; i < len(b); i++ {
				if 'A' <= b[i] && b[i] <= 'Z' {
					b[i] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
