// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"slices"
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

func findingTexts(r *Report) []string {
	var fs []string
	for _, f := range r.Findings {
		fs = append(fs, string(f.Code)+": "+f.Seen)
	}
	return fs
}

// One span lost between an operation span and its attempts (an
// application or instrumentation span in between, not exported): the
// operation span of the id is in the input, and so are all the attempts
// its retry.attempts counts. No attempt span was lost, so an
// attempt-count-mismatch ("lost attempt spans", docs/retryinspect.md) is
// a false finding.
func TestADroppedSpanBetweenOperationAndAttemptsIsNoLostAttempt(t *testing.T) {
	op := operationSpan("t", 1, 0, "job", 2, 1000)
	// Attempts hang under span 2, which the input lacks.
	a1, a2 := minimalAttempt("t", 3, 2, "job", 1, 10), minimalAttempt("t", 4, 2, "job", 2, 20)
	r := Analyze([]model.Span{op, a1, a2})
	if slices.Contains(codesOf(r), CodeAttemptCountMismatch) {
		t.Errorf("findings:\n  %v\nwant no %s: both attempt spans retry.attempts counts are in the input",
			findingTexts(r), CodeAttemptCountMismatch)
	}
}

// An operation whose own attempt spans, all under its span, are numbered
// 1, 3 has a numbering gap, whatever else its id did: a later operation of
// the id, begun after it ended, whose operation span was lost, neither
// interleaves its numbers with them nor goes on before them. Its gap must
// still be an attempt-numbering finding (it is without that later one).
func TestAGapUnderItsOwnSpanIsStillFoundBesideALaterLostOperation(t *testing.T) {
	op := operationSpan("t", 1, 0, "job", 2, 1000) // 0 to 1000 ms
	a1, a3 := minimalAttempt("t", 2, 1, "job", 1, 10), minimalAttempt("t", 3, 1, "job", 3, 20)
	if r := Analyze([]model.Span{op, a1, a3}); !slices.Contains(codesOf(r), CodeAttemptNumbering) {
		t.Fatalf("alone: findings %v; want %s", findingTexts(r), CodeAttemptNumbering)
	}
	// A job's next call under the id (its own context: attempt 1), at
	// 2000 ms, whose operation span (4) was lost.
	later := minimalAttempt("t", 5, 4, "job", 1, 2000)
	later.Attributes[1] = kv(keyRequestID, model.String("job/later/attempt-1"))
	r := Analyze([]model.Span{op, a1, a3, later})
	if !slices.Contains(codesOf(r), CodeAttemptNumbering) {
		t.Errorf("findings:\n  %v\nwant %s for the operation's own 1, 3", findingTexts(r), CodeAttemptNumbering)
	}
}

// From log records: operation "job" (0 to 1000 ms, retry.attempts 3)
// whose attempt 2 record was lost, and, a second after it ended, the
// attempt record of a later call under the id whose retry.operation record
// was lost. That record is not the operation's (it began a second after
// the operation ended): docs/retryinspect.md, "What only the span tree
// tells is a needs-spans note, never a false finding: attempts without
// their operation record". Joined to the operation, it is read as an
// attempt-after-deadline, a false finding, and hides the operation's lost
// attempt record (attempt-count-mismatch) behind a count that matches.
func TestALaterRecordOfALostOperationIsNotJoinedToAnEndedOne(t *testing.T) {
	lg := func(s model.Span) model.Span { s.Log, s.ParentID = true, ""; return s }
	op := lg(operationSpan("t", 1, 0, "job", 3, 1000))
	a1, a3 := lg(minimalAttempt("t", 1, 0, "job", 1, 10)), lg(minimalAttempt("t", 1, 0, "job", 3, 20))
	a3.Attributes[1] = kv(keyRequestID, model.String("job/attempt-3"))
	if r := Analyze([]model.Span{op, a1, a3}); !slices.Contains(codesOf(r), CodeAttemptCountMismatch) {
		t.Fatalf("alone: findings %v; want %s", findingTexts(r), CodeAttemptCountMismatch)
	}
	later := lg(minimalAttempt("t", 5, 0, "job", 1, 2000))
	later.Attributes[1] = kv(keyRequestID, model.String("job/later/attempt-1"))
	r := Analyze([]model.Span{op, a1, a3, later})
	if slices.Contains(codesOf(r), CodeAttemptAfterDeadline) {
		t.Errorf("findings:\n  %v\nwant no %s: the attempt at +2000ms is not of the operation that ended at +1000ms",
			findingTexts(r), CodeAttemptAfterDeadline)
	}
	for _, o := range r.Operations {
		if o.SpanID == op.SpanID && len(o.Attempts) != 2 {
			t.Errorf("the operation holds %d attempt records; want its own 2", len(o.Attempts))
		}
	}
}
