// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"slices"
	"testing"
)

// Two members of a family that cost the same extra load (the same count of
// requests over the same count of operations) are two points at one x.
// The curve's p99.9 there must not depend on the order the members were
// listed in (-configs, hence the rows): interpolate's own rule for tied
// points is their mean.
func TestPointsTiedAtOneLoadCountAsTheirMean(t *testing.T) {
	o := defaultOptions()
	e := o.env()
	figs := map[string][2]float64{
		"otelretry-d4ms": {0.01, 10},
		"otelretry-d5ms": {0.02, 20},
		"otelretry-d6ms": {0.02, 40},
	}
	fig := func(c string, _ int) (float64, float64) { return figs[c][0], figs[c][1] }
	var got []float64
	for _, order := range [][]string{
		{"otelretry-d4ms", "otelretry-d5ms", "otelretry-d6ms"},
		{"otelretry-d4ms", "otelretry-d6ms", "otelretry-d5ms"},
	} {
		cs := curves(reportOfRows(1, order, fig), e)
		if len(cs) != 1 {
			t.Fatalf("curves: %+v", cs)
		}
		v, ok := cs[0].interpolate(0.02)
		if !ok {
			t.Fatalf("rows %v: 2 %% not within the curve", order)
		}
		got = append(got, v)
	}
	if got[0] != got[1] {
		t.Errorf("p99.9 at 2 %% extra (two members measured there, 20 and 40 ms): %v ms with rows in one order, %v ms in the other; want the same (interpolate's tie rule gives 30)", got[0], got[1])
	}
}

// A point whose extra load is not a number (a repetition with no operation
// in the phase: requests/ops - 1 is NaN, null in hedge.json) is not a
// point of the curve: interpolate says whether x is within the curve's
// range, and 1 % is below this curve's lowest extra load (5 %).
func TestACurveWithANaNPointRefusesLoadsBelowIt(t *testing.T) {
	c := curve{Points: []point{{Extra: num(math.NaN()), P999Ms: 5}, {Extra: 0.05, P999Ms: 10}, {Extra: 0.08, P999Ms: 12}}}
	if v, ok := c.interpolate(0.01); ok {
		t.Errorf("interpolate(1 %%) on a curve spanning 5-8 %% (and a NaN point) = %v, ok; want not ok", v)
	}
}

// The judge counts, at a load, "the reps whose curves both reach it"
// (docs/benchmarks.md, What hedge.json holds). A repetition in which one
// otelretry member has no figure for its extra load (NaN) has a curve of
// one point, at 8 %: it does not reach 2-7 %, so those loads rest on 4
// repetitions and are not judged (5 at least), and no verdict may read an
// interval with a NaN end.
func TestARepetitionWithoutAFigureIsNotJudged(t *testing.T) {
	o := defaultOptions()
	e := o.env()
	own := []float64{0.9, 0.95, 0.92, 0.9, 0.97}
	r := reportOfRows(len(own), []string{"failsafe-d5ms", "failsafe-d7ms", "otelretry-d5ms", "otelretry-d7ms"},
		func(c string, k int) (float64, float64) {
			x, p := 0.02, 12.0
			if c == "failsafe-d5ms" || c == "otelretry-d5ms" {
				x, p = 0.08, 10
			}
			if c == "otelretry-d5ms" || c == "otelretry-d7ms" {
				p *= own[k]
			}
			if c == "otelretry-d7ms" && k == 4 {
				x = math.NaN() // no operation in this repetition's phase
			}
			return x, p
		})
	r.Curves = curves(r, e)
	for _, j := range judgeAtEqualLoad(r, e) {
		nan := slices.ContainsFunc([]num{j.Ratio, j.Lo, j.Hi}, func(n num) bool { return math.IsNaN(float64(n)) })
		if float64(j.Extra) < 0.08-1e-9 || nan {
			t.Errorf("judged at %.0f %% on %d repetitions: x%v [%v-%v] %s; repetition 4's otelretry curve is one point at 8 %%",
				100*float64(j.Extra), j.Reps, float64(j.Ratio), float64(j.Lo), float64(j.Hi), j.Verdict)
		}
	}
}
