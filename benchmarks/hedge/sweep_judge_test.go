// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"strings"
	"testing"
)

// knownReport: two members per family at 1 % and 10 % extra, otelretry's
// p99.9 given by own(x, rep), failsafe-go's by peer(x, rep).
func knownReport(reps int, own, peer func(x float64, k int) float64) *report {
	return sweepReport(reps, func(c string, k int) (float64, float64) {
		x := 0.01
		if strings.HasSuffix(c, "d5ms") {
			x = 0.10
		}
		if strings.HasPrefix(c, "otelretry") {
			return x, own(x, k)
		}
		return x, peer(x, k)
	})
}

// verdicts judges r at each whole percent of extra load.
func verdicts(t *testing.T, r *report) map[int]judgedLoad {
	t.Helper()
	o := defaultOptions()
	e := o.env()
	r.Curves = curves(r, e)
	out := map[int]judgedLoad{}
	for _, j := range judgeAtEqualLoad(r, e) {
		out[int(math.Round(100*float64(j.Extra)))] = j
	}
	return out
}

// noise is each repetition's factor on both sides: a slow spell lands on
// both of a repetition's curves.
var noise = []float64{1.0, 1.3, 0.8, 1.1, 0.9, 1.2, 0.95}

// The judge gives the verdict the synthetic sweep holds: ok where
// otelretry's p99.9 is half failsafe-go's, MISS at twice, EDGE within
// noise, and both where the curves cross (a reviewer's run: 80 verdicts).
func TestTheJudgeGivesKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		name string
		own  func(x float64, k int) float64
		want func(pct int) string
	}{
		{"clearly below", func(x float64, k int) float64 { return 5 * noise[k] }, func(int) string { return "ok" }},
		{"clearly above", func(x float64, k int) float64 { return 20 * noise[k] }, func(int) string { return "MISS" }},
		{"equal within noise", func(x float64, k int) float64 {
			return 10 * noise[k] * []float64{0.97, 1.03, 1.01, 0.99, 1.02, 0.98, 1}[k]
		}, func(int) string { return "EDGE" }},
		// own rises 6 -> 14 over 1..10 %, peer flat 10: they cross at 5.5 %.
		{"crossing", func(x float64, k int) float64 { return (6 + 8*(x-0.01)/0.09) * noise[k] }, func(p int) string {
			if p <= 5 {
				return "ok"
			}
			return "MISS"
		}},
	} {
		for _, reps := range []int{5, 7} {
			js := verdicts(t, knownReport(reps, tc.own, func(x float64, k int) float64 { return 10 * noise[k] }))
			for pct := 1; pct <= 10; pct++ {
				j, ok := js[pct]
				if !ok {
					t.Errorf("%s, %d reps: %d %% not judged", tc.name, reps, pct)
					continue
				}
				if j.Verdict != tc.want(pct) {
					t.Errorf("%s, %d reps: %d %%: %s x%.3f [%.3f-%.3f], want %s", tc.name, reps, pct, j.Verdict, j.Ratio, j.Lo, j.Hi, tc.want(pct))
				}
			}
		}
	}
}

// Two points a rounding error apart are one load (loadTolerance), and
// points at one load count as their mean (interpolate's doc); only points
// exactly equal were averaged (a reviewer's find).
func TestPointsWithinToleranceCountAsTheirMean(t *testing.T) {
	o := defaultOptions()
	e := o.env()
	cs := curves(reportOfRows(1, []string{"otelretry-d4ms", "otelretry-d5ms", "otelretry-d6ms"}, func(c string, _ int) (float64, float64) {
		switch c {
		case "otelretry-d4ms":
			return 0.01, 10
		case "otelretry-d5ms":
			return 0.03, 10
		}
		return extraOf(10300, 10000), 20 // 0.030000000000000027: 0.03 to a rounding error
	}), e)
	v, ok := cs[0].interpolate(0.03)
	if !ok || v != 15 {
		t.Errorf("p99.9 at 3 %% = %v, %v; want 15, the mean of the two points at 3 %% (10 and 20)", v, ok)
	}
}

// A phase without latency samples has no p99.9 (NaN, null in hedge.json),
// not one of 0 ms, which the judge took for the best: ok at every load (a
// reviewer's find).
func TestAPhaseWithoutSamplesHasNoLatency(t *testing.T) {
	f := figuresOf(phaseStats{}, 0)
	for name, v := range map[string]num{"p50": f.P50Ms, "p95": f.P95Ms, "p99": f.P99Ms, "p99.9": f.P999Ms} {
		if !math.IsNaN(float64(v)) {
			t.Errorf("%s of no samples = %v, want NaN", name, v)
		}
	}
}
