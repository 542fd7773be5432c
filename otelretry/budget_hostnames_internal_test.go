// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"net/url"
	"testing"
)

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
	} {
		a, b := dialedAddr(t, pair[0]), dialedAddr(t, pair[1])
		if a != b || a == "" {
			t.Fatalf("premise: net/http dials %q and %q", a, b)
		}
		ka, kb := hostOf(&http.Request{URL: hostURL(pair[0])}), hostOf(&http.Request{URL: hostURL(pair[1])})
		if ka != kb {
			t.Errorf("net/http dials both %q and %q at %s, but their dependencies are %q and %q", pair[0], pair[1], a, ka, kb)
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
