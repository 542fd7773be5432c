// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package paired

import (
	"math"
	"testing"
)

// A run whose ratio is not a number (a value NaN) is either refused or
// left out: Ratio must not report ok with the "median" that sort order
// happens to put in the middle (here 1, where the median of the runs
// that are numbers is 1.5, and of all three is undefined).
func TestARunThatIsNoNumberHasNoRatio(t *testing.T) {
	r, ok := Ratio([]float64{math.NaN(), 1, 2}, []float64{1, 1, 1})
	if ok && r != 1.5 {
		t.Errorf("Ratio([NaN 1 2], [1 1 1]) = %v, ok; want not ok, or 1.5 (the NaN run left out)", r)
	}
}

// An interval with an end that is not a number is no 95 % interval and
// cannot be "at or below" a bound: Interval must not report it ok, and
// the verdict on it is not "ok".
func TestAnIntervalOverARunThatIsNoNumberIsRefused(t *testing.T) {
	x := []float64{math.NaN(), 0.5, 0.5, 0.5, 0.5, 0.5}
	y := []float64{1, 1, 1, 1, 1, 1}
	lo, hi, ok := Interval(x, y)
	if ok && (math.IsNaN(lo) || math.IsNaN(hi)) {
		t.Errorf("Interval = [%v, %v], ok; verdict against AtMost(1): %s", lo, hi, AtMost(1).Verdict(lo, hi))
	}
}
