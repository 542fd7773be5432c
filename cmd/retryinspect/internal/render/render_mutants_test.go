// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// TestAStateCheckAtAnAttemptsInstantComesBeforeIt: attemptRows puts a
// state check that started when an attempt started before that attempt,
// as the timeline does.
func TestAStateCheckAtAnAttemptsInstantComesBeforeIt(t *testing.T) {
	t0 := time.Unix(1000, 0)
	op := &inspect.Operation{Start: t0,
		Attempts:    []inspect.Attempt{{Number: 1, Start: t0}, {Number: 2, Start: t0.Add(time.Second)}},
		StateChecks: []inspect.StateCheck{{Result: "applied", Start: t0.Add(time.Second)}}}
	rows := attemptRows(op)
	if len(rows) != 4 || rows[2][1] != "state_check" {
		t.Fatalf("rows %q: want the state check before attempt 2", rows)
	}
}

// TestTheLogsCountsLineCountsStateChecksAsOtherEvents.
func TestTheLogsCountsLineCountsStateChecksAsOtherEvents(t *testing.T) {
	r := &inspect.Report{Input: inspect.InputLogs}
	r.Spans.Total, r.Spans.Other, r.Spans.StateCheck = 5, 2, 3
	if l := countsLine(r); !strings.Contains(l, "5 of other events") {
		t.Fatalf("%q: want 5 of other events", l)
	}
}
