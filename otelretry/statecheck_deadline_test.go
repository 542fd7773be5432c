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

// docs/decisions.md, row 33: the operation's own deadline passing during
// the state check is not the caller giving up; the check's answer
// decides: unknown ends check_state (row 34), the write unknown;
// not_applied asks a resend (row 36) that no time is left for, and ends
// deadline_exceeded with the write known not applied.
func TestTheOperationsDeadlineDuringTheCheckLeavesItToTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		found   attrs.StateCheckResult
		outcome attrs.Outcome
		reason  attrs.Reason
		unknown bool
	}{
		{attrs.StateUnknown, attrs.OutcomeCheckState, attrs.ReasonStateUnknown, true},
		{attrs.StateNotApplied, attrs.OutcomeDeadlineExceeded, attrs.ReasonDeadline, false},
	} {
		t.Run(string(tc.found), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int64
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if calls.Add(1) == 1 {
						<-r.Context().Done() // cut by the attempt timeout: outcome unknown
						return nil, r.Context().Err()
					}
					return &http.Response{StatusCode: http.StatusCreated, Body: http.NoBody, Request: r}, nil
				})
				tr := otelretry.NewTransport(base, otelretry.WithoutBudget(),
					otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(2*time.Second),
					otelretry.WithStateCheck(func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
						<-ctx.Done() // the operation's deadline, not the caller's
						return otelretry.StateResult{State: tc.found}, nil
					}))
				var res otelretry.Results
				ctx := otelretry.WithResults(context.Background(), &res)
				_, err := tr.RoundTrip(post(t, ctx, "http://api.test/orders", "x"))
				last, _ := res.Last()
				if last.Outcome != tc.outcome || last.Reason != tc.reason || last.OutcomeUnknown != tc.unknown ||
					errors.Is(err, otelretry.ErrOutcomeUnknown) != tc.unknown {
					t.Errorf("%s, %s, unknown %v (err %v); want %s, %s, unknown %v",
						last.Outcome, last.Reason, last.OutcomeUnknown, err, tc.outcome, tc.reason, tc.unknown)
				}
				if n := calls.Load(); n != 1 {
					t.Errorf("%d calls; want 1 (no resend)", n)
				}
			})
		})
	}
}
