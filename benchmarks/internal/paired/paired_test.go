// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package paired

import (
	"math/rand/v2"
	"testing"
)

func TestPairedRatio(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
		ok   bool
	}{
		// A slow spell in run 2 doubles both cases: each run's ratio,
		// and so their median, stays 1.1.
		{"drift cancels", []float64{110, 220, 110}, []float64{100, 200, 100}, 1.1, true},
		{"median of the per-run ratios", []float64{100, 130, 120, 110}, []float64{100, 100, 100, 100}, 1.15, true},
		{"runs differ in number", []float64{1, 2}, []float64{1}, 0, false},
		{"no runs", nil, nil, 0, false},
		{"zero peer", []float64{1}, []float64{0}, 0, false},
	} {
		got, ok := Ratio(tc.x, tc.y)
		if ok != tc.ok || (ok && (got < tc.want-1e-9 || got > tc.want+1e-9)) {
			t.Errorf("%s: Ratio = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestMedianLeavesItsInputAlone(t *testing.T) {
	v := []float64{3, 1, 2}
	if got := Median(v); got != 2 {
		t.Errorf("median = %v, want 2", got)
	}
	if v[0] != 3 || v[1] != 1 || v[2] != 2 {
		t.Errorf("median reordered its input: %v", v)
	}
}

func TestPairedInterval(t *testing.T) {
	// Every run has the same ratio: the interval is that point.
	lo, hi, ok := Interval([]float64{110, 220, 330, 440, 550}, []float64{100, 200, 300, 400, 500})
	if !ok || lo < 1.1-1e-9 || hi > 1.1+1e-9 {
		t.Errorf("constant ratios: interval [%v, %v], %v; want [1.1, 1.1]", lo, hi, ok)
	}
	// Spread ratios: the interval holds the median and lies within the
	// extremes; the fixed seed gives the same interval twice.
	x := []float64{100, 130, 120, 110, 90, 150, 105, 115}
	y := []float64{100, 100, 100, 100, 100, 100, 100, 100}
	lo, hi, ok = Interval(x, y)
	r, _ := Ratio(x, y)
	if !ok || lo > r || hi < r || lo < 0.9 || hi > 1.5 || lo == hi {
		t.Errorf("spread ratios: interval [%v, %v] around %v", lo, hi, r)
	}
	if lo2, hi2, _ := Interval(x, y); lo2 != lo || hi2 != hi {
		t.Errorf("interval not reproducible: [%v, %v] then [%v, %v]", lo, hi, lo2, hi2)
	}
	if _, _, ok := Interval([]float64{1, 2}, []float64{1}); ok {
		t.Error("runs differ in number: ok, want not ok")
	}
}

func TestBoundVerdict(t *testing.T) {
	for _, tc := range []struct {
		b      Bound
		lo, hi float64
		want   string
	}{
		{AtMost(1.12), 1.05, 1.12, "ok"},
		{AtMost(1.12), 1.13, 1.20, "MISS"},
		{AtMost(1.12), 1.08, 1.16, "EDGE"},
		{Below(1), 0.5, 0.99, "ok"},
		{Below(1), 1, 1, "MISS"},
		{Below(1), 0.9, 1.0, "EDGE"},
	} {
		if got := tc.b.Verdict(tc.lo, tc.hi); got != tc.want {
			t.Errorf("%+v on [%v, %v] = %s, want %s", tc.b, tc.lo, tc.hi, got, tc.want)
		}
	}
}

// The interval covers the true median of the per-run ratios about as
// often as a 95 % interval should from MinRuns runs on (normal ratios of
// median 1, sd 0.1; 1,500 experiments per count, a fixed seed), and a
// target missed by 1 % is judged ok rarely; below MinRuns there is no
// interval (from 3 runs it was their range, which covered 74 %, and
// judged such a miss ok 10 % of the time).
func TestIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	if _, _, ok := Interval([]float64{1, 1, 1, 1}, []float64{1, 1, 1, 1}); ok {
		t.Errorf("an interval from %d runs, below MinRuns (%d)", 4, MinRuns)
	}
	for _, n := range []int{MinRuns, 6, 12} {
		const trials = 1500
		covered, okMissed := 0, 0
		for range trials {
			x, missed, y := make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range x {
				e := 0.1 * rng.NormFloat64()
				x[i], missed[i], y[i] = 1+e, 1.06+e, 1
			}
			lo, hi, ok := Interval(x, y)
			if !ok {
				t.Fatalf("%d runs: no interval", n)
			}
			if lo <= 1 && 1 <= hi {
				covered++
			}
			if lo, hi, _ := Interval(missed, y); AtMost(1.05).Verdict(lo, hi) == "ok" {
				okMissed++
			}
		}
		t.Logf("%d runs: coverage %.1f %%, a 1 %% miss judged ok %.1f %%", n, 100*float64(covered)/trials, 100*float64(okMissed)/trials)
		if c := float64(covered) / trials; c < 0.9 {
			t.Errorf("%d runs: the interval held the true median in %.1f %% of experiments", n, 100*c)
		}
		if p := float64(okMissed) / trials; p > 0.04 {
			t.Errorf("%d runs: a target missed by 1 %% judged ok in %.1f %% of experiments", n, 100*p)
		}
	}
}
