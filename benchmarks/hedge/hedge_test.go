// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestInterleaveRotatesEveryRepetition(t *testing.T) {
	got := interleave(3, 3)
	want := []slot{{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {1, 0}, {2, 2}, {2, 0}, {2, 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// Every configuration once per repetition, with more configurations
	// than repetitions too.
	for _, c := range []struct{ reps, configs int }{{2, 5}, {4, 3}} {
		seen := map[slot]int{}
		for i, s := range interleave(c.reps, c.configs) {
			if s.rep != i/c.configs {
				t.Fatalf("%v: turn %d in repetition %d", c, i, s.rep)
			}
			seen[s]++
		}
		if len(seen) != c.reps*c.configs {
			t.Errorf("%v: %d distinct turns, want %d", c, len(seen), c.reps*c.configs)
		}
	}
}

func TestPoissonArrivals(t *testing.T) {
	const n = 200_000
	a, b := poisson(1000, 1, n), poisson(1000, 1, n)
	if len(a) != n || !slices.Equal(a, b) {
		t.Fatal("the same seed must give the same arrivals, exactly n of them")
	}
	if slices.Equal(a[:100], poisson(1000, 2, 100)) {
		t.Fatal("another seed gives the same arrivals")
	}
	if !slices.IsSorted(a) || a[0] < 0 {
		t.Fatal("arrivals out of order")
	}
	// The mean gap of 200,000 exponential gaps is within 1 % of 1 ms
	// (σ ≈ 0.22 %), and their spread is an exponential's (sd = mean).
	mean := float64(a[n-1]) / n
	if math.Abs(mean-1e6) > 1e4 {
		t.Errorf("mean gap %.0f ns, want 1 ms", mean)
	}
	var ss float64
	prev := time.Duration(0)
	for _, x := range a {
		g := float64(x - prev)
		ss += (g - mean) * (g - mean)
		prev = x
	}
	if sd := math.Sqrt(ss / n); math.Abs(sd-mean) > 0.02*mean {
		t.Errorf("gap sd %.0f ns, mean %.0f ns: not exponential", sd, mean)
	}
}

// The default plan: a warm-up, 10,000 tail operations (10 samples above
// p99.9), then the brownout, every request stalled.
func TestDefaultPlan(t *testing.T) {
	o := defaultOptions()
	p := o.plan()
	var names []string
	for _, ph := range p {
		names = append(names, fmt.Sprintf("%s:%d", ph.name, ph.ops))
	}
	if !slices.Equal(names, []string{"warmup:2000", "tail:10000", "brownout:4000"}) {
		t.Fatalf("phases %v", names)
	}
	if p[1].dist != o.service || p[0].dist != o.service || p[2].dist.stallProb != 1 || p[2].dist.fastMin != o.service.fastMin {
		t.Errorf("distributions %+v", p)
	}
	if above(p[1].ops, ppmP999) != 10 {
		t.Errorf("p99.9 of the tail phase rests on %d samples, want 10", above(p[1].ops, ppmP999))
	}
	// The tail phase's p99 stays among the fast answers: the 1 % of
	// samples above it outnumber the stalls by at least 3σ.
	n, s := float64(p[1].ops), o.service.stallProb
	if z := (float64(above(p[1].ops, ppmP99)) - n*s) / math.Sqrt(n*s*(1-s)); z < 3 {
		t.Errorf("the p99 of the tail phase is %.1fσ from the stalls' edge, want at least 3", z)
	}
	if e := o.env(); e.hedgeDelay != o.service.quantile(0.95) || e.budgetShare != 0.05 || e.deadline != 2*time.Second {
		t.Errorf("env %+v", e)
	}
}

func TestNormalizeRunsTheReference(t *testing.T) {
	o := defaultOptions()
	o.configs = []string{"failsafe-p95"}
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.configs, []string{reference, "failsafe-p95"}) {
		t.Errorf("configs %v", o.configs)
	}
	o.configs = []string{"nonesuch"}
	if err := o.normalize(); err == nil {
		t.Error("an unknown configuration must be refused")
	}
}

// TestSmoke runs the whole benchmark in smoke mode (a few seconds) and
// checks what holds whatever the timing: every turn ran in the interleaved
// order, every phase counts its operations, every answered operation
// reached the server, the reference sent no extra request, and in the
// brownout (every request slower than the hedge delay) failsafe-go without
// a budget hedged most operations and with one far fewer, and otelretry
// hedged no more than its hedge rate allows.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every configuration twice, about a second each")
	}
	o := defaultOptions()
	o.smoke()
	o.jsonPath = filepath.Join(t.TempDir(), "hedge.json")
	var out bytes.Buffer
	r, err := run(o, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())

	var want []string
	for _, s := range interleave(o.reps, len(o.configs)) {
		want = append(want, fmt.Sprintf("%d:%s", s.rep, o.configs[s.config]))
	}
	if !slices.Equal(r.Order, want) {
		t.Errorf("order %v, want %v", r.Order, want)
	}
	if len(r.Rows) != 3*len(o.configs) {
		t.Fatalf("%d rows, want %d", len(r.Rows), 3*len(o.configs))
	}
	ops := map[string]int{"warmup": o.warmup, "tail": o.tail, "brownout": o.brownout}
	extra := map[string]float64{}
	for _, rw := range r.Rows {
		for _, rep := range rw.Reps {
			f := rep.Figures
			if int(f.Ops) != ops[rw.Phase] || f.Dropped != 0 {
				t.Errorf("%s/%s rep %d: %v operations, %v dropped; want %d and 0", rw.Config, rw.Phase, rep.Rep, f.Ops, f.Dropped, ops[rw.Phase])
			}
			if f.Requests < f.Ops-f.Failed {
				t.Errorf("%s/%s rep %d: %v requests for %v answered operations", rw.Config, rw.Phase, rep.Rep, f.Requests, f.Ops-f.Failed)
			}
			if f.P50Ms > f.P99Ms || f.P99Ms > f.P999Ms || f.P50Ms <= 0 {
				t.Errorf("%s/%s rep %d: percentiles %v %v %v", rw.Config, rw.Phase, rep.Rep, f.P50Ms, f.P99Ms, f.P999Ms)
			}
			if f.BusyS <= 0 {
				t.Errorf("%s/%s rep %d: no busy time", rw.Config, rw.Phase, rep.Rep)
			}
		}
		if rw.Config == reference && (rw.Median.Requests > rw.Median.Ops || rw.Ratio.P999 != 1) {
			t.Errorf("%s/%s: %v requests for %v operations, ratio to itself %v", rw.Config, rw.Phase, rw.Median.Requests, rw.Median.Ops, rw.Ratio.P999)
		}
		if rw.Phase == "brownout" {
			extra[rw.Config] = float64(rw.Median.Extra)
		}
	}
	if extra["failsafe-p95"] < 0.5 || extra["failsafe-p95-budget"] >= 0.5 {
		t.Errorf("brownout extra requests: failsafe-p95 %v (want ≥ 0.5), with its budget %v (want < 0.5)", extra["failsafe-p95"], extra["failsafe-p95-budget"])
	}
	// otelretry's hedge rate, a count whatever the timing: over a turn,
	// at most its burst (a hundred operations' worth, at least one) plus
	// the share of the operations begun. Every answer is a 200, so an
	// extra request is a hedge unless an operation failed.
	type turnKey struct {
		config string
		rep    int
	}
	sent, begun, failed := map[turnKey]float64{}, map[turnKey]float64{}, map[turnKey]float64{}
	for _, rw := range r.Rows {
		for _, rep := range rw.Reps {
			k := turnKey{rw.Config, rep.Rep}
			sent[k] += float64(rep.Figures.Requests)
			begun[k] += float64(rep.Figures.Ops)
			failed[k] += float64(rep.Figures.Failed)
		}
	}
	for _, c := range otelretryConfigs {
		if !slices.Contains(o.configs, c.name) {
			t.Errorf("the smoke run left out %s", c.name)
		}
		for rep := range o.reps {
			k := turnKey{c.name, rep}
			limit := max(1, 100*o.budgetShare) + o.budgetShare*begun[k]
			if hedges := sent[k] - begun[k]; failed[k] == 0 && hedges > limit {
				t.Errorf("%s rep %d: %v extra requests for %v operations, over the hedge rate's %v", c.name, rep, hedges, begun[k], limit)
			}
		}
	}

	b, err := os.ReadFile(o.jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	if rows, _ := generic["rows"].([]any); len(rows) != len(r.Rows) || generic["true_p95_ms"] != float64(r.TrueP95Ms) {
		t.Errorf("JSON holds %d rows and p95 %v, want %d and %v", len(rows), generic["true_p95_ms"], len(r.Rows), r.TrueP95Ms)
	}
}

// TestSweepSmoke runs a small sweep in smoke mode: every member's curve
// point in both judged phases, the comparison at equal extra load where the
// curves meet, the plot, and otelretry's members within their own rates.
func TestSweepSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four configurations twice, about a second each")
	}
	o := defaultOptions()
	o.smoke()
	o.configs = []string{reference, "failsafe-d5ms", "otelretry-d5ms", "otelretry-q0.9"}
	o.plotPath = filepath.Join(t.TempDir(), "sweep.svg")
	var out bytes.Buffer
	r, err := run(o, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	var got []string
	for _, c := range r.Curves {
		got = append(got, fmt.Sprintf("%s/%s:%d", c.Phase, c.Family, len(c.Points)))
	}
	if want := []string{"tail/failsafe-d:1", "tail/otelretry-d:1", "tail/otelretry-q:1", "brownout/failsafe-d:1", "brownout/otelretry-d:1", "brownout/otelretry-q:1"}; !slices.Equal(got, want) {
		t.Errorf("curves %v, want %v", got, want)
	}
	for _, e := range r.EqualLoad {
		if isPeer(e.Family) || !isPeer(e.Peer) || !(e.Ratio > 0) {
			t.Errorf("comparison %+v", e)
		}
	}
	if b, err := os.ReadFile(o.plotPath); err != nil || !bytes.Contains(b, []byte("<polyline")) {
		t.Errorf("no plot: %v", err)
	}
	if !strings.Contains(out.String(), "at equal extra load") {
		t.Error("the table has no comparison at equal extra load")
	}
	// Each otelretry member's hedges within its own rate, over the turn.
	e := o.env()
	for _, name := range o.configs[2:] {
		f, p, _ := familyOf(name)
		rate := f.rate(p, e)
		for rep := range o.reps {
			var sent, begun, failed float64
			for _, rw := range r.Rows {
				if rw.Config != name {
					continue
				}
				for _, rf := range rw.Reps {
					if rf.Rep == rep {
						sent, begun, failed = sent+float64(rf.Figures.Requests), begun+float64(rf.Figures.Ops), failed+float64(rf.Figures.Failed)
					}
				}
			}
			if limit := max(1, 100*rate) + rate*begun; failed == 0 && sent-begun > limit {
				t.Errorf("%s rep %d: %v extra requests for %v operations, over its rate's %v", name, rep, sent-begun, begun, limit)
			}
		}
	}
}
