// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"testing"
	"time"
)

// emptyAfterRun is a run in which every operation before the trigger succeeds; after it, the
// operations of the after period's first second all fail, and then no
// operation arrives at all.
func emptyAfterRun(t *testing.T, failFirst bool) (options, result) {
	t.Helper()
	o := defaultOptions()
	o.before, o.trigger, o.after, o.tail = 2*time.Second, time.Second, 3*time.Second, time.Second
	o.bucket = 500 * time.Millisecond
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	trigEnd := o.before + o.trigger
	var r result
	for at := time.Duration(0); at < o.total(); at += 10 * time.Millisecond {
		switch {
		case at < o.before:
			r.recs = append(r.recs, opRecord{sched: at, ok: true})
		case at < trigEnd:
			r.recs = append(r.recs, opRecord{sched: at, ok: false})
		case failFirst && at < trigEnd+time.Second:
			r.recs = append(r.recs, opRecord{sched: at, ok: false})
		default:
			continue // no operation arrives
		}
		r.attempts = append(r.attempts, 1)
	}
	return o, r
}

// After the trigger, the only operations fail and then none arrive: no
// window after the trigger had a success, so goodput never came back
// ("+Inf when the last window still fails"); the empty windows at the end
// do not pass for recovery (a reviewer's find: recovery 1.0 s).
func TestEmptyWindowsAfterFailuresAreNoRecovery(t *testing.T) {
	o, r := emptyAfterRun(t, true)
	rep := analyze(o, r)
	if rep.after != 0 {
		t.Fatalf("setup: goodput after %v, want 0", rep.after)
	}
	if !math.IsInf(rep.recovery, 1) {
		t.Errorf("no operation succeeded after the trigger (goodput after %.1f, last %.1f), yet recovery %s: %s",
			rep.after, rep.end, rep.recoveryText(), rep.line())
	}
}

// No operation at all in the after period: there is nothing to call
// recovered (a reviewer's find: recovery 0.0 s, the best figure).
func TestAnAfterPeriodWithNoOperationsIsNoRecovery(t *testing.T) {
	o, r := emptyAfterRun(t, false)
	rep := analyze(o, r)
	if !math.IsInf(rep.recovery, 1) {
		t.Errorf("no operation arrived after the trigger, yet recovery %s: %s", rep.recoveryText(), rep.line())
	}
}
