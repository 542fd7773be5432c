// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"slices"
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// An operation (1000 to 2000 ms) whose own attempt spans, under its span,
// are numbered 1, 3: a gap. Its id has two later-lost operations, one
// that ran at 0 ms and one at 5000 ms, neither in flight with it (the
// operation starts after the first ended and ends before the second
// began). besideLost reads the lost attempts as one window, 0 to 5001 ms,
// and so skips the gap.
func TestAGapIsStillFoundBetweenTwoLostOperationsOfItsID(t *testing.T) {
	op := operationSpan("t", 1, 0, "job", 2, 1000)
	op.Start, op.End = hostileBase.Add(1000e6), hostileBase.Add(2000e6)
	a1, a3 := minimalAttempt("t", 2, 1, "job", 1, 1010), minimalAttempt("t", 3, 1, "job", 3, 1020)
	if r := Analyze([]model.Span{op, a1, a3}); !slices.Contains(codesOf(r), CodeAttemptNumbering) {
		t.Fatalf("alone: findings %v; want %s", findingTexts(r), CodeAttemptNumbering)
	}
	early := minimalAttempt("t", 5, 4, "job", 1, 0)
	early.Attributes[1] = kv(keyRequestID, model.String("job/early/attempt-1"))
	late := minimalAttempt("t", 7, 6, "job", 1, 5000)
	late.Attributes[1] = kv(keyRequestID, model.String("job/late/attempt-1"))
	for name, spans := range map[string][]model.Span{
		"early only": {op, a1, a3, early},
		"late only":  {op, a1, a3, late},
		"both":       {op, a1, a3, early, late},
	} {
		r := Analyze(spans)
		if !slices.Contains(codesOf(r), CodeAttemptNumbering) {
			t.Errorf("%s: findings:\n  %v\nwant %s for the operation's own 1, 3", name, findingTexts(r), CodeAttemptNumbering)
		}
	}
}

// TestADroppedSpanBetweenOperationAndAttemptsIsNoLostAttempt, with two
// operations of the id (a repeat the transport counted: retry.operation.
// repeat 1), each with a span lost between it and its attempt. No attempt
// span was lost: an attempt-count-mismatch is a false finding.
func TestADroppedSpanBetweenRepeatsAndTheirAttemptsIsNoLostAttempt(t *testing.T) {
	op1 := operationSpan("t", 1, 0, "job", 1, 1000) // 0 to 1000 ms
	op2 := operationSpan("t", 11, 0, "job", 1, 1000, kv(keyRepeat, model.Int(1)))
	op2.Start, op2.End = hostileBase.Add(2000e6), hostileBase.Add(3000e6)
	a1 := minimalAttempt("t", 3, 2, "job", 1, 10)     // under lost span 2
	a2 := minimalAttempt("t", 13, 12, "job", 2, 2010) // under lost span 12
	r := Analyze([]model.Span{op1, a1})
	if slices.Contains(codesOf(r), CodeAttemptCountMismatch) {
		t.Fatalf("one operation: findings %v", findingTexts(r))
	}
	r = Analyze([]model.Span{op1, op2, a1, a2})
	if slices.Contains(codesOf(r), CodeAttemptCountMismatch) {
		t.Errorf("findings:\n  %v\nwant no %s: every attempt span retry.attempts counts is in the input",
			findingTexts(r), CodeAttemptCountMismatch)
	}
}

// TestADroppedSpanBetweenOperationAndAttemptsIsNoLostAttempt, where the
// attempt's url.full is its prepared URL (a PrepareAttemptFunc may change
// the path and query: docs/decisions.md), not the operation's.
func TestADroppedSpanAboveAPreparedAttemptIsNoLostAttempt(t *testing.T) {
	op := operationSpan("t", 1, 0, "job", 1, 1000)
	a1 := minimalAttempt("t", 3, 2, "job", 1, 10) // under lost span 2
	a1.Attributes = append(a1.Attributes, kv(keyURLFull, model.String("http://h.test/x/v2")))
	r := Analyze([]model.Span{op, a1})
	if slices.Contains(codesOf(r), CodeAttemptCountMismatch) {
		t.Errorf("findings:\n  %v\nwant no %s: the attempt span retry.attempts counts is in the input",
			findingTexts(r), CodeAttemptCountMismatch)
	}
}

// docs/retryinspect.md: "linear analysis" on hostile input. n operation
// spans of one id that started at one instant, each with a span lost
// between it and its attempt: the n attempts make one orphan group of the
// id, which starts at the same instant; sortAsSent/chainOf compare it by
// sentNumber, a scan of its n attempts, at every comparison (10k: 0.65 s,
// 20k: 2.6 s, 100k: over 30 s, where the rest of Analyze takes ~1 s).
// Run with -timeout 30s: the failure is the timeout.
func TestOperationsAtOneInstantBesideALostOneAreSortedInLinearTime(t *testing.T) {
	n := 100_000
	if raceEnabled {
		n = 10_000
	}
	spans := make([]model.Span, 0, 2*n)
	for i := range n {
		spans = append(spans, operationSpan("t", 3*i+1, 0, "job", 1, 1000),
			minimalAttempt("t", 3*i+3, 3*i+2, "job", 1, 0)) // under lost span 3i+2
	}
	if r := Analyze(spans); len(r.Operations) != n+1 {
		t.Errorf("%d operations, want %d", len(r.Operations), n+1)
	}
}
