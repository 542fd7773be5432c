// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package paired

import "testing"

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
	lo, hi, ok := Interval([]float64{110, 220, 330}, []float64{100, 200, 300})
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
