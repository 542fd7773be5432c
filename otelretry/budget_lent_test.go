// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// TestAGivenBackHedgeMintsNoToken: a hedge takes its token when it is
// admitted; failures of other operations then take the host to the floor,
// where they could not charge the token the hedge holds; the hedge is not
// sent (its caller gives up while it is prepared) and gives its token
// back. After an outage without a success the host is where the floor
// left it: the next failure is not retried, as without the hedges.
func TestAGivenBackHedgeMintsNoToken(t *testing.T) {
	for _, hedged := range []bool{false, true} {
		name := "no hedges"
		if hedged {
			name = "two hedges given back"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					calls.Add(1)
					d := 20 * time.Millisecond
					if r.URL.Path == "/slow" {
						d = time.Second
					}
					select {
					case <-time.After(d):
					case <-r.Context().Done():
						return nil, r.Context().Err()
					}
					return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				budget := &otelretry.Budget{}
				rt := otelretry.NewTransport(base, otelretry.WithBudget(budget),
					otelretry.WithBackoff(otelretry.ConstantBackoff(5*time.Millisecond)),
					otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
					slowPreparation(100*time.Millisecond))
				do := func(ctx context.Context, path string) {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test"+path, nil)
					if resp, err := rt.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
				}
				unhedged := otelretry.WithIntent(context.Background(), otelretry.Intent{Hedging: &otelretry.Hedging{}})
				var wg sync.WaitGroup
				for range 2 {
					if !hedged {
						break
					}
					// Hedged at 10 ms, prepared until 110 ms; the caller gives
					// up at 30 ms, so the hedge is never sent.
					ctx, cancel := context.WithCancel(context.Background())
					time.AfterFunc(30*time.Millisecond, cancel)
					wg.Go(func() { do(ctx, "/slow") })
				}
				for range 4 { // the outage's failures, at 20 ms
					wg.Go(func() { do(unhedged, "/fast") })
				}
				wg.Wait()
				probe, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				if n := budget.Available(probe); n != 0 {
					t.Errorf("after the outage, Available = %d, want 0 until successes come", n)
				}
				time.Sleep(10 * time.Second) // the outage goes on
				before := calls.Load()
				do(unhedged, "/fast")
				if n := calls.Load() - before; n != 1 {
					t.Errorf("a failure after an outage without a success made %d requests, want 1: not retried", n)
				}
			})
		})
	}
}

// TestAHedgeNotSentHoldsNoTokenWhenItsOperationRetries: the race's only
// attempt fails (a 503 after 150 ms) while its hedge, admitted at 20 ms,
// is still being prepared. The hedge is never sent, and the operation's
// retry is decided as if it had never been admitted: a fresh host of 4
// tokens retries once (4 -> 3, above half). Before, the hedge's token was
// given back only once the race's loop returned, after the retry had been
// refused on it (budget_exhausted after one request).
func TestAHedgeNotSentHoldsNoTokenWhenItsOperationRetries(t *testing.T) {
	for _, hedged := range []bool{false, true} {
		name := "no hedge"
		if hedged {
			name = "a hedge still preparing"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					status := http.StatusOK
					if calls.Add(1) == 1 {
						time.Sleep(150 * time.Millisecond)
						status = http.StatusServiceUnavailable
					}
					return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				var prepared atomic.Bool
				opts := []otelretry.Option{
					otelretry.WithBudget(&otelretry.Budget{Tokens: 4}),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
					otelretry.WithPrepareAttempt(func(_ *http.Request, attempt int) error {
						if attempt == 2 && prepared.CompareAndSwap(false, true) {
							time.Sleep(time.Second) // the hedge's: it outlasts the race
						}
						return nil
					}),
				}
				if hedged {
					opts = append(opts, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}))
				}
				rt := otelretry.NewTransport(base, opts...)
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
					t.Errorf("status %d after %d requests, want 200 after 2: the retry was refused on the token of a hedge never sent",
						resp.StatusCode, calls.Load())
				}
				time.Sleep(time.Second) // the hedge's preparation ends
			})
		})
	}
}
