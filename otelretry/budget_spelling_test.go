// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// outageCalls runs one operation per URL, in order and one at a time,
// through a fresh Transport whose base answers every call 503, and
// returns how many calls reached the base.
func outageCalls(t *testing.T, urls []string) int64 {
	t.Helper()
	var calls atomic.Int64
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	rt := otelretry.NewTransport(base, otelretry.WithMaxAttempts(3), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	for _, u := range urls {
		resp, err := rt.RoundTrip(get(t, t.Context(), u))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		resp.Body.Close()
	}
	return calls.Load()
}

// A dependency is one host (docs/budget.md: "the port only when it is not
// the scheme's default"; CHANGELOG: "a dependency is one DNS name"):
// spellings of one host that net/http sends to the same address, with the
// same Host header, share one budget. 16 operations in an outage cost the
// same number of calls whether they name the host one way or two. (An IDN
// host and its A-label are two: docs/budget.md.)
func TestOneHostSpelledTwoWaysIsOneDependency(t *testing.T) {
	for _, c := range []struct{ name, a, b string }{
		// net/http dials "api.test:080", port 80; retryinspect reads
		// server.port 80 and names the dependency api.test.
		{"zero-padded default port", "http://api.test/x", "http://api.test:080/x"},
		{"zero-padded port", "http://api.test:8080/x", "http://api.test:08080/x"},
		{"zero-padded default port over TLS", "https://API.test/x", "https://api.test.:0443/x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var one, two []string
			for i := range 16 {
				one = append(one, c.a)
				if i%2 == 0 {
					two = append(two, c.a)
				} else {
					two = append(two, c.b)
				}
			}
			n1, n2 := outageCalls(t, one), outageCalls(t, two)
			if n1 != n2 {
				t.Errorf("16 operations in an outage reached the server %d times under %q alone, %d times under %q and %q: "+
					"one host kept as two dependencies, each with its own retries", n1, c.a, n2, c.a, c.b)
			}
		})
	}
}

// Two hosts never share one: an IPv6 zone is an interface's name, which
// Linux tells apart by case, so [fe80::1%en0] and [fe80::1%EN0] are two
// dependencies, as en0 and en1 are. The whole host was lower-cased, zone
// and all (a reviewer's find).
func TestZonesOfTwoInterfacesAreTwoDependencies(t *testing.T) {
	for _, other := range []string{"en1", "EN0"} {
		var one, two []string
		for i := range 16 {
			one = append(one, "http://[fe80::1%25en0]/x")
			if i%2 == 0 {
				two = append(two, "http://[fe80::1%25en0]/x")
			} else {
				two = append(two, "http://[fe80::1%25"+other+"]/x")
			}
		}
		if n1, n2 := outageCalls(t, one), outageCalls(t, two); n2 <= n1 {
			t.Errorf("zone en0 alone: %d calls; en0 and %s alternating: %d; want more (two interfaces, two budgets)", n1, other, n2)
		}
	}
	if n1, n2 := outageCalls(t, []string{"http://[FE80::1%25en0]/x", "http://[fe80::1%25en0]/x"}),
		outageCalls(t, []string{"http://[fe80::1%25en0]/x", "http://[fe80::1%25en0]/x"}); n1 != n2 {
		t.Errorf("the address's own case split one host: %d calls against %d", n1, n2)
	}
}
