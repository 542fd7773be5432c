// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPercentileIsNearestRank(t *testing.T) {
	mk := func(n int) []time.Duration {
		s := make([]time.Duration, n)
		for i := range s {
			s[i] = time.Duration(i+1) * time.Millisecond
		}
		rand.New(rand.NewPCG(1, 1)).Shuffle(n, func(i, j int) { s[i], s[j] = s[j], s[i] })
		slices.Sort(s)
		return s
	}
	for _, c := range []struct {
		n, ppm int
		want   time.Duration // the sample of that rank: rank ms
		above  int
	}{
		{1000, ppmP50, 500 * time.Millisecond, 500},
		{1000, ppmP99, 990 * time.Millisecond, 10},
		{1000, ppmP999, 999 * time.Millisecond, 1},
		{10_000, ppmP999, 9990 * time.Millisecond, 10},
		{9_999, ppmP999, 9990 * time.Millisecond, 9}, // rank ⌈9989.001⌉
		{4_000, ppmP999, 3996 * time.Millisecond, 4},
		{999, ppmP999, 999 * time.Millisecond, 0},
		{1, ppmP50, time.Millisecond, 0},
	} {
		if got := percentile(mk(c.n), c.ppm); got != c.want {
			t.Errorf("n=%d ppm=%d: got %v, want %v", c.n, c.ppm, got, c.want)
		}
		if got := above(c.n, c.ppm); got != c.above {
			t.Errorf("n=%d ppm=%d: %d samples above, want %d", c.n, c.ppm, got, c.above)
		}
	}
	if percentile(nil, ppmP50) != 0 {
		t.Error("no samples: want 0")
	}
}

func TestMedian(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{nan, 5, 1}, 3},
		{[]float64{7}, 7},
	} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(median([]float64{nan})) || !math.IsNaN(median(nil)) {
		t.Error("median of nothing: want NaN")
	}
	in := []float64{3, 1, 2}
	median(in)
	if !slices.Equal(in, []float64{3, 1, 2}) {
		t.Error("median reordered its input")
	}
}

// synthTurn is one turn whose tail phase has ops operations of one latency
// each (so every percentile is that latency), requests server requests and
// busy seconds of service.
func synthTurn(rep int, config string, lat time.Duration, ops, requests int, busy time.Duration) turn {
	phases := make([]phaseStats, 3)
	for i, name := range []string{"warmup", "tail", "brownout"} {
		phases[i] = phaseStats{name: name, ops: 1, requests: 1, busy: time.Second, lat: []time.Duration{time.Millisecond}}
	}
	l := make([]time.Duration, ops)
	for i := range l {
		l[i] = lat
	}
	phases[1] = phaseStats{name: "tail", ops: ops, requests: requests, busy: busy, lat: l}
	return turn{rep: rep, config: config, phases: phases}
}

// The medians are taken over the repetitions, and a ratio is the median of
// the per-repetition ratios to the reference, not the ratio of the medians.
func TestSummarizeTakesMediansOfPairedRatios(t *testing.T) {
	o := defaultOptions()
	o.reps, o.configs = 3, []string{reference, "failsafe-p95"}
	ms := time.Millisecond
	turns := []turn{
		synthTurn(0, reference, 400*ms, 100, 100, 4*time.Second),
		synthTurn(0, "failsafe-p95", 10*ms, 100, 105, 3*time.Second),
		synthTurn(1, "failsafe-p95", 12*ms, 100, 106, 3*time.Second),
		synthTurn(1, reference, 420*ms, 100, 100, 5*time.Second),
		synthTurn(2, reference, 100*ms, 100, 100, 4*time.Second),
		synthTurn(2, "failsafe-p95", 40*ms, 100, 104, 2*time.Second),
	}
	r := summarize(o, o.env(), o.plan(), turns)
	if len(r.Rows) != 6 || r.Rows[0].Phase != "tail" || r.Rows[2].Phase != "brownout" || r.Rows[4].Phase != "warmup" {
		t.Fatalf("rows: want tail, brownout, then warmup, two configurations each; got %d rows", len(r.Rows))
	}
	if !slices.Equal(r.Order, []string{"0:no-hedging", "0:failsafe-p95", "1:failsafe-p95", "1:no-hedging", "2:no-hedging", "2:failsafe-p95"}) {
		t.Errorf("order %v", r.Order)
	}
	ref, fs := r.Rows[0], r.Rows[1]
	if ref.Config != reference || fs.Config != "failsafe-p95" {
		t.Fatalf("tail rows %s, %s", ref.Config, fs.Config)
	}
	// p99.9 per repetition 10/400, 12/420, 40/100: ratios 0.025,
	// 0.02857, 0.4; their median 0.02857, where the ratio of the medians
	// (12/400) would be 0.03.
	near := func(got num, want float64) bool { return math.Abs(float64(got)-want) < 1e-9 }
	if !near(fs.Median.P999Ms, 12) || !near(fs.Ratio.P999, 12.0/420) || !near(fs.Ratio.P50, 12.0/420) {
		t.Errorf("p99.9: median %v ms, ratio %v; want 12 and %v", fs.Median.P999Ms, fs.Ratio.P999, 12.0/420)
	}
	if !near(fs.P999Lo, 10) || !near(fs.P999Hi, 40) {
		t.Errorf("p99.9 range %v-%v, want 10-40", fs.P999Lo, fs.P999Hi)
	}
	// Extra 0.05, 0.06, 0.04: median 0.05; requests ratio 1.05.
	if !near(fs.Median.Extra, 0.05) || !near(fs.Ratio.Requests, 1.05) || !near(ref.Median.Extra, 0) {
		t.Errorf("extra %v (reference %v), requests ratio %v; want 0.05, 0, 1.05", fs.Median.Extra, ref.Median.Extra, fs.Ratio.Requests)
	}
	// Busy 3/4, 3/5, 2/4: median 0.6.
	if !near(fs.Median.BusyS, 3) || !near(fs.Ratio.Busy, 0.6) {
		t.Errorf("busy %v s, ratio %v; want 3 and 0.6", fs.Median.BusyS, fs.Ratio.Busy)
	}
	if !near(ref.Ratio.P999, 1) || !near(ref.Median.P999Above, 0) {
		t.Errorf("the reference against itself: %v, samples above p99.9 %v", ref.Ratio.P999, ref.Median.P999Above)
	}
}

// A ratio to nothing is not a number: "-" in the table, null in JSON.
func TestRatioToZeroIsNull(t *testing.T) {
	o := defaultOptions()
	o.reps, o.configs = 1, []string{reference, "failsafe-p95"}
	turns := []turn{
		synthTurn(0, reference, 0, 0, 0, 0),
		synthTurn(0, "failsafe-p95", time.Millisecond, 1, 2, time.Second),
	}
	r := summarize(o, o.env(), o.plan(), turns)
	if !math.IsNaN(float64(r.Rows[1].Ratio.P50)) || !math.IsNaN(float64(r.Rows[1].Ratio.Requests)) {
		t.Fatalf("ratios to zero: %+v", r.Rows[1].Ratio)
	}
	path := filepath.Join(t.TempDir(), "hedge.json")
	if err := writeJSON(path, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Rows []struct {
			Ratio map[string]*float64 `json:"ratio"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Rows[1].Ratio["p50"] != nil || back.Rows[1].Ratio["requests"] != nil {
		t.Errorf("want null ratios, got %v", back.Rows[1].Ratio)
	}
}

func TestSlowerThanCountsStrictlyAbove(t *testing.T) {
	ms := time.Millisecond
	s := []time.Duration{1 * ms, 2 * ms, 2 * ms, 3 * ms, 5 * ms}
	for _, c := range []struct {
		d    time.Duration
		want float64
	}{{0, 1}, {2 * ms, 0.4}, {2*ms + 1, 0.4}, {4 * ms, 0.2}, {5 * ms, 0}} {
		if got := slowerThan(s, c.d); got != c.want {
			t.Errorf("slower than %v: %v, want %v", c.d, got, c.want)
		}
	}
	if !math.IsNaN(slowerThan(nil, ms)) {
		t.Error("no samples: want NaN")
	}
}

// hedge_after_ms is the median gap over the operations that sent a second
// request, null when none did; p95_ms is the nearest-rank p95.
func TestFiguresOfHedgeAfterAndP95(t *testing.T) {
	ms := time.Millisecond
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(i+1) * ms
	}
	f := figuresOf(phaseStats{ops: 100, requests: 103, lat: lat, hedgeAfter: []time.Duration{5 * ms, 6 * ms, 9 * ms}}, 5*ms)
	if f.HedgeAfterMs != 6 || f.P95Ms != 95 {
		t.Errorf("hedge after %v ms, p95 %v ms; want 6 and 95", f.HedgeAfterMs, f.P95Ms)
	}
	if f := figuresOf(phaseStats{ops: 100, requests: 100, lat: lat}, 5*ms); !math.IsNaN(float64(f.HedgeAfterMs)) {
		t.Errorf("no hedge: hedge after %v, want NaN", f.HedgeAfterMs)
	}
}
