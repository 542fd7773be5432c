// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// WithStateCheck's godoc: RoundTrip waits for the hook to return, also
// after the caller canceled (its ctx then ends): a hook that ignores ctx
// holds the caller until it returns. The write's outcome stays unknown,
// and the caller's cancel is the operation's end.
func TestRoundTripWaitsForAStateCheckThatIgnoresItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done() // the write's answer never comes
			return nil, r.Context().Err()
		})
		entered := make(chan struct{})
		var returned atomic.Bool
		tr := otelretry.NewTransport(base, otelretry.WithoutBudget(), otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithDeadline(time.Minute), otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				close(entered)
				time.Sleep(30 * time.Second) // ignores its context
				returned.Store(true)
				return otelretry.StateResult{State: attrs.StateUnknown}, nil
			}))
		var res otelretry.Results
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { <-entered; cancel() }()
		_, err := tr.RoundTrip(post(t, otelretry.WithResults(ctx, &res), "http://api.test/orders", "o"))
		if !returned.Load() {
			t.Error("RoundTrip returned before the state check did")
		}
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v; want ErrOutcomeUnknown and the caller's cancel", err)
		}
		if last, _ := res.Last(); last.Outcome != attrs.OutcomeCanceled || last.Reason != attrs.ReasonCaller || !last.OutcomeUnknown {
			t.Errorf("result %+v; want canceled, caller, outcome unknown", last)
		}
	})
}

// WithStateCheck's godoc and docs/decisions.md: a keyed write is resent
// first and looked up only when its resends ran out; one whose resend the
// budget refused keeps that end (budget_exhausted), its outcome unknown,
// and is not looked up: the dependency is overloaded.
func TestAKeyedWriteWhoseResendTheBudgetRefusedIsNotLookedUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/orders" {
				<-r.Context().Done() // the write's answer never comes
				return nil, r.Context().Err()
			}
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		var checks atomic.Int32
		tr := otelretry.NewTransport(base, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				checks.Add(1)
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		for range 2 { // an outage drains the host's budget
			if resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/items")); err == nil {
				resp.Body.Close()
			}
		}
		_, err := tr.RoundTrip(post(t, t.Context(), "http://api.test/orders", "o"))
		var oe *otelretry.Error
		if !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeBudgetExhausted || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Errorf("err = %v; want budget_exhausted, the write's outcome unknown", err)
		}
		if n := checks.Load(); n != 0 {
			t.Errorf("the state check was asked %d times, want 0", n)
		}
	})
}
