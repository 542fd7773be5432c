// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// TestANotAppliedCheckAfterTheCallerLeftSendsNothing: a state check that
// says not applied, once the caller canceled or its deadline passed, ends
// the operation for the caller (reason caller), with the write known not
// applied: no resend is planned (policy.go, decideAfterStateCheck).
func TestANotAppliedCheckAfterTheCallerLeftSendsNothing(t *testing.T) {
	for _, tc := range []struct {
		canceled, deadline bool
		want               attrs.Decision
	}{
		{true, false, attrs.DecisionCanceled},
		{false, true, attrs.DecisionDeadlineExceeded},
		{true, true, attrs.DecisionCanceled},
	} {
		in := input{phase: phaseStateCheck, state: attrs.StateNotApplied, remaining: time.Second, attemptsLeft: 2,
			replayable: true, budgetAsked: true, callerCanceled: tc.canceled, callerDeadline: tc.deadline}
		v := decide(in)
		if v.decision != tc.want || v.reason != attrs.ReasonCaller || v.unknownWrite {
			t.Errorf("not applied, canceled %v, deadline %v: %+v, want %s reason %s, the write known",
				tc.canceled, tc.deadline, v, tc.want, attrs.ReasonCaller)
		}
	}
}
