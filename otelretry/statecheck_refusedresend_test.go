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
