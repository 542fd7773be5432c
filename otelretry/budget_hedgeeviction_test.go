// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/budget.md: "A host with state is forgotten only to make room". A
// hedge whose budget token a new host took in a full table, and which the
// hedge rate then refused, takes no place: the idle host its token made
// room for keeps its state (at the floor after its outage), and its next
// failure is not retried.
func TestAHedgeTheRateRefusesForgetsNoHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			status := http.StatusOK
			if r.URL.Host == "a.test" {
				status = http.StatusServiceUnavailable
			}
			select {
			case <-time.After(50 * time.Millisecond):
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
			return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		budget := &otelretry.Budget{MaxHosts: 1, IdleEviction: time.Minute}
		rt := otelretry.NewTransport(base, otelretry.WithBudget(budget),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 0.01}))
		do := func(host string) {
			req, _ := http.NewRequest(http.MethodGet, "http://"+host+"/", nil)
			if resp, err := rt.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		// x.test spends its one hedge of the rate's burst, and recovers.
		do("x.test")
		for range 4 {
			do("x.test")
		}
		// a.test's outage takes it to the floor: kept, the table full.
		do("a.test")
		do("a.test")
		probeA, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
		if n := budget.Available(probeA); n != 0 {
			t.Fatalf("after the outage, Available(a) = %d, want 0", n)
		}
		time.Sleep(2 * time.Minute) // a.test idle, evictable
		do("x.test")                // its hedge: budget token taken, the rate refuses it
		if n := budget.Available(probeA); n != 0 {
			t.Errorf("a.test forgotten although no host took its place: Available = %d, want 0", n)
		}
		before := calls.Load()
		do("a.test")
		if n := calls.Load() - before; n != 1 {
			t.Errorf("a.test's next failure made %d calls, want 1 (still at the floor)", n)
		}
	})
}
