// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// judged is the event of attempt n with verdict v.
func judged(n int, v verdict) *attemptEvent { return &attemptEvent{attempt: n, verdict: v} }

// after takes where the operation stands from the judged attempt's event:
// the attempts made, whether a retry was decided, whether a write is left
// unresolved, and the event itself; it returns a new value and leaves the
// one it was called on as it was.
func TestProgressAfterAnAttemptIsWhatItsEventRecords(t *testing.T) {
	var p progress
	retry := judged(1, verdict{decision: attrs.DecisionRetry, pause: 40 * time.Millisecond})
	p1 := p.after(1, retry)
	if p1.attempts != 1 || !p1.afterRetry || p1.unresolvedWrite || p1.last != retry {
		t.Errorf("after a retry: %+v", p1)
	}
	if p != (progress{}) {
		t.Errorf("after changed the value it was called on: %+v", p)
	}
	unknown := judged(2, verdict{decision: attrs.DecisionCheckState, unresolvedWrite: true})
	p2 := p1.after(2, unknown)
	if p2.attempts != 2 || p2.afterRetry || !p2.unresolvedWrite || p2.last != unknown {
		t.Errorf("after an unknown write: %+v", p2)
	}
	if s := p2.standing(); s != (standing{attempts: 2, unresolvedWrite: true, afterRetry: false}) {
		t.Errorf("standing = %+v", s)
	}
	if s := p1.standing(); s != (standing{attempts: 1, afterRetry: true}) {
		t.Errorf("standing after the retry = %+v", s)
	}
}

// lastPause is the pause taken before the next attempt, for the backoffs
// that grow from it: 0 before the first attempt and after an attempt that
// was not retried, else the pause its retry decided. lastNumber is the
// number the last attempt was sent as, 0 before the first.
func TestProgressLastPauseAndLastNumber(t *testing.T) {
	var p progress
	if p.lastPause() != 0 || p.lastNumber() != 0 {
		t.Errorf("before the first attempt: lastPause %v, lastNumber %d; want 0 and 0", p.lastPause(), p.lastNumber())
	}
	// Attempt numbers count on across a redirect chain or a
	// WithOperationID, so the event's number need not be n.
	p = p.after(1, judged(7, verdict{decision: attrs.DecisionRetry, pause: 250 * time.Millisecond}))
	if p.lastPause() != 250*time.Millisecond || p.lastNumber() != 7 {
		t.Errorf("after a retry with a 250ms pause: lastPause %v, lastNumber %d; want 250ms and 7", p.lastPause(), p.lastNumber())
	}
	p = p.after(2, judged(8, verdict{decision: attrs.DecisionReturn, pause: time.Second}))
	if p.lastPause() != 0 || p.lastNumber() != 8 {
		t.Errorf("after a return: lastPause %v, lastNumber %d; want 0 and 8", p.lastPause(), p.lastNumber())
	}
}

// abandon records the call a retry planned and that was not made;
// resolved is where a state check that found the write not applied leaves
// the operation: about to send it again, with nothing unresolved.
func TestProgressAbandonAndResolved(t *testing.T) {
	p := progress{}.after(1, judged(1, verdict{decision: attrs.DecisionCheckState, unresolvedWrite: true}))
	r := p.resolved()
	if !r.afterRetry || r.unresolvedWrite || r.attempts != 1 || r.last != p.last {
		t.Errorf("resolved = %+v", r)
	}
	if p.afterRetry || !p.unresolvedWrite {
		t.Errorf("resolved changed the value it was called on: %+v", p)
	}
	if a := r.abandon(2); a.abandoned != 2 || a.attempts != 1 {
		t.Errorf("abandon(2) = %+v", a)
	}
	if a := p.abandon(0); a.abandoned != 0 {
		t.Errorf("abandon(0) = %+v: no call was planned", a)
	}
}
