// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"net/url"
	"strconv"
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/internal/dialpeer"
)

// transportSpan is the attempt span the transport records for u:
// server.address URL.Hostname(), server.port as recorder.go's serverPort,
// url.full.
func transportSpan(u *url.URL) *model.Span {
	attrs := []model.Attribute{
		{Key: keyServerAddress, Value: model.String(u.Hostname())},
		{Key: keyURLFull, Value: model.String(u.String())},
	}
	port, ok := 0, false
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		port, ok = n, err == nil
	} else if u.Scheme == "http" {
		port, ok = 80, true
	} else if u.Scheme == "https" {
		port, ok = 443, true
	}
	if ok {
		attrs = append(attrs, model.Attribute{Key: keyServerPort, Value: model.Int(int64(port))})
	}
	return &model.Span{Attributes: attrs}
}

// Pairwise over hosts written many ways (dialpeer.URLs), within a scheme:
// one peer net/http dials is one dependency name for the span the
// transport records (docs/budget.md: a dependency, "on every page and in
// retryinspect", is the budget's key), and two peers two, but for the
// documented Unicode exceptions (a reviewer's oracle).
func TestTheDependencyNameFollowsWhatNetHTTPDials(t *testing.T) {
	bad, n := dialpeer.Check(dialpeer.URLs(), func(u *url.URL) string { return hostOf(transportSpan(u)) }, 15)
	for _, m := range bad {
		t.Errorf("%s dials peer %q, name %q; %s dials peer %q, name %q", m.A, m.PeerA, m.KeyA, m.B, m.PeerB, m.KeyB)
	}
	if n < 500 {
		t.Errorf("%d URLs compared; the set should give several hundred", n)
	}
}

// retryinspect's name for the span the transport records equals the
// budget's key (budget.go hostOf) for the same URL (docs/budget.md: a
// dependency is the same "on every page and in retryinspect"). The keys
// below are what otelretry's hostOf returns for these URLs; retryinspect
// named each otherwise (a reviewer's find).
func TestTheDependencyNameIsTheBudgetsKey(t *testing.T) {
	for host, budgetKey := range map[string]string{
		"api%ZZ.test":                   "api%zz.test",    // '%' in a name is no IPv6 zone: the budget lowers it all
		"127.0.0.1%ETH0":                "127.0.0.1%eth0", // an IPv4 address has no zone
		"[fe80::1%en0.]":                "[fe80::1%en0.]", // the zone en0. is not en0
		"api.test:99999999999999999999": "api.test:99999999999999999999",
		// The local system, as http.Get("http://:8080/") writes it: named
		// nothing where the budget keys ":8080" (a reviewer's find).
		":8080": ":8080", "[]:9": ":9",
	} {
		u := &url.URL{Scheme: "http", Host: host, Path: "/x"}
		if got := hostOf(transportSpan(u)); got != budgetKey {
			t.Errorf("%s: retryinspect names %q, the budget keys %q", u, got, budgetKey)
		}
	}
}
