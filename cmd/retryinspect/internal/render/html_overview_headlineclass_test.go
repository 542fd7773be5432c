// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// A dependency's headline is coloured as its most frequent outcome other
// than return (Dependency.Outcomes, the most first); one with none is
// coloured as return (a reviewer's mutant, colouring every headline as
// return, passed every test before this one).
func TestAHeadlineTakesTheColourOfItsMostFrequentOutcomeNotReturned(t *testing.T) {
	r := &inspect.Report{Dependencies: []inspect.Dependency{
		{Name: "a", Headline: "a: 3 deadline_exceeded", Operations: 5, NotReturned: 4,
			Outcomes: []inspect.Share{{Value: string(attrs.DecisionDeadlineExceeded), Count: 3}, {Value: string(attrs.DecisionMaxAttempts), Count: 1}}},
		{Name: "b", Headline: "b: all returned", Operations: 2},
	}}
	hs := headlines(r)
	if len(hs) != 2 {
		t.Fatalf("%d headlines, want 2", len(hs))
	}
	if want := valueClass(string(attrs.DecisionDeadlineExceeded)); hs[0].Class != want {
		t.Errorf("headline of a dependency mostly deadline_exceeded has class %q, want %q", hs[0].Class, want)
	}
	if want := valueClass(string(attrs.OutcomeReturn)); hs[1].Class != want {
		t.Errorf("headline of a dependency that always returned has class %q, want %q", hs[1].Class, want)
	}
}
