// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// The overview's lane counts the attempts that decided retry, as the
// summary's retry ratio does: a hedge is no retry (a reviewer's find: the
// lane said "1 retry" for a hedged race the text report gave a retry
// ratio of 0).
func TestTheOverviewsRetriesAreTheAttemptsThatDecidedRetry(t *testing.T) {
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
	if len(deps) != 1 || deps[0].attempts != 4 || deps[0].retries != 1 {
		t.Fatalf("lanes %+v, want one of 4 attempts and 1 retry", deps)
	}
}
