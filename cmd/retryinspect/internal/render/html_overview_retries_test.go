// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// The overview's lane counts, as its ticks and histogram draw, every
// attempt after an operation's first, a hedge included, and calls them
// extra attempts: it said "1 retry" for a hedged race the text report gave
// a retry ratio of 0, which counts the attempts that decided retry
// (reviewers' finds: a first fix counted those, and the lane's count then
// disagreed with its own ticks).
func TestTheOverviewsLaneCountsExtraAttemptsAsItDrawsThem(t *testing.T) {
	of := int64(1)
	r := &inspect.Report{Operations: []inspect.Operation{
		{Dependency: "h.test", Attempts: []inspect.Attempt{ // a hedged race
			{Number: 1, Decision: string(attrs.DecisionSuperseded)},
			{Number: 2, HedgeOf: &of, Decision: string(attrs.DecisionReturn)},
		}},
		{Dependency: "h.test", Attempts: []inspect.Attempt{ // a retry
			{Number: 1, Decision: string(attrs.DecisionRetry)},
			{Number: 2, Decision: string(attrs.DecisionReturn)},
		}},
	}}
	deps := dependencies(r)
	if len(deps) != 1 || deps[0].attempts != 4 || deps[0].extra != 2 {
		t.Fatalf("lanes %+v, want one of 4 attempts, 2 extra", deps)
	}
	if l := plural(deps[0].extra, "extra attempt"); !strings.Contains(l, "2 extra attempts") {
		t.Errorf("lane word %q", l)
	}
}
