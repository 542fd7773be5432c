// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The decision recorded is the one carried out: a slow AnswerBackoff is
// the last hook before the decision, so the decision is taken on the
// clock read after it.
func TestSlowBackoffDecidesOnTheTimeLeftAfterIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := otelretry.AnswerBackoffFunc(func(int, otelretry.Answer) time.Duration {
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

// Work that runs after a retry was decided (the next attempt's
// PrepareFunc) can still take the time the retry needed. The retry then
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
