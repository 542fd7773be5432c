// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package paired judges a ratio target on paired runs: runs that each
// measured both sides, so that a slow spell of the machine lands on both
// sides of a run's ratio instead of on one side's median. The ratio is
// the median of the per-run ratios, its interval a percentile bootstrap
// over the runs, and a target is met (ok) only when the whole interval
// meets it, missed (MISS) when none of it does, and EDGE when the runs
// cannot tell. compare.sh's cmd/ratios and the hedging sweep judge their
// targets with it.
package paired

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Ratio is the median of x[i]/y[i]: x and y hold one value per run, in
// run order. ok is false unless both have the same, non-zero number of
// runs, every x is a finite number at or above zero and every y a finite
// number above zero: a run with a value that is no measurement (NaN, as a
// figure read back from null) has no ratio, and sorting would put it
// anywhere.
func Ratio(x, y []float64) (r float64, ok bool) {
	if len(x) == 0 || len(x) != len(y) {
		return 0, false
	}
	q := make([]float64, len(x))
	for i := range x {
		if !measured(x[i]) || !measured(y[i]) || y[i] == 0 {
			return 0, false
		}
		q[i] = x[i] / y[i]
	}
	return Median(q), true
}

// measured reports whether v may be a run's figure: finite, not below 0.
func measured(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// MinRuns is the fewest runs an interval is drawn from. Fewer cannot
// tell a target either way: from 3 runs the bootstrap interval is their
// range (a resample's median is the least run's with probability 7/27,
// above the 2.5 % cut), which holds the true median only 75 % of the
// time, where a 95 % interval promises 95; from 5 it holds it about 94 %
// of the time, as from 12 (TestIntervalCoverage).
const MinRuns = 5

// Interval is a 95 % percentile bootstrap interval of Ratio(x, y): the
// runs are resampled with replacement (a run's pair of values stays
// together) and the median of the per-run ratios taken each time. The
// seed is fixed, so the same input gives the same interval. ok is false
// where Ratio's is, and for fewer than MinRuns runs.
func Interval(x, y []float64) (lo, hi float64, ok bool) {
	if _, ok := Ratio(x, y); !ok || len(x) < MinRuns {
		return 0, 0, false
	}
	const resamples = 2000
	rng := rand.New(rand.NewPCG(1, 2))
	n := len(x)
	meds := make([]float64, resamples)
	q := make([]float64, n)
	for i := range meds {
		for j := range q {
			k := rng.IntN(n)
			q[j] = x[k] / y[k]
		}
		meds[i] = Median(q)
	}
	slices.Sort(meds)
	return meds[resamples*25/1000], meds[resamples*975/1000-1], true
}

// Median of a non-empty v, which it leaves unchanged.
func Median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// Bound is a ratio target: at most a limit, or (strict) below it.
type Bound struct {
	limit  float64
	strict bool
}

// AtMost is the target "ratio <= r".
func AtMost(r float64) Bound { return Bound{limit: r} }

// Below is the target "ratio < r".
func Below(r float64) Bound { return Bound{limit: r, strict: true} }

// Meets reports whether the ratio r meets the target.
func (b Bound) Meets(r float64) bool {
	if b.strict {
		return r < b.limit
	}
	return r <= b.limit
}

// Verdict judges the target on an interval of the ratio: "ok" when all of
// it meets the bound, "MISS" when none of it does, "EDGE" otherwise (the
// runs are too noisy, or the code too close to the bound, to tell).
func (b Bound) Verdict(lo, hi float64) string {
	switch {
	case b.Meets(hi):
		return "ok"
	case !b.Meets(lo):
		return "MISS"
	}
	return "EDGE"
}
