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

// budget.go's godoc: a hedge "is a retry sent early: a failure heard
// while it (or the attempt it hedged) is still in flight costs nothing,
// that attempt being its retry, paid for ... So each request beyond an
// operation's first costs one token". An operation whose first attempt
// fails while its hedge is in flight, and whose hedge then succeeds,
// made one request beyond its first: it costs the host one token, as an
// operation that fails once and succeeds on its retry does.
func TestAFailureHeardWhileItsHedgeIsInFlightCostsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			status, d := http.StatusOK, 100*time.Millisecond // the hedge
			if r.Header.Get("X-Attempt") == "1" {
				status, d = http.StatusServiceUnavailable, 50*time.Millisecond
			}
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
			return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		budget := &otelretry.Budget{} // 6 tokens, TokenRatio 0.5
		rt := otelretry.NewTransport(base, otelretry.WithBudget(budget),
			otelretry.WithAttemptHeader("X-Attempt"), otelretry.WithMaxAttempts(3),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
			t.Fatalf("status %d after %d calls, want 200 after 2 (the first attempt and its hedge)", resp.StatusCode, calls.Load())
		}
		// One token for the hedge, 0.5 back for its success: 5.5 tokens,
		// two retries in a row. Charged the failure too, the host holds
		// 4.5: one.
		if got := budget.Available(req); got != 2 {
			t.Errorf("Available = %d after a hedge that won, want 2 (6 tokens - 1 for the hedge + 0.5): the failure its hedge retried was charged too", got)
		}
	})
}
