// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

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
		got, ok := pairedRatio(tc.x, tc.y)
		if ok != tc.ok || (ok && (got < tc.want-1e-9 || got > tc.want+1e-9)) {
			t.Errorf("%s: pairedRatio = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestMedianLeavesItsInputAlone(t *testing.T) {
	v := []float64{3, 1, 2}
	if got := median(v); got != 2 {
		t.Errorf("median = %v, want 2", got)
	}
	if v[0] != 3 || v[1] != 1 || v[2] != 2 {
		t.Errorf("median reordered its input: %v", v)
	}
}
