// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"testing"
)

// dialedAddr is the address net/http's Transport dials for rawURL (no
// connection is made: the dialer records and fails).
func dialedAddr(t *testing.T, rawURL string) string {
	t.Helper()
	var got string
	tr := &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
		got = addr
		return nil, errors.New("not dialed")
	}}
	defer tr.CloseIdleConnections()
	req := &http.Request{Method: http.MethodGet, URL: hostURL(rawURL), Header: http.Header{}}
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	return got
}

// hostURL is an http URL with host as its Host, as a URL built by hand
// (url.Parse refuses an IPv6 host without brackets).
func hostURL(host string) *url.URL { return &url.URL{Scheme: "http", Host: host, Path: "/x"} }

// An IPv4-mapped IPv6 literal is the IPv4 address: Go dials
// [::ffff:127.0.0.1]:8080 as 127.0.0.1:8080 (net.IP.Equal says one
// address). Two spellings of one address were two dependencies (a
// reviewer's find).
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
