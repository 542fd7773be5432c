// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

func attemptAt(n, off, el int64, decision string) inspect.Attempt {
	return inspect.Attempt{Number: n, OffsetMs: i64(off), ElapsedMs: i64(el), Decision: decision}
}

// TestTheTableIsOpenUpToFiveAttempts.
func TestTheTableIsOpenUpToFiveAttempts(t *testing.T) {
	op := &inspect.Operation{Start: time.Unix(1000, 0)}
	for i := range int64(5) {
		op.Attempts = append(op.Attempts, attemptAt(i+1, i*10, 5, string(attrs.DecisionRetry)))
	}
	if tl := buildTimeline(op, 0, nil); !tl.TableOpen {
		t.Fatal("five attempts: the table is closed")
	}
}

// TestASupersededAttemptIsFaded.
func TestASupersededAttemptIsFaded(t *testing.T) {
	op := &inspect.Operation{Start: time.Unix(1000, 0), Attempts: []inspect.Attempt{
		attemptAt(1, 0, 10, string(attrs.DecisionSuperseded)), attemptAt(2, 5, 2, string(attrs.DecisionReturn))}}
	tl := buildTimeline(op, 0, nil)
	if !tl.Rows[0].Faded || tl.Rows[1].Faded {
		t.Fatalf("faded %v %v: want true false", tl.Rows[0].Faded, tl.Rows[1].Faded)
	}
}

// TestNoPauseBetweenBackToBackAttemptsAndTheBackoffWhenItDiffers.
func TestNoPauseBetweenBackToBackAttemptsAndTheBackoffWhenItDiffers(t *testing.T) {
	a1 := attemptAt(1, 0, 10, string(attrs.DecisionRetry))
	a1.BackoffMs = i64(50)
	op := &inspect.Operation{Start: time.Unix(1000, 0), Attempts: []inspect.Attempt{
		a1, attemptAt(2, 10, 10, string(attrs.DecisionRetry)), attemptAt(3, 30, 10, string(attrs.DecisionReturn))}}
	tl := buildTimeline(op, 0, nil)
	if tl.Rows[1].Pause != nil {
		t.Errorf("attempt 2 starts as attempt 1 ends: pause %q", tl.Rows[1].Pause.Label)
	}
	op.Attempts[1].OffsetMs = i64(20)
	op.Attempts[1].BackoffMs = nil
	tl = buildTimeline(op, 0, nil)
	if p := tl.Rows[1].Pause; p == nil || !strings.Contains(p.Label, "backoff 50 ms") {
		t.Errorf("a pause of 10 ms after a backoff of 50 ms: %+v", p)
	}
}

// TestACutNamesNoPauseThatTheTimeLeftCovers: a pause equal to the time
// left would not have crossed the deadline.
func TestACutNamesNoPauseThatTheTimeLeftCovers(t *testing.T) {
	a := attemptAt(1, 0, 10, string(attrs.DecisionDeadlineExceeded))
	a.RetryAfterMs = i64(90)
	op := &inspect.Operation{Attempts: []inspect.Attempt{a}}
	pause, label := describeCut(op, 0, 10, 100)
	if pause != nil {
		t.Fatalf("90 ms left, Retry-After 90 ms: %q", label)
	}
}
