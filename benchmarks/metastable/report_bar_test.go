// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"testing"
	"time"
)

// doc.go and docs/benchmarks.md: recovery is the earliest offset from
// which every window "has a success share of at least 90 % of the share
// before the trigger". Before: 1,400 of 1,500 succeeded (share 14/15);
// the after period's only window: 252 of 300 (0.84 = 0.9 × 14/15
// exactly). The window is at the target, so it passes: recovery 0 s. It
// failed, 0.9 × 14/15 being 0.8400000000000001 in floating point (a
// reviewer's find).
func TestAWindowAtTheRecoveryBarPasses(t *testing.T) {
	o := defaultOptions()
	o.before, o.trigger, o.after = 5*time.Second, time.Second, time.Second
	o.window, o.step, o.bucket, o.tail = time.Second, time.Second, time.Second, time.Second
	o.configs = []string{"no-retry"}
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	var r result
	add := func(from time.Duration, ops, ok int) {
		for i := range ops {
			r.recs = append(r.recs, opRecord{sched: from + time.Duration(i)*time.Millisecond, ok: i < ok})
			r.attempts = append(r.attempts, 1)
		}
	}
	for s := range 5 {
		add(time.Duration(s)*time.Second, 300, 280) // 1,400 of 1,500 before
	}
	add(5*time.Second, 300, 0)   // the trigger
	add(6*time.Second, 300, 252) // after: 0.84 = 0.9 × 14/15
	rep := analyze(o, r)
	if rep.recovery != 0 {
		t.Errorf("after-window share 252/300 = 0.84 is exactly 0.9 × the share before (1400/1500), yet recovery %s (line: %s)", rep.recoveryText(), rep.line())
	}
}

// The same on recovery() alone.
func TestRecoveryAtTheBarIsNoFailure(t *testing.T) {
	c := []counts{{1500, 1400}, {300, 0}, {300, 252}}
	got := recovery(c, time.Second, 2*time.Second, time.Second, time.Second, share(c[0]), 0.9)
	if math.IsInf(got, 1) || got != 0 {
		t.Errorf("recovery = %v, want 0 (the only window is exactly at 90 %% of the share before)", got)
	}
}

// -target is a float flag ("NaN" parses): a target that is no share is
// refused, as a bar of NaN would pass every window and a run that never
// served after the trigger would read as recovered at once (a reviewer's
// find).
func TestATargetThatIsNoShareIsRefused(t *testing.T) {
	for _, target := range []float64{math.NaN(), 0, -0.5, 1.5, math.Inf(1)} {
		o := defaultOptions()
		o.target = target
		if err := o.normalize(); err == nil {
			t.Errorf("target %v accepted", target)
		}
	}
	o := defaultOptions()
	o.target = 1
	if err := o.normalize(); err != nil {
		t.Errorf("target 1 refused: %v", err)
	}
}
