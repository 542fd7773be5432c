// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// interpolate at any load within a curve's range (give or take the
// tolerance) is finite and between the curve's lowest and highest p99.9.
func TestInterpolateStaysBetweenItsPoints(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		n := 1 + r.IntN(4)
		var pts []point
		x := r.Float64()*0.1 - 0.01
		for j := 0; j < n; j++ {
			steps := []float64{0, 1e-12, 5e-10, 1e-9, 1.5e-9, 3e-9, 0.01}
			x += steps[r.IntN(len(steps))]
			pts = append(pts, point{Extra: num(x), P999Ms: num(1 + r.Float64()*100)})
		}
		slices.SortFunc(pts, func(a, b point) int { return cmpF(float64(a.Extra), float64(b.Extra)) })
		c := curve{Points: pts}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range pts {
			lo, hi = min(lo, float64(p.P999Ms)), max(hi, float64(p.P999Ms))
		}
		first, last := float64(pts[0].Extra), float64(pts[n-1].Extra)
		for _, q := range []float64{first, last, first - 5e-10, last + 5e-10, first + (last-first)*r.Float64(), first + 5e-10, last - 5e-10} {
			y, ok := c.interpolate(q)
			if !ok {
				t.Fatalf("points %v: x %v refused", pts, q)
			}
			if math.IsNaN(y) || y < lo-1e-9 || y > hi+1e-9 {
				t.Fatalf("points %v: x %v gave %v outside [%v, %v]", pts, q, y, lo, hi)
			}
		}
		for _, q := range []float64{math.NaN(), first - 2e-9, last + 2e-9, math.Inf(1), math.Inf(-1)} {
			if y, ok := c.interpolate(q); ok {
				t.Fatalf("points %v: x %v accepted: %v", pts, q, y)
			}
		}
	}
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// A load a tolerance below a curve's last point, which is 1.5e-9 above the
// one before: interpolate picked a point below x as "above" and
// extrapolated, to a p99.9 below every point's (negative: a reviewer's
// find in the tolerance added for whole percents).
func TestInterpolateDoesNotExtrapolateAToleranceAway(t *testing.T) {
	pts := []point{
		{Extra: 0.004644681579340976, P999Ms: 60.41035473556139},
		{Extra: 0.004644681580340976, P999Ms: 27.656201774199427},
		{Extra: 0.0046446825803409765, P999Ms: 6.615187388237564},
		{Extra: 0.0046446840803409765, P999Ms: 33.117892319065156},
	}
	x := 0.004644683580340977
	y, ok := curve{Points: pts}.interpolate(x)
	if !ok || y < 6.615187388237564 || y > 33.117892319065156 {
		t.Errorf("interpolate(%v) = %v, %v; want a p99.9 between its neighbours' 6.6 and 33.1 ms", x, y, ok)
	}
}
