// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net"
	"net/http"
	"net/url"
	"testing"

	"github.com/otelretry/otelretry-go/internal/dialpeer"
)

// dialedAddr is the address net/http's Transport dials for host in an
// http URL.
func dialedAddr(t *testing.T, host string) string {
	t.Helper()
	return dialpeer.Dialed(hostURL(host), "")
}

// hostURL is an http URL with host as its Host, as a URL built by hand
// (url.Parse refuses an IPv6 host without brackets).
func hostURL(host string) *url.URL { return &url.URL{Scheme: "http", Host: host, Path: "/x"} }

// Pairwise over hosts written many ways (dialpeer.URLs), within a scheme:
// one peer net/http dials is one budget key, and two peers two, but for
// the documented Unicode exceptions (a reviewer's oracle, after three
// rounds found spellings the key split or merged).
func TestTheBudgetKeyFollowsWhatNetHTTPDials(t *testing.T) {
	bad, n := dialpeer.Check(dialpeer.URLs(), func(u *url.URL) string {
		return hostOf(&http.Request{URL: u, Host: "other.test"})
	}, 15)
	for _, m := range bad {
		t.Errorf("%s dials peer %q, key %q; %s dials peer %q, key %q", m.A, m.PeerA, m.KeyA, m.B, m.PeerB, m.KeyB)
	}
	if n < 500 {
		t.Errorf("%d URLs compared; the set should give several hundred", n)
	}
}

// Every pair here is dialed by net/http's Transport at one address (a
// recording DialContext: dialedAddr), so docs/budget.md promises one
// dependency. A URL built by hand may carry an IPv6 host without brackets
// (url.Parse refuses one; the transport refuses only "@", "?" and "#" in
// URL.Host): the whole of "2001:db8::1:8080" was read as one address;
// then the port was split off at the last colon whatever followed it,
// where url.URL's Port (which net/http dials) takes only digits, so
// "2001:db8::abcd" was "[2001:db8:]:abcd" (two reviewers' finds).
func TestOneAddressIsOneDependencyAsNetHTTPSplitsIt(t *testing.T) {
	for _, pair := range [][2]string{
		{"[2001:db8::1]:8080", "2001:db8::1:8080"},
		{"[2001:db8::1]", "2001:db8::1:80"},
		{"[2001:db8::abcd]", "2001:db8::abcd"},
		{"[::ffff:127.0.0.1]", "::ffff:127.0.0.1"},
		{"[fe80::1%en0]:8080", "fe80::1%en0:8080"},
		{":8080", "[]:8080"}, // an empty host, as url.Hostname reads "[]"
		// "0::0" is as long as "[::]": the key took it for that one
		// bracketed and kept it as written (a reviewer's find).
		{"[::]:8080", "0::0:8080"},
		{"[::]", "0::0:"},
	} {
		a, b := dialedAddr(t, pair[0]), dialedAddr(t, pair[1])
		pa, _ := dialpeer.Peer(a)
		if pb, _ := dialpeer.Peer(b); pa != pb || a == "" {
			t.Fatalf("premise: net/http dials %q and %q, two peers", a, b)
		}
		ka, kb := hostOf(&http.Request{URL: hostURL(pair[0])}), hostOf(&http.Request{URL: hostURL(pair[1])})
		if ka != kb {
			t.Errorf("net/http dials both %q and %q at %s, but their dependencies are %q and %q", pair[0], pair[1], pa, ka, kb)
		}
	}
}

// Two hosts net/http dials at two addresses never share one dependency
// (one's failures would refuse the other's retries): strings.ToLower made
// "İ.test", which net/http dials as xn--i-9bb.test, i.test (a reviewer's
// find); a name's case is its ASCII letters'.
func TestTwoAddressesAreTwoDependencies(t *testing.T) {
	for _, pair := range [][2]string{
		{"\u0130.test", "i.test"},
		// The root, ".", is no name with a trailing dot: it took the key of
		// the local system, ":8080" (a reviewer's note).
		{".:8080", ":8080"},
	} {
		a, b := dialedAddr(t, pair[0]), dialedAddr(t, pair[1])
		if a == b || a == "" || b == "" {
			t.Fatalf("premise: net/http dials %q and %q", a, b)
		}
		ka, kb := hostOf(&http.Request{URL: hostURL(pair[0])}), hostOf(&http.Request{URL: hostURL(pair[1])})
		if ka == kb {
			t.Errorf("net/http dials %q at %q and %q at %q, but both are dependency %q", pair[0], a, pair[1], b, ka)
		}
	}
}

// A port past int (url.Parse takes any digits; no dial does) is no
// server.port on the span, where it was the scheme's default, 443, which
// named another dependency (a reviewer's find).
func TestAPortPastIntIsNotTheSchemesDefault(t *testing.T) {
	u, err := url.Parse("https://api.test:99999999999999999999/x")
	if err != nil {
		t.Fatal(err)
	}
	if port, ok := serverPort(u); ok {
		t.Errorf("server.port %d for port 99999999999999999999; want none", port)
	}
}

func TestAnIPv4MappedAddressIsItsIPv4Dependency(t *testing.T) {
	a, err := net.ResolveTCPAddr("tcp", "[::ffff:127.0.0.1]:8080")
	if err != nil {
		t.Fatal(err)
	}
	b, err := net.ResolveTCPAddr("tcp", "127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	if !a.IP.Equal(b.IP) || a.Port != b.Port {
		t.Fatalf("premise: %v and %v are not one address", a, b)
	}
	ua, _ := url.Parse("http://[::ffff:127.0.0.1]:8080/x")
	ub, _ := url.Parse("http://127.0.0.1:8080/x")
	if ka, kb := hostOf(&http.Request{URL: ua}), hostOf(&http.Request{URL: ub}); ka != kb {
		t.Errorf("one address %v, two dependencies %q and %q", b, ka, kb)
	}
}
