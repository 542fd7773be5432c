// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package dialpeer

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Dialed is the address net/http's Transport dials for u, with hostHeader
// as the request's Host, or "" when it dials nothing. No connection is
// made: the dialer records the address and fails.
func Dialed(u *url.URL, hostHeader string) string {
	var got string
	tr := &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
		got = addr
		return nil, errors.New("dialpeer: not dialed")
	}}
	defer tr.CloseIdleConnections()
	req := &http.Request{Method: http.MethodGet, URL: u, Host: hostHeader, Header: http.Header{}}
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	return got
}

// Peer is a dialed address as one peer: the port as a number, an IP
// address in its one form (an IPv4-mapped one unmapped), a name without
// its ASCII case and one trailing dot (docs/budget.md: one dependency),
// the root, ".", kept.
// ok is false for a name that is not all ASCII or is an A-label, which
// the dependency key leaves apart from its Unicode spelling (documented).
func Peer(addr string) (peer string, ok bool) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, true
	}
	if n, err := strconv.Atoi(p); err == nil {
		p = strconv.Itoa(n)
	}
	for _, r := range h {
		if r >= 0x80 {
			return "", false
		}
	}
	if strings.HasPrefix(h, "xn--") || strings.Contains(h, ".xn--") {
		return "", false
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Is4In6() && a.Zone() == "" {
			a = a.Unmap()
		}
		return a.String() + " " + p, true
	}
	if len(h) > 1 { // the root, ".", is no name with a trailing dot
		h = strings.TrimSuffix(h, ".")
	}
	return strings.ToLower(h) + " " + p, true
}

// URLs are hosts written many ways, by scheme: names in several cases,
// with and without a trailing dot; IPv4, IPv6 in several spellings, mapped
// and with zones; a '%' in a name; Unicode and its A-label; each bare and
// in brackets, with ports empty, default, zero-padded and not.
func URLs() []*url.URL {
	names := []string{"api.test", "API.test", "api.test.", "Api.Test.", "127.0.0.1", "127.0.0.1.", "::1", "0:0::1", "::0001",
		"::ffff:127.0.0.1", "::FFFF:7f00:1", "fe80::1%en0", "fe80::1%EN0", "FE80::0001%en0", "fe80::1%en0.",
		"127.0.0.1%eth0", "127.0.0.1%ETH0", "api%ZZ.test", "api%zz.test", "2001:db8::1", "2001:DB8::abcd", "1.2.3.4",
		"::", "0::0", "0:0:0:0:0:0:0:0", "64:ff9b::1.2.3.4", "::ffff:1.2.3.4%en0",
		"b\u00fccher.test", "B\u00dcCHER.test", "xn--bcher-kva.test"}
	ports := []string{"", ":", ":80", ":080", ":443", ":0443", ":8080", ":08080", ":0"}
	var out []*url.URL
	for _, scheme := range []string{"http", "https"} {
		for _, n := range names {
			for _, h := range []string{n, "[" + n + "]"} {
				for _, p := range ports {
					out = append(out, &url.URL{Scheme: scheme, Host: h + p, Path: "/x"})
				}
			}
		}
	}
	return out
}

// Mismatch is a pair of URLs of one scheme where the key disagrees with
// the peer: one peer, two keys, or two peers, one key.
type Mismatch struct {
	A, B         string // the URLs
	PeerA, PeerB string
	KeyA, KeyB   string
}

// Check compares key with the peer net/http dials, pairwise over URLs of
// one scheme (the key leaves the scheme out), and returns where they
// disagree, at most limit of them (one for each ordered pair of keys: a
// key that merges every peer gives one), and the number of URLs compared.
func Check(urls []*url.URL, key func(*url.URL) string, limit int) (mismatches []Mismatch, compared int) {
	type row struct{ scheme, u, peer, key string }
	var rows []row
	for _, u := range urls {
		d := Dialed(u, "other.test")
		if d == "" {
			continue
		}
		p, ok := Peer(d)
		if !ok {
			continue
		}
		rows = append(rows, row{u.Scheme, u.String(), p, key(u)})
	}
	seen := map[[2]string]bool{}
	for i, a := range rows {
		for _, b := range rows[i+1:] {
			if a.scheme != b.scheme || (a.peer == b.peer) == (a.key == b.key) || seen[[2]string{a.key, b.key}] {
				continue
			}
			seen[[2]string{a.key, b.key}] = true
			if mismatches = append(mismatches, Mismatch{a.u, b.u, a.peer, b.peer, a.key, b.key}); len(mismatches) == limit {
				return mismatches, len(rows)
			}
		}
	}
	return mismatches, len(rows)
}
