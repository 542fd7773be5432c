// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// decideHedge's godoc: a hedge may be sent "within the attempt limit, the
// hedges an operation may send, the deadline and the retry budget". With
// no time left at all (remaining exactly 0) a hedge cannot finish, so it
// is not sent, and the budget is not even asked for a token (a reviewer's
// mutant, admitting it at 0, passed every test before this one).
func TestAHedgeWithNoTimeLeftIsNotSent(t *testing.T) {
	base := input{phase: phaseHedge, repeatable: true, replayable: true, attemptsLeft: 2, hedgesLeft: 1}
	for _, remaining := range []time.Duration{0, -time.Millisecond} {
		in := base
		in.remaining = remaining
		v := decide(in)
		if v.needBudget || v.decision != attrs.DecisionDeadlineExceeded || v.reason != attrs.ReasonDeadline {
			t.Errorf("remaining %v: verdict %s/%s needBudget=%v, want deadline_exceeded/deadline without asking the budget",
				remaining, v.decision, v.reason, v.needBudget)
		}
	}
	// Control: with time left, the budget is asked.
	in := base
	in.remaining = time.Millisecond
	if v := decide(in); !v.needBudget {
		t.Errorf("remaining 1ms: verdict %s/%s, want the budget asked", v.decision, v.reason)
	}
}
