// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"slices"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// An attempt is numbered when it starts: numbers that run against the
// order the attempts started are attempt-numbering, where they were sorted
// away and the attempt numbered last was taken for the one the operation
// ended on (a reviewer's find: a 503 numbered 2, sent first, read as a
// retry without a next attempt). Starts read from log records are given a
// millisecond; ties are no finding.
func TestNumbersAgainstTheStartOrderAreAttemptNumbering(t *testing.T) {
	retry := kv(keyDecision, model.String(string(attrs.DecisionRetry)))
	attempt := func(id int, n, startMs int64, log bool, extra ...model.Attribute) model.Span {
		s := minimalAttempt("t1", id, 1, "w", n, startMs)
		s.End, s.Log = s.Start.Add(10*time.Millisecond), log
		s.Attributes = slices.DeleteFunc(s.Attributes, func(a model.Attribute) bool {
			return slices.ContainsFunc(extra, func(e model.Attribute) bool { return e.Key == a.Key })
		})
		s.Attributes = append(s.Attributes, extra...)
		return s
	}
	for _, tc := range []struct {
		name   string
		second model.Span // attempt 2; attempt 1 starts at 20 ms
		found  bool
	}{
		{"2 started 20 ms before 1", attempt(3, 2, 0, false), true},
		{"2 started with 1", attempt(3, 2, 20, false), false},
		{"2 started after 1", attempt(3, 2, 40, false), false},
	} {
		first := attempt(2, 1, 20, false, retry, kv(keyStatusCode, model.Int(503)))
		r := Analyze([]model.Span{operationSpan("t1", 1, 0, "w", 2, 1000), first, tc.second})
		if got := slices.Contains(codesOf(r), CodeAttemptNumbering); got != tc.found {
			t.Errorf("%s: codes %v, want %s %v", tc.name, codesOf(r), CodeAttemptNumbering, tc.found)
		}
	}
	// Log records: a start a millisecond early is their rounding.
	first := attempt(2, 1, 20, true, retry, kv(keyStatusCode, model.Int(503)))
	second := attempt(3, 2, 20, true)
	second.Start = second.Start.Add(-time.Millisecond)
	r := Analyze([]model.Span{operationSpan("t1", 1, 0, "w", 2, 1000), first, second})
	if slices.Contains(codesOf(r), CodeAttemptNumbering) {
		t.Errorf("log records a millisecond apart: codes %v, want no %s", codesOf(r), CodeAttemptNumbering)
	}
}
