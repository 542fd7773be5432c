// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// concurrently runs ops GETs of h, inFlight at a time (waves of inFlight
// operations started together), and returns how many returned a 2xx.
func concurrently(t *testing.T, h *harness, ops, inFlight int) int {
	t.Helper()
	var (
		mu        sync.Mutex
		successes int
	)
	for wave := 0; wave < ops; wave += inFlight {
		var wg sync.WaitGroup
		for range min(inFlight, ops-wave) {
			wg.Go(func() {
				status, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items"))
				if err == nil && status < 300 {
					mu.Lock()
					successes++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	return successes
}

// slowPreparation is a PrepareAttemptFunc that takes d for every attempt after
// the first (a token fetch, a signer), so that an extra request is
// admitted long before it could be charged on its way out.
func slowPreparation(d time.Duration) otelretry.Option {
	return otelretry.WithPrepareAttempt(func(_ *http.Request, attempt int) error {
		if attempt > 1 {
			time.Sleep(d)
		}
		return nil
	})
}

// Every request beyond an operation's first passes one admission point,
// which takes what it costs before anything about the request starts. In
// an outage (every answer a 503, after 200 ms), a fresh host's hedges and
// retries together are no more than its retries alone, two at the
// defaults, however many operations are in flight together and however
// slow the hedge's preparation.
func TestAnOutageGetsNoMoreExtraRequestsWithHedgesThanWithRetriesAlone(t *testing.T) {
	for _, inFlight := range []int{8, 16, 64} {
		for _, prepare := range []time.Duration{0, 40 * time.Millisecond} {
			for _, hedging := range []bool{false, true} {
				t.Run(fmt.Sprintf("inFlight=%d/prepare=%v/hedging=%v", inFlight, prepare, hedging), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						opts := []otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(10 * time.Millisecond))}
						if hedging {
							opts = append(opts, otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}))
						}
						if prepare > 0 {
							opts = append(opts, slowPreparation(prepare))
						}
						h := newHarness(t, []scripted.Step{{Delay: 200 * time.Millisecond, Status: 503}}, opts...)
						concurrently(t, h, inFlight, inFlight)
						if extra := len(h.base.Calls()) - inFlight; extra > 2 || (!hedging && extra != 2) {
							t.Errorf("%d requests beyond the %d operations' first, want 2: a fresh host's retries alone", extra, inFlight)
						}
					})
				})
			}
		}
	}
}

// In a brownout, where every answer succeeds late, the hedges sent are at
// most the smaller of the two bounds that admit them: the dependency's
// hedge rate (its burst, plus MaxShare for every operation) and the retry
// budget (the tokens a fresh host holds above half, plus
// TokenRatio for every success it counted), whatever the number of
// operations in flight together and however slow the preparation.
func TestABrownoutGetsNoMoreHedgesThanTheRateAndTheBudgetAdmit(t *testing.T) {
	const waves = 10
	for _, inFlight := range []int{8, 16, 64} {
		for _, prepare := range []time.Duration{0, 20 * time.Millisecond} {
			for _, rate := range []float64{1, 0.05} {
				t.Run(fmt.Sprintf("inFlight=%d/prepare=%v/MaxShare=%v", inFlight, prepare, rate), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						opts := []otelretry.Option{otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: rate})}
						if prepare > 0 {
							opts = append(opts, slowPreparation(prepare))
						}
						h := newHarness(t, []scripted.Step{{Delay: 80 * time.Millisecond, Status: 200}}, opts...)
						ops := waves * inFlight
						successes := concurrently(t, h, ops, inFlight)
						rateBound := max(1, 100*rate) + rate*float64(ops)
						budgetBound := 6.0/2 + 0.5*float64(successes) // the default budget: 6 tokens, 0.5 back per success
						if hedges := len(h.base.Calls()) - ops; float64(hedges) > min(rateBound, budgetBound) {
							t.Errorf("%d hedges for %d operations (%d succeeded), want at most %.1f (rate) and %.1f (budget)",
								hedges, ops, successes, rateBound, budgetBound)
						}
					})
				})
			}
		}
	}
}

// A failed answer costs the retry budget one failure whenever any rule
// makes it retryable: a listed status, and as much a service's "true"
// verdict, for a read or for a write the user let the verdict retry
// (WithShouldRetryWrites). Ten operations into such an outage make the
// seed timeline's three calls for the first, then the host's budget is
// spent: 12 requests, as a plain 503 outage makes.
func TestARetryOnAServersVerdictCostsTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		step   scripted.Step
		opts   []otelretry.Option
	}{
		{"503", http.MethodGet, scripted.Step{Status: 503}, nil},
		{"500, X-Should-Retry: true", http.MethodGet,
			scripted.Step{Status: 500, Header: http.Header{"X-Should-Retry": {"true"}}}, nil},
		{"409, Stripe-Should-Retry: true, WithShouldRetryWrites", http.MethodPost,
			scripted.Step{Status: 409, Header: http.Header{"Stripe-Should-Retry": {"true"}}},
			[]otelretry.Option{otelretry.WithShouldRetryWrites()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{tc.step}, tc.opts...)
				for range 10 {
					req := get(t, t.Context(), "http://api.test/items")
					if tc.method == http.MethodPost {
						req = post(t, t.Context(), "http://api.test/items", "{}")
					}
					if _, _, err := roundTrip(t, h, req); err != nil {
						t.Fatal(err)
					}
				}
				if n := len(h.base.Calls()); n != 12 {
					t.Errorf("%d requests for 10 operations, want 12: the first's three, then one each", n)
				}
			})
		})
	}
}

// A hedge is a retry sent early: its token pays for the failure it
// retries, and a failure heard while it is in flight costs nothing more.
// The retry after the hedge's own failure is charged that failure, as any
// retry is. Here k operations are hedged on the tokens (6, then 20); their
// first attempts fail while the hedges are in flight; one other operation
// succeeds; then the hedges fail. Hedges and retries together stay within
// the tokens above half plus 0.5 for the success; before, each hedge's
// failure was retried without a charge (4 for 6 tokens, 18 for 20).
func TestARetryAfterAHedgesFailureIsCharged(t *testing.T) {
	for _, tokens := range []int{6, 20} {
		t.Run(fmt.Sprintf("Tokens=%d", tokens), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var extra, successes atomic.Int64
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					status, d := http.StatusServiceUnavailable, 5*time.Millisecond
					switch n := r.Header.Get("X-Attempt"); {
					case r.URL.Path == "/ok":
						status = http.StatusOK
						successes.Add(1)
					case n == "1":
						d = 50 * time.Millisecond
					case n == "2": // the hedge
						d = 100 * time.Millisecond
					}
					if r.Header.Get("X-Attempt") != "1" {
						extra.Add(1)
					}
					select {
					case <-time.After(d):
					case <-r.Context().Done():
						return nil, r.Context().Err()
					}
					return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				rt := otelretry.NewTransport(base, otelretry.WithBudget(&otelretry.Budget{Tokens: tokens}),
					otelretry.WithAttemptHeader("X-Attempt"), otelretry.WithMaxAttempts(3),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
					otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
				do := func(path string) {
					req, _ := http.NewRequest(http.MethodGet, "http://api.test"+path, nil)
					if resp, err := rt.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
				}
				var wg sync.WaitGroup
				for range 16 {
					wg.Go(func() { do("/slow") })
				}
				time.Sleep(70 * time.Millisecond) // the first attempts failed at 50 ms, the hedges are in flight
				do("/ok")
				wg.Wait()
				bound := float64(tokens)/2 + 0.5*float64(successes.Load())
				if float64(extra.Load()) > bound {
					t.Errorf("%d hedges and retries with %d success, want at most %.1f (the tokens above half plus 0.5 for the success)",
						extra.Load(), successes.Load(), bound)
				}
			})
		})
	}
}
