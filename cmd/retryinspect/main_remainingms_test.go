// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// docs: retry.remaining_ms is whole milliseconds, cut, so 0 is under 1 ms
// left, which the transport starts a call with; any negative value is an
// attempt started after the deadline. -1 is the first such value: an
// attempt that started in time by its start (150 ms into a 200 ms
// deadline) yet recorded -1 is attempt-after-deadline.
func TestARemainingOfMinusOneIsAnAttemptAfterTheDeadline(t *testing.T) {
	items := endpoint("/items")
	roots := []tracefixture.Span{
		op{id: "op-minus-one", method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 2, budget: 200, end: 200, children: children(
			try{opID: "op-minus-one", n: 1, method: "GET", url: items, status: 503, elapsed: 100, remaining: 200, decision: attrs.DecisionRetry, backoff: 40}.span(),
			try{opID: "op-minus-one", n: 2, method: "GET", url: items, status: 200, start: 150, elapsed: 40, remaining: -1, decision: attrs.DecisionReturn}.span(),
		)}.span(),
	}
	code, out, errOut := inspectStdout(t, roots, false, "-json")
	var report inspect.Report
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("exit %d, stderr %q: -json output does not parse: %v", code, errOut, err)
	}
	n := 0
	for _, f := range report.Findings {
		if f.Code == inspect.CodeAttemptAfterDeadline {
			n++
		}
	}
	if code != exitFindings || n != 1 {
		t.Errorf("exit %d, %d attempt-after-deadline findings; want exit %d and 1: attempt 2 recorded %s -1\n%s", code, n, exitFindings, "retry.remaining_ms", out)
	}
}
