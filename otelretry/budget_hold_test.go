// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestHoldIsCheckedWhenTheRetryStarts: a Retry-After on one answer holds
// back the retries of every operation to its host until it passes, and a
// retry's pause counts from its attempt's end, so the hold is checked at
// that time, however long the hooks took: a Backoff or a Classifier that
// takes half a second does not move a retry due inside the hold past it.
func TestHoldIsCheckedWhenTheRetryStarts(t *testing.T) {
	for _, slow := range []string{"none", "backoff", "classifier"} {
		t.Run("slow "+slow, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var mu sync.Mutex
				var retriesOfA []time.Duration
				callsOfA := 0
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					h := http.Header{}
					if r.URL.Path == "/held" {
						h.Set("Retry-After", "1") // holds the host for a second
					} else {
						time.Sleep(20 * time.Millisecond)
						mu.Lock()
						if callsOfA++; callsOfA > 1 {
							retriesOfA = append(retriesOfA, time.Since(start))
						}
						mu.Unlock()
					}
					return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: h, Body: http.NoBody, Request: r}, nil
				})
				backoff := func(_ int, a otelretry.Answer) time.Duration {
					if a.Request.URL.Path != "/a" {
						return 0
					}
					if slow == "backoff" {
						time.Sleep(500 * time.Millisecond)
					}
					return 600 * time.Millisecond // due at 620 ms, inside the hold
				}
				classify := func(a otelretry.Answer) otelretry.Classification {
					if slow == "classifier" && a.Request.URL.Path == "/a" {
						time.Sleep(500 * time.Millisecond)
					}
					return otelretry.Classification{}
				}
				rt := otelretry.NewTransport(base, otelretry.WithBackoff(backoff), otelretry.WithClassifier(classify),
					otelretry.WithMaxAttempts(2), otelretry.WithDeadline(3*time.Second))
				getBoth(rt, "/a", "/held", 0)
				for _, at := range retriesOfA {
					if at < time.Second {
						t.Errorf("a retry of /a was sent at %v, inside the host's hold until 1s", at)
					}
				}
			})
		})
	}
}

// A hold that comes while another operation pauses before its retry holds
// that retry too: operation A fails at 0 and pauses a second; at 500 ms
// operation B's answer says Retry-After: 10. A's retry, due at 1 s, would
// meet the hold: it is not sent, and A ends budget_exhausted, reason
// pushback, as a retry decided inside the hold does. (It was sent: the
// hold was asked only when the retry was decided, and 14 retries of 100
// operations in flight reached a server that had asked for 30 s.)
func TestAHoldThatCameDuringAPauseHoldsTheRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &aAndB{answer: func(path string, _ int) (int, string) {
			if path == "/b" {
				return http.StatusServiceUnavailable, "10" // holds the host until 10.5 s
			}
			return http.StatusServiceUnavailable, ""
		}}
		rt := otelretry.NewTransport(base, quietOptions(otelretry.WithBackoff(otelretry.ConstantBackoff(time.Second)),
			otelretry.WithMaxAttempts(2), otelretry.WithDeadline(5*time.Second))...)
		errOfA := getBoth(rt, "/a", "/b", 500*time.Millisecond)
		if callsOfA := base.callsOfA(); len(callsOfA) != 1 {
			t.Errorf("/a was called at %v: its retry, due at 1s, went out inside the hold (Retry-After: 10 at 500ms)", callsOfA)
		}
		var e *otelretry.Error
		if !errors.As(errOfA, &e) || e.Outcome != attrs.DecisionBudgetExhausted.Outcome() || e.Reason != attrs.ReasonPushback || e.Attempts != 1 {
			t.Errorf("/a ended %v; want budget_exhausted, reason pushback, after 1 attempt", errOfA)
		}
	})
}

// The operation that received a Retry-After pauses that long, so its own
// retry is not held (docs/budget.md), whichever answer a fresh Budget
// heard first: A's 503 with Retry-After: 1 came at 0 ms, its Classifier
// took 200 ms, and B's plain 503 at 50 ms reached the Budget before it.
// The Budget counted from B's answer and read A's as coming then, so A's
// hold ran to 1.05 s and refused A's own retry at 1 s (pushback).
func TestTheOperationsOwnRetryAfterDoesNotHoldItsRetryWhateverTheBudgetHeardFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &aAndB{answer: func(path string, callOfA int) (int, string) {
			switch {
			case path == "/b":
				return http.StatusServiceUnavailable, ""
			case callOfA > 1:
				return http.StatusOK, ""
			}
			return http.StatusServiceUnavailable, "1"
		}}
		classify := func(a otelretry.Answer) otelretry.Classification {
			if a.Request.URL.Path == "/a" {
				time.Sleep(200 * time.Millisecond)
			}
			return otelretry.Classification{}
		}
		rt := otelretry.NewTransport(base, quietOptions(otelretry.WithBudget(&otelretry.Budget{Tokens: 100}), // tokens for B's retry too
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithClassifier(classify),
			otelretry.WithMaxAttempts(2), otelretry.WithDeadline(5*time.Second))...)
		errOfA := getBoth(rt, "/a", "/b", 50*time.Millisecond)
		if callsOfA := base.callsOfA(); errOfA != nil || len(callsOfA) != 2 || callsOfA[1] != time.Second {
			t.Errorf("/a was called at %v and ended %v; want its retry at 1s, after its own Retry-After: 1", callsOfA, errOfA)
		}
	})
}

// getBoth sends a GET of first at once and one of second after
// secondAfter, through rt, and returns first's error once both ended.
func getBoth(rt http.RoundTripper, first, second string, secondAfter time.Duration) (errOfFirst error) {
	var wg sync.WaitGroup
	for _, path := range []string{first, second} {
		wg.Go(func() {
			if path == second {
				time.Sleep(secondAfter)
			}
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test"+path, nil)
			resp, err := rt.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			if path == first {
				errOfFirst = err
			}
		})
	}
	wg.Wait()
	return errOfFirst
}

// aAndB is a base for api.test's /a and /b, in a bubble: it answers each
// call with answer's status and Retry-After ("" for none), told /a's call
// number, and notes when /a was called, since the base was first used.
type aAndB struct {
	answer func(path string, callOfA int) (status int, retryAfter string)
	mu     sync.Mutex
	start  time.Time
	callsA []time.Duration
}

func (b *aAndB) RoundTrip(r *http.Request) (*http.Response, error) {
	b.mu.Lock()
	if b.start.IsZero() {
		b.start = time.Now()
	}
	if r.URL.Path == "/a" {
		b.callsA = append(b.callsA, time.Since(b.start))
	}
	n := len(b.callsA)
	b.mu.Unlock()
	status, retryAfter := b.answer(r.URL.Path, n)
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
}

// callsOfA is when /a was called.
func (b *aAndB) callsOfA() []time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.callsA)
}

// docs/hedging.md: "a host on hold after a Retry-After ... gets no hedge".
// A's hedge is admitted at 10 ms and prepared until 60 ms (a token fetch);
// at 20 ms B's 429 says Retry-After: 2. The hedge went out at 60 ms, into
// the hold: a hold is asked again once a hedge's preparation is over, as
// once a retry's pause is.
func TestAHoldThatCameDuringAHedgesPreparationHoldsTheHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var callsOfA atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/b" {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"2"}}, Body: http.NoBody, Request: r}, nil
			}
			callsOfA.Add(1)
			select {
			case <-time.After(200 * time.Millisecond):
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		rt := otelretry.NewTransport(base, quietOptions(
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
			otelretry.WithPrepareAttempt(func(r *http.Request, attempt int) error {
				if attempt > 1 && r.URL.Path == "/a" {
					time.Sleep(50 * time.Millisecond) // a token fetch
				}
				return nil
			}))...)
		if err := getBoth(rt, "/a", "/b", 20*time.Millisecond); err != nil || callsOfA.Load() != 1 {
			t.Errorf("/a was called %d times, then %v; want once, its hedge held by B's Retry-After: 2 that came while it was prepared", callsOfA.Load(), err)
		}
	})
}
