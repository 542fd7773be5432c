// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import "testing"

// The target is otelretry's p99.9 at or below failsafe-go's: equal in
// every repetition meets it (ok), it does not miss it.
func TestEqualP999MeetsTheTarget(t *testing.T) {
	flat := func(x float64, k int) float64 { return 10 * noise[k] }
	js := verdicts(t, knownReport(5, flat, flat))
	for pct := 1; pct <= 10; pct++ {
		if j, ok := js[pct]; !ok || j.Verdict != "ok" {
			t.Errorf("%d %%: %+v (judged %v), want ok", pct, j, ok)
		}
	}
}

// A repetition in which the peer's p99.9 is 0 has no ratio: it is left
// out, and the load is judged on the other repetitions (6 of 7 here),
// rather than not at all.
func TestARepetitionWithAPeerOfZeroIsLeftOut(t *testing.T) {
	js := verdicts(t, knownReport(7, func(x float64, k int) float64 { return 5 * noise[k] }, func(x float64, k int) float64 {
		if k == 3 {
			return 0
		}
		return 10 * noise[k]
	}))
	for pct := 1; pct <= 10; pct++ {
		j, ok := js[pct]
		if !ok || j.Reps != 6 || j.Verdict != "ok" {
			t.Errorf("%d %%: %+v (judged %v), want ok over 6 repetitions", pct, j, ok)
		}
	}
}

// The warm-up is not judged: it draws no curve, whatever rows it holds.
func TestTheWarmupDrawsNoCurve(t *testing.T) {
	r := knownReport(5, func(x float64, k int) float64 { return 5 }, func(x float64, k int) float64 { return 10 })
	for _, rw := range r.Rows[:len(r.Rows):len(r.Rows)] {
		rw.Phase = warmupPhase
		r.Rows = append(r.Rows, rw)
	}
	o := defaultOptions()
	e := o.env()
	for _, c := range curves(r, e) {
		if c.Phase == warmupPhase {
			t.Errorf("a curve of the warm-up: %+v", c)
		}
	}
	for _, j := range judgeAtEqualLoad(&report{Rows: r.Rows, Curves: curves(r, e)}, e) {
		if j.Phase == warmupPhase {
			t.Errorf("the warm-up judged: %+v", j)
		}
	}
}
