// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"math"
	"net/http"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The decision recorded is the one carried out: a slow Backoff is
// the last hook before the decision, so the decision is taken on the
// clock read after it.
func TestSlowBackoffDecidesOnTheTimeLeftAfterIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := otelretry.Backoff(func(int, otelretry.Answer) time.Duration {
			time.Sleep(95 * time.Millisecond)
			return 10 * time.Millisecond
		})
		h := newHarness(t, []scripted.Step{{Delay: 10 * time.Millisecond, Status: 503}, {Status: 200}},
			otelretry.WithDeadline(100*time.Millisecond), otelretry.WithBackoff(slow))
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
		if err == nil {
			resp.Body.Close()
		}
		attempts := h.attempts()
		last := attempts[len(attempts)-1]
		outcome := attrOf(h.operation(t), attrs.OutcomeKey).AsString()
		if got := attrOf(last, attrs.DecisionKey).AsString(); len(attempts) == 1 && got != outcome {
			t.Errorf("the last attempt recorded %s, but the operation ended %s after %d attempt(s)", got, outcome, len(attempts))
		}
	})
}

// The Backoff is asked for a pause only while one could fit: an answer
// judged after the operation's deadline (here a slow Classifier) ends
// deadline_exceeded without asking it, so a Backoff's own call is never
// made with the operation's context already ended.
func TestBackoffIsNotAskedWithNoTimeLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		asked := 0
		backoff := otelretry.Backoff(func(int, otelretry.Answer) time.Duration { asked++; return 0 })
		slow := otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification {
			time.Sleep(2 * time.Second)
			return otelretry.Classification{}
		})
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
			otelretry.WithDeadline(time.Second), otelretry.WithBackoff(backoff), slow)
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
		if err == nil {
			resp.Body.Close()
		}
		if asked != 0 {
			t.Errorf("the Backoff was asked %d time(s) after the deadline passed", asked)
		}
		if got := attrOf(h.operation(t), attrs.OutcomeKey).AsString(); got != string(attrs.DecisionDeadlineExceeded) {
			t.Errorf("the operation ended %s, want %s", got, attrs.DecisionDeadlineExceeded)
		}
	})
}

// Work that runs after a retry was decided (the next attempt's
// PrepareAttemptFunc) can still take the time the retry needed. The retry then
// does not happen, and the operation says so: the attempt that was not
// made is recorded with a reason of its own.
func TestRetryPreventedAfterTheDecisionIsRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Delay: 10 * time.Millisecond, Status: 503}, {Status: 200}},
			otelretry.WithDeadline(100*time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				if n == 2 {
					time.Sleep(200 * time.Millisecond)
				}
				return nil
			}))
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
		if err == nil {
			resp.Body.Close()
		}
		var e *otelretry.Error
		if errors.As(err, &e) && e.Outcome != attrs.OutcomeDeadlineExceeded {
			t.Errorf("outcome = %s, want deadline_exceeded", e.Outcome)
		}
		op := h.operation(t)
		var recorded bool
		for _, ev := range op.Events() {
			if ev.Name != "attempt_abandoned" {
				continue
			}
			recorded = true
			if got, _ := attrValue(ev.Attributes, attrs.AttemptKey); got != "2" {
				t.Errorf("the abandoned attempt is number %s, want 2", got)
			}
			if got, _ := attrValue(ev.Attributes, attrs.ReasonKey); got != "overrun" {
				t.Errorf("reason = %s, want overrun", got)
			}
		}
		if !recorded {
			t.Errorf("attempt 1 recorded retry, no attempt 2 was made, and nothing says why (events: %v)", op.Events())
		}
		if got := attrOf(op, attrs.AbandonedAttemptKey).AsInt64(); got != 2 {
			t.Errorf("retry.abandoned_attempt = %d, want 2", got)
		}
	})
}

// The clock is read again after the Backoff, the last hook before the
// decision: a Backoff that blocks past the deadline, or that returns a
// huge, a negative or a different pause on every call, never carries a
// retry past the deadline, and the pause recorded is the one the decision
// used.
func TestBackoffThatBlocksOrLiesNeverCarriesARetryPastTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}},
			otelretry.WithDeadline(time.Second),
			otelretry.WithBackoff(otelretry.Backoff(func(int, otelretry.Answer) time.Duration {
				time.Sleep(2 * time.Second) // ignores everything
				return time.Millisecond
			})))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := len(h.base.Calls()); n != 1 {
			t.Errorf("blocking Backoff: %d calls, want 1", n)
		}
		if d := attrOf(h.attempts()[0], attrs.DecisionKey).AsString(); d != "deadline_exceeded" {
			t.Errorf("blocking Backoff: decision %q, want deadline_exceeded", d)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		var calls int
		h := newHarness(t, []scripted.Step{{Status: 503}},
			otelretry.WithDeadline(time.Second), otelretry.WithMaxAttempts(6),
			otelretry.WithBackoff(otelretry.Backoff(func(int, otelretry.Answer) time.Duration {
				calls++
				return []time.Duration{-time.Hour, math.MaxInt64, 100 * time.Millisecond, math.MinInt64, 300 * time.Millisecond}[(calls-1)%5]
			})))
		start := time.Now()
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := len(h.base.Calls()); n != 2 {
			t.Errorf("lying Backoff: %d calls, want 2 (the MaxInt64 pause ends it)", n)
		}
		if calls != 2 {
			t.Errorf("Backoff asked %d times, want once per retry decision (2)", calls)
		}
		if d := time.Since(start); d > 5*time.Millisecond {
			t.Errorf("lying Backoff: took %v", d)
		}
		evs := h.events(t)
		if len(evs) != 2 || evs[0].BackoffMs != 0 || evs[1].Decision != "deadline_exceeded" {
			t.Errorf("events %+v", evs)
		}
	})
}

// The Backoff is asked for a pause only after an attempt whose result may
// be retried, with that retry's number; a success or a final answer never
// asks it.
func TestBackoffIsAskedOnlyForRetryableResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked []int
		backoff := otelretry.Backoff(func(n int, _ otelretry.Answer) time.Duration { asked = append(asked, n); return time.Millisecond })
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 503}, {Status: 200}, {Status: 404}},
			otelretry.WithBackoff(backoff), otelretry.WithMaxAttempts(5))
		for range 2 { // 503, 503, 200; then 404
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if !reflect.DeepEqual(asked, []int{1, 2}) {
			t.Fatalf("Backoff asked for %v, want [1 2]", asked)
		}
		decisions := map[string]int{}
		for _, e := range h.events(t) {
			decisions[e.Decision]++
			if (e.Decision == "retry") != (e.BackoffMs == 1) {
				t.Errorf("attempt %s: decision %s with backoff %d ms", e.RequestID, e.Decision, e.BackoffMs)
			}
		}
		if !reflect.DeepEqual(decisions, map[string]int{"retry": 2, "return": 1, "stop": 1}) {
			t.Fatalf("decisions = %v", decisions)
		}
	})
}

// The bound each constructor names bounds every pause, whatever order its
// arguments come in: ExponentialBackoff's max, DecorrelatedJitter's cap,
// even below the starting value.
func TestBackoffCapBoundsEveryPause(t *testing.T) {
	for _, tc := range []struct {
		name  string
		b     otelretry.Backoff
		bound time.Duration
	}{
		{"ExponentialBackoff(1s, 100ms)", otelretry.ExponentialBackoff(time.Second, 100*time.Millisecond), 100 * time.Millisecond},
		{"ExponentialBackoff(1s, 0)", otelretry.ExponentialBackoff(time.Second, 0), 0},
		{"DecorrelatedJitter(1s, 100ms)", otelretry.DecorrelatedJitter(time.Second, 100*time.Millisecond), 100 * time.Millisecond},
		{"DecorrelatedJitter(1s, 0)", otelretry.DecorrelatedJitter(time.Second, 0), 0},
	} {
		var worst time.Duration
		prev := time.Duration(0)
		for n := 1; n <= 300; n++ {
			d := tc.b(n%5+1, otelretry.Answer{PreviousPause: prev})
			worst, prev = max(worst, d), d
		}
		if worst > tc.bound {
			t.Errorf("%s: a pause of %v, above its bound %v", tc.name, worst, tc.bound)
		}
	}
}

// At the edges of the duration range: DecorrelatedJitter with no base and
// no cap after a pause above a third of the range drew from a span one
// past the largest int64, and panicked.
func TestDecorrelatedJitterAtTheEdgesOfTheRange(t *testing.T) {
	b := otelretry.DecorrelatedJitter(0, math.MaxInt64)
	for _, prev := range []time.Duration{math.MaxInt64 / 2, math.MaxInt64 - 1, math.MaxInt64} {
		if d := b(1, otelretry.Answer{PreviousPause: prev}); d < 0 {
			t.Errorf("after a pause of %v: %v", prev, d)
		}
	}
}
