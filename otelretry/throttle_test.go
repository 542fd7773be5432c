// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A dependency that only refuses (503) is throttled at the client: once
// its answers say so, most first attempts are refused before they start,
// never sent, and end throttled (reason throttle, an *Error matching
// ErrThrottled, no attempt made); every channel records each refusal (the
// operation span, retry.operations by outcome, retry.throttled). After a
// window with no traffic, when it accepts again, nothing is refused (with
// traffic going on, see TestARecoveredDependencyIsRefusedForUpToTwoWindows).
func TestAThrottledFirstAttemptIsNeverSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		throttle := &otelretry.Throttle{Window: 10 * time.Second}
		h := newHarness(t, []scripted.Step{{Delay: time.Millisecond, Status: 503}},
			otelretry.WithMaxAttempts(1), otelretry.WithThrottle(throttle))
		const ops = 100
		refused := 0
		for range ops {
			resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
			if err == nil {
				resp.Body.Close()
				continue
			}
			var oe *otelretry.Error
			if !errors.As(err, &oe) || !errors.Is(err, otelretry.ErrThrottled) || oe.Outcome != attrs.OutcomeThrottled ||
				oe.Reason != attrs.ReasonThrottle || oe.Attempts != 0 {
				t.Fatalf("err = %v, want throttled after no attempt", err)
			}
			refused++
		}
		if calls := len(h.base.Calls()); refused < ops/2 || calls != ops-refused {
			t.Errorf("%d of %d refused, %d calls: want most refused, and none of them sent", refused, ops, calls)
		}
		throttled := 0
		for _, op := range spantest.Operations(h.ended()) {
			if attrOf(op, attrs.OutcomeKey).AsString() == string(attrs.OutcomeThrottled) {
				throttled++
			}
		}
		rm := h.collect(t)
		if byOutcome, counted := sumBy(t, rm, "retry.operations", attrs.OutcomeKey), sumBy(t, rm, "retry.throttled", attrs.HTTPRequestMethodKey); throttled != refused ||
			byOutcome[string(attrs.OutcomeThrottled)] != int64(refused) || counted["GET"] != int64(refused) {
			t.Errorf("%d refused; operation spans throttled %d, retry.operations %v, retry.throttled %v", refused, throttled, byOutcome, counted)
		}

		// The dependency recovers (another Transport shares the throttle);
		// a window later nothing is refused.
		time.Sleep(10 * time.Second)
		ok := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithThrottle(throttle))
		for range 20 {
			if _, _, err := roundTrip(t, ok, get(t, t.Context(), "http://api.test/items")); err != nil {
				t.Fatalf("a healthy dependency throttled: %v", err)
			}
		}
	})
}

// A retry the throttle refuses ends the operation throttled too, its last
// answer returned: the attempt whose retry was refused records decision
// throttled, reason throttle.
func TestAThrottledRetryEndsTheOperation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Delay: time.Millisecond, Status: 503}}, otelretry.WithoutBudget(),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithThrottle(&otelretry.Throttle{}))
		retriesRefused := 0
		for range 100 {
			h.spans.Reset()
			status, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/items"))
			if err != nil {
				continue // the first attempt was refused
			}
			if status != 503 {
				t.Fatalf("status %d, want the last 503", status)
			}
			for _, e := range h.events(t) {
				if e.Decision == string(attrs.DecisionThrottled) {
					retriesRefused++
					if op := h.operation(t); attrOf(op, attrs.OutcomeKey).AsString() != string(attrs.OutcomeThrottled) {
						t.Errorf("a retry refused, the operation ended %s", attrOf(op, attrs.OutcomeKey).AsString())
					}
				}
			}
		}
		if retriesRefused == 0 {
			t.Error("no retry refused by the throttle in an outage of 100 operations")
		}
	})
}

// The throttle counts per dependency: the budget's key, else the host.
// Without a budget, or with a Budget.Key that gives "", a host that
// refuses every request throttles none of another host's: before, every
// host of such a Transport shared one window, and 87 to 91 of 100
// requests to a healthy host were refused after another host's outage.
func TestOneHostsOutageThrottlesNoOtherHost(t *testing.T) {
	for name, opt := range map[string]otelretry.Option{
		"the default budget":  nil,
		"WithoutBudget":       otelretry.WithoutBudget(),
		`a Key that gives ""`: otelretry.WithBudget(&otelretry.Budget{Key: func(*http.Request) string { return "" }}),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sent := map[string]int{}
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					sent[r.URL.Host]++
					status := http.StatusOK
					if r.URL.Host == "down.test" {
						status = http.StatusServiceUnavailable
					}
					return &http.Response{StatusCode: status, Body: http.NoBody, Request: r}, nil
				})
				tr := otelretry.NewTransport(base, otelretry.WithMaxAttempts(1), otelretry.WithThrottle(&otelretry.Throttle{}), opt)
				send := func(url string) error {
					resp, err := tr.RoundTrip(get(t, t.Context(), url))
					if err == nil {
						resp.Body.Close()
					}
					return err
				}
				for range 200 {
					_ = send("http://down.test/items")
				}
				if sent["down.test"] > 100 {
					t.Fatalf("%d of 200 requests to a host that refuses every one sent: the throttle did not act", sent["down.test"])
				}
				refused := 0
				for range 100 {
					if err := send("http://up.test/items"); err != nil {
						refused++
					}
				}
				if refused != 0 || sent["up.test"] != 100 {
					t.Errorf("%d of 100 requests to a healthy host refused (%d sent) after another host's outage", refused, sent["up.test"])
				}
			})
		})
	}
}

// The hedge rate lets at most MaxShare of the operations sent hedge, past
// the burst (docs/hedging.md): an operation the throttle refused sends
// nothing, and earns its dependency nothing. In a brownout of slow 503s
// the throttle refuses most operations; when each still earned its share,
// the few it let through hedged about twice MaxShare of them (45 hedges
// for 467 operations sent, where 28 are allowed).
func TestAnOperationTheThrottleRefusedEarnsNoHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls, hedges, answered atomic.Int64
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			if r.Header.Get("X-Envoy-Attempt-Count") != "1" {
				hedges.Add(1)
			}
			status := http.StatusServiceUnavailable // 4 in 5, every answer slow
			if answered.Add(1)%5 == 0 {
				status = http.StatusOK
			}
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
			return &http.Response{StatusCode: status, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
		})
		tr := otelretry.NewTransport(base, quietOptions(
			otelretry.WithThrottle(&otelretry.Throttle{Window: 5 * time.Second}),
			otelretry.WithBudget(&otelretry.Budget{Tokens: 1000, TokenRatio: 1}), // the hedge rate alone bounds the hedges
			otelretry.WithRetryableStatuses(http.StatusTeapot),                   // first attempts and hedges only
			otelretry.WithAttemptHeader("X-Envoy-Attempt-Count"),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond}))...) // MaxShare 0.05, burst 5
		const ops = 4000
		var throttled atomic.Int64
		var wg sync.WaitGroup
		for range ops / 20 {
			for range 20 {
				wg.Go(func() {
					resp, err := tr.RoundTrip(get(t, context.Background(), "http://api.test/items"))
					if errors.Is(err, otelretry.ErrThrottled) {
						throttled.Add(1)
					}
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				})
			}
			time.Sleep(50 * time.Millisecond)
		}
		wg.Wait()
		sent := calls.Load() - hedges.Load()
		if throttled.Load() < ops/2 {
			t.Fatalf("the throttle refused %d of %d operations; the test wants a brownout it sheds", throttled.Load(), ops)
		}
		if bound := 5 + 0.05*float64(sent); float64(hedges.Load()) > bound {
			t.Errorf("%d hedges for %d operations sent (%d refused by the throttle): want at most burst + MaxShare × operations sent = %.0f",
				hedges.Load(), sent, throttled.Load(), bound)
		}
	})
}

// retry.throttled counts every request the throttle refused before it
// started (metrics/doc.go), a resend a state check asked for included: a
// write whose attempt timed out is found not applied, and the throttle
// refuses its resend; the operation ends throttled after one attempt. Such
// a resend went uncounted, and the rejection rate read from the metrics
// fell short.
func TestAResendTheThrottleRefusedAfterAStateCheckIsCounted(t *testing.T) {
	// The throttle's draws are random: a run may refuse every first
	// attempt before any resend is refused (about 1 in 300 of 200
	// operations), so the scenario is tried again, on a fresh Transport.
	for range 5 {
		if resendRefusedAfterAStateCheckIsCounted(t) {
			return
		}
	}
	t.Fatal("no resend after a state check was refused in 5 runs: not the scenario")
}

// resendRefusedAfterAStateCheckIsCounted runs 200 writes whose state
// check asks for a resend under the throttle, checks that every operation
// that ended throttled is counted, and reports whether a resend was among
// them (the scenario).
func resendRefusedAfterAStateCheckIsCounted(t *testing.T) (happened bool) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}}, // each attempt times out: a write of unknown outcome
			otelretry.WithoutBudget(), otelretry.WithAttemptTimeout(10*time.Millisecond),
			otelretry.WithThrottle(&otelretry.Throttle{MaxRejection: 1}), // every attempt fails: K has no part
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		throttled, afterAnAttempt := 0, 0
		for range 200 {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/orders", strings.NewReader("x"))
			_, err := h.transprt.RoundTrip(req)
			var e *otelretry.Error
			if errors.As(err, &e) && e.Outcome == attrs.OutcomeThrottled {
				throttled++
				if e.Attempts > 0 {
					afterAnAttempt++
				}
			}
		}
		if counted := sumBy(t, h.collect(t), "retry.throttled", attrs.HTTPRequestMethodKey)["POST"]; counted != int64(throttled) {
			t.Errorf("retry.throttled = %d for %d operations that ended throttled, %d of them on a resend after a state check", counted, throttled, afterAnAttempt)
		}
		happened = afterAnAttempt > 0
	})
	return happened
}

// An attempt counts once it ends, as gRPC's adaptive throttler counts
// it: a burst to a fresh dependency is not refused for answers not back
// yet, and a dependency that holds what it is sent (it "times out") is
// throttled once the attempts it held time out: a read's at the attempt
// timeout (10 s by default), a write's, which the attempt timeout does not
// cut once it is sent, at the deadline (30 s by default); a write a state
// check resolves at the attempt timeout, as it ends, not once its check
// has run (WithStateCheckDelay after). docs/budget.md gives them.
func TestAHeldAttemptCountsOnceItTimesOut(t *testing.T) {
	unknown := func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
		return otelretry.StateResult{State: attrs.StateUnknown}, nil
	}
	for _, tc := range []struct {
		name, method string
		cutAt        time.Duration
		opts         []otelretry.Option
	}{
		{"GET", http.MethodGet, 10 * time.Second, nil},
		{"POST", http.MethodPost, 30 * time.Second, nil},
		{"POST a state check resolves", http.MethodPost, 10 * time.Second, []otelretry.Option{otelretry.WithDeadline(time.Minute),
			otelretry.WithStateCheck(unknown)}},
		{"POST a state check resolves 20s after", http.MethodPost, 10 * time.Second, []otelretry.Option{otelretry.WithDeadline(time.Minute),
			otelretry.WithStateCheck(unknown), otelretry.WithStateCheckDelay(20 * time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					<-r.Context().Done() // holds it
					return nil, r.Context().Err()
				})
				tr := otelretry.NewTransport(base, quietOptions(append([]otelretry.Option{otelretry.WithMaxAttempts(1),
					otelretry.WithThrottle(&otelretry.Throttle{Window: time.Minute})}, tc.opts...)...)...)
				var refused atomic.Int64
				var wg sync.WaitGroup
				wave := func() int64 {
					before := refused.Load()
					for range 32 {
						wg.Go(func() {
							req, _ := http.NewRequestWithContext(t.Context(), tc.method, "http://hung.test/items", nil)
							if _, err := tr.RoundTrip(req); errors.Is(err, otelretry.ErrThrottled) {
								refused.Add(1)
							}
						})
					}
					time.Sleep(time.Second)
					synctest.Wait()
					return refused.Load() - before
				}
				if n := wave(); n != 0 {
					t.Errorf("32 requests at once to a fresh dependency: %d refused, want 0", n)
				}
				if n := wave(); n != 0 {
					t.Errorf("32 more while the first are held, none ended: %d refused, want 0 (counted once they end)", n)
				}
				time.Sleep(tc.cutAt) // every attempt held was cut
				synctest.Wait()
				// 64 requests, none accepted: each refused with p = 0.9;
				// fewer than 16 of 32 is a chance below one in a billion.
				if n := wave(); n < 16 {
					t.Errorf("64 attempts cut at %v, none accepted: %d of the next 32 refused, want about 29", tc.cutAt, n)
				}
				wg.Wait()
			})
		})
	}
}
