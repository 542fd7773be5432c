// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package attrs_test

import (
	"slices"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
)

// The outcomes are the decisions minus retry and superseded, as Outcome's
// godoc says (a reviewer's find: it said minus retry alone).
func TestTheOutcomesAreTheDecisionsThatEndAnOperation(t *testing.T) {
	var want []attrs.Outcome
	for _, d := range attrs.Decisions() {
		if d != attrs.DecisionRetry && d != attrs.DecisionSuperseded {
			want = append(want, attrs.Outcome(d))
		}
	}
	if got := attrs.Outcomes(); !slices.Equal(got, want) {
		t.Errorf("Outcomes() = %v, want the decisions minus retry and superseded: %v", got, want)
	}
}
