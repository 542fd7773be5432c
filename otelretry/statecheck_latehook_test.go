// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/decisions.md: a state check that ignores ctx holds the caller past
// the deadline, and its not_applied after it sends nothing: the operation
// ends deadline_exceeded, its outcome known (a reviewer's test).
func TestAStateCheckPastTheDeadlineSendsNothing(t *testing.T) {
	for _, state := range []attrs.StateCheckResult{attrs.StateNotApplied, attrs.StateUnknown} {
		t.Run(string(state), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 201}},
					otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(time.Second),
					otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
						time.Sleep(5 * time.Second) // ignores ctx
						return otelretry.StateResult{State: state}, nil
					}))
				resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", "order"))
				if resp != nil {
					resp.Body.Close()
				}
				if n := len(h.base.Calls()); n != 1 {
					t.Fatalf("%d calls after a check that answered past the deadline; want 1", n)
				}
				var rerr *otelretry.Error
				if !errors.As(err, &rerr) {
					t.Fatalf("err = %v; want *otelretry.Error", err)
				}
				if state == attrs.StateNotApplied && rerr.Outcome != attrs.OutcomeDeadlineExceeded {
					t.Errorf("ended %s/%s; want deadline_exceeded", rerr.Outcome, rerr.Reason)
				}
				unknown := errors.Is(err, otelretry.ErrOutcomeUnknown)
				if state == attrs.StateNotApplied && unknown {
					t.Errorf("not_applied past the deadline: err %v (%s/%s) matches ErrOutcomeUnknown", err, rerr.Outcome, rerr.Reason)
				}
				if state == attrs.StateUnknown && !unknown {
					t.Errorf("unknown past the deadline: err %v (%s/%s) does not match ErrOutcomeUnknown", err, rerr.Outcome, rerr.Reason)
				}
				checks := spantest.Named(h.ended(), attrs.StateCheckSpanName)
				if len(checks) != 1 || attrOf(checks[0], attrs.StateCheckResultKey).AsString() != string(state) {
					t.Errorf("state_check spans %d, result %v", len(checks), checks)
				}
			})
		})
	}
}
