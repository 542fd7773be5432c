// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestArrivalsAreSeededAndFollowTheRates(t *testing.T) {
	o := defaultOptions()
	o.before, o.trigger, o.after = 40*time.Second, 20*time.Second, 40*time.Second
	o.triggerRate = 900
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	a, b := o.arrivals(), o.arrivals()
	if !slices.Equal(a, b) {
		t.Fatal("the same seed must give the same arrivals")
	}
	o2 := o
	o2.seed++
	if slices.Equal(a[:100], o2.arrivals()[:100]) {
		t.Fatal("another seed gives the same arrivals")
	}
	if !slices.IsSorted(a) || a[0] < 0 || a[len(a)-1] >= o.total() {
		t.Fatal("arrivals out of order or outside the run")
	}
	// A rate of 0 in a period leaves it empty.
	o3 := o
	o3.triggerRate = 0
	for _, x := range o3.arrivals() {
		if x >= o.before && x < o.before+o.trigger {
			t.Fatalf("an arrival at %s, in the trigger at a rate of 0", x)
		}
	}
	// Each period's count is within 4 standard deviations (√n) of its
	// rate × length.
	count := func(from, to time.Duration) int {
		n := 0
		for _, x := range a {
			if x >= from && x < to {
				n++
			}
		}
		return n
	}
	for _, p := range []struct {
		from, to time.Duration
		rate     float64
	}{{0, 40 * time.Second, 300}, {40 * time.Second, 60 * time.Second, 900}, {60 * time.Second, 100 * time.Second, 300}} {
		want := p.rate * (p.to - p.from).Seconds()
		if got := float64(count(p.from, p.to)); math.Abs(got-want) > 4*math.Sqrt(want) {
			t.Errorf("[%s, %s): %v arrivals, want about %v", p.from, p.to, got, want)
		}
	}
}

// counts in buckets of 100 ms: ops per bucket, all failing before
// failUntil and succeeding from it on.
func mkCounts(n, failUntil, ops int) []counts {
	c := make([]counts, n)
	for i := range c {
		c[i].ops = ops
		if i >= failUntil {
			c[i].ok = ops
		}
	}
	return c
}

func TestRecoveryIsWhenEveryLaterWindowHolds(t *testing.T) {
	const step = 100 * time.Millisecond
	// The after period is buckets 10 to 59 (1 s to 6 s), windows of 1 s.
	for _, c := range []struct {
		name      string
		counts    []counts
		want      float64
		levelWant float64
	}{
		{"never failed", mkCounts(60, 0, 30), 0, 1},
		// A window may hold 10 % of failures: the one at 3.1 s holds one
		// failing bucket of its ten, the one at 3.0 s two.
		{"failing until 3.2 s after", mkCounts(60, 10+32, 30), 3.1, 1},
		{"failing to the end", mkCounts(60, 60, 30), math.Inf(1), 1},
	} {
		if got := recovery(c.counts, step, time.Second, 5*time.Second, time.Second, c.levelWant, 0.9); got != c.want && math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: recovery %v, want %v", c.name, got, c.want)
		}
	}

	// A dip after the first recovery moves it to after the dip: 200 ms
	// failing 3 s after the trigger, so the last window that fails starts
	// at 3.0 s.
	c := mkCounts(60, 15, 30)
	c[40].ok, c[41].ok = 0, 0
	if got := recovery(c, step, time.Second, 5*time.Second, time.Second, 1, 0.9); math.Abs(got-3.1) > 1e-9 {
		t.Errorf("dip at 3 s: recovery %v, want 3.1", got)
	}

	// The arrivals' own noise is not a failure: a window with fewer
	// arrivals, all served, holds, whatever its goodput.
	c = mkCounts(60, 0, 30)
	for i := 20; i < 40; i++ {
		c[i] = counts{ops: 20, ok: 20}
	}
	if got := recovery(c, step, time.Second, 5*time.Second, time.Second, 1, 0.9); got != 0 {
		t.Errorf("fewer arrivals, all served: recovery %v, want 0", got)
	}

	// The share is judged against the level before: 85 % of the operations
	// served holds when 90 % were served before (0.85 ≥ 0.9 × 0.9), not
	// when all were.
	c = mkCounts(60, 0, 20)
	for i := 10; i < 60; i++ {
		c[i].ok = 17
	}
	if got := recovery(c, step, time.Second, 5*time.Second, time.Second, 0.9, 0.9); got != 0 {
		t.Errorf("85 %% after 90 %%: recovery %v, want 0", got)
	}
	if got := recovery(c, step, time.Second, 5*time.Second, time.Second, 1, 0.9); !math.IsInf(got, 1) {
		t.Errorf("85 %% after 100 %%: recovery %v, want none", got)
	}
}

func TestAnalyzeGoodputByArrivalAndTheServersWork(t *testing.T) {
	o := defaultOptions()
	o.before, o.trigger, o.after, o.tail = 2*time.Second, time.Second, 3*time.Second, time.Second
	o.bucket = 500 * time.Millisecond
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	// One operation every 10 ms: 100 a second. All succeed before the
	// trigger, none during it, half after it, all in the last second.
	var r result
	for at := time.Duration(0); at < o.total(); at += 10 * time.Millisecond {
		ok := at < 2*time.Second || (at >= 3*time.Second && (at < 5*time.Second && at%(20*time.Millisecond) == 0 || at >= 5*time.Second))
		r.recs = append(r.recs, opRecord{sched: at, ok: ok})
		r.attempts = append(r.attempts, 2)
	}
	r.attempts[0], r.attempts[1] = 0, 0
	r.served, r.abandoned = 500, 120
	rep := analyze(o, r)
	if rep.before != 100 || rep.during != 0 || math.Abs(rep.after-(100+50+50)/3.0) > 1e-9 || rep.end != 100 {
		t.Errorf("goodput %v/%v/%v/%v, want 100/0/66.7/100", rep.before, rep.during, rep.after, rep.end)
	}
	n := len(r.recs)
	if rep.unsent != 2 || math.Abs(rep.amplification-float64(2*(n-2))/float64(n)) > 1e-9 {
		t.Errorf("unsent %d, amplification %v; want 2 and %v", rep.unsent, rep.amplification, float64(2*(n-2))/float64(n))
	}
	if rep.workS != 5 || rep.abandonedS != 1.2 {
		t.Errorf("work %v s, abandoned %v s; want 5 and 1.2 (10 ms each)", rep.workS, rep.abandonedS)
	}
	// A window of 1 s holds once 90 % of its operations succeed: from the
	// one 1.8 s after the trigger (20 operations half served, then 80 all).
	if math.Abs(rep.recovery-1.8) > 1e-9 {
		t.Errorf("recovery %v, want 1.8", rep.recovery)
	}
	want := []float64{100, 100, 100, 100, 0, 0, 50, 50, 50, 50, 100, 100}
	if !slices.Equal(rep.goodput, want) {
		t.Errorf("goodput series %v, want %v", rep.goodput, want)
	}
	for _, v := range rep.offered {
		if v != 100 {
			t.Fatalf("offered series %v, want 100 throughout", rep.offered)
		}
	}
}
