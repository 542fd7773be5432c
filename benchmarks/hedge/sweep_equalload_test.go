// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"strings"
	"testing"
)

// extraOf is the extra load as the benchmark computes it (report.go:
// requests / ops - 1).
func extraOf(requests, ops int) float64 {
	return ratio(float64(requests), float64(ops)) - 1
}

// Both families measured at exactly 1 % and 5 % extra (10,100 and 10,500
// requests for 10,000 operations) in every repetition: 1 % is within both
// curves' ranges, so the judge judges 1..5 % (5 loads), and the comparison
// at equal load includes the shared measured point 1 %. The load computed
// as requests/ops - 1 sat a rounding error above 1 %, which fell outside
// (a reviewer's find).
func TestAWholePercentMeasuredExactlyIsJudged(t *testing.T) {
	o := defaultOptions()
	e := o.env()
	r := sweepReport(5, func(c string, k int) (float64, float64) {
		x, p := extraOf(10100, 10000), 12.0
		if strings.HasSuffix(c, "d5ms") {
			x, p = extraOf(10500, 10000), 10
		}
		if strings.HasPrefix(c, "otelretry") {
			p *= 1.2 // above failsafe-go in every repetition: MISS everywhere
		}
		return x, p
	})
	r.Curves = curves(r, e)
	js := judgeAtEqualLoad(r, e)
	var loads []float64
	for _, j := range js {
		loads = append(loads, math.Round(100*float64(j.Extra)))
	}
	if len(js) != 5 {
		t.Errorf("judged loads (%%): %v, want 1 2 3 4 5 (both curves span %.17g-%.17g)", loads,
			r.Curves[0].Points[0].Extra, r.Curves[0].Points[1].Extra)
	}
	eq := compareAtEqualLoad(r.Curves)
	found := false
	for _, x := range eq {
		if math.Abs(float64(x.Extra)-0.01) < 1e-9 {
			found = true
		}
	}
	if !found {
		t.Errorf("equal load: no comparison at 1 %%, a point both curves measured; got %d loads", len(eq))
	}
}

// A repetition whose figure is no measurement (a negative p99.9 in a
// crafted hedge.json) makes paired.Ratio and paired.Interval refuse
// (ok false); the judge gives no verdict there (it said "ok" on an
// interval of 0-0: a reviewer's find).
func TestTheJudgeGivesNoVerdictWithoutARatio(t *testing.T) {
	o := defaultOptions()
	e := o.env()
	r := sweepReport(5, func(c string, k int) (float64, float64) {
		x, p := 0.02, 12.0
		if strings.HasSuffix(c, "d5ms") {
			x, p = 0.08, 10
		}
		if strings.HasPrefix(c, "otelretry") && k == 0 {
			p = -1
		}
		return x, p
	})
	r.Curves = curves(r, e)
	for _, j := range judgeAtEqualLoad(r, e) {
		if j.Verdict == "ok" && j.Lo == 0 && j.Hi == 0 {
			t.Errorf("at %.0f %%: %s x%v [%v-%v] over %d repetitions, from a Ratio that was refused", 100*float64(j.Extra), j.Verdict, j.Ratio, j.Lo, j.Hi, j.Reps)
			break
		}
	}
}
