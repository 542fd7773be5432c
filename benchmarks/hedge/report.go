// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"time"
)

// phaseStats sums the operations of one phase in one turn.
type phaseStats struct {
	name            string
	ops, requests   int
	failed, dropped int
	busy            time.Duration
	lat             []time.Duration // sorted; dropped operations have none
	// hedgeAfter, sorted, holds for each operation with a second request
	// how long after its first that request reached the server.
	hedgeAfter []time.Duration
	// stalls counts the operations whose first request stalled, unhedged
	// those of them that sent no second request: they keep their stall.
	stalls, unhedged int
}

// The percentiles reported, in parts per million so that ranks are exact
// integers (0.999 has no exact float).
const (
	ppmP50  = 500_000
	ppmP95  = 950_000
	ppmP99  = 990_000
	ppmP999 = 999_000
)

// rank is the 1-based nearest rank of the ppm-quantile among n samples:
// the smallest r with r ≥ n·ppm/10⁶.
func rank(n, ppm int) int { return (n*ppm + 999_999) / 1_000_000 }

// above is how many of n samples rank above the ppm-quantile: what the
// percentile rests on.
func above(n, ppm int) int { return n - rank(n, ppm) }

// percentile is the nearest-rank ppm-quantile of sorted samples (0 when
// there are none): exact, no interpolation.
func percentile(sorted []time.Duration, ppm int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[max(rank(len(sorted), ppm), 1)-1]
}

// ratio is a/b, NaN when b is 0 (printed "-", null in JSON).
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// median of the values that are not NaN (the mean of the middle two for
// an even count); NaN when there are none.
func median(xs []float64) float64 {
	v := slices.DeleteFunc(slices.Clone(xs), math.IsNaN)
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// num is a float that encodes NaN as JSON null.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// UnmarshalJSON reads null as NaN, so that a saved report reads back.
func (n *num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = num(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*n = num(f)
	return err
}

// figures are one configuration's figures in one phase: of one
// repetition, or their medians.
type figures struct {
	Ops       num `json:"ops"`
	Requests  num `json:"requests"`
	Failed    num `json:"failed"`  // not 200 within the deadline
	Dropped   num `json:"dropped"` // never started (in-flight cap)
	P50Ms     num `json:"p50_ms"`
	P95Ms     num `json:"p95_ms"`
	P99Ms     num `json:"p99_ms"`
	P999Ms    num `json:"p999_ms"`
	P999Above num `json:"p999_above"` // samples ranked above p99.9
	Extra     num `json:"extra"`      // requests / ops - 1
	BusyS     num `json:"busy_s"`     // service time the server spent
	// OverDelay is the share of operations slower than the hedge delay:
	// under no-hedging, the share a hedge at that delay would be sent for
	// (more than 5 %: the client's own time adds to the server's).
	OverDelay num `json:"over_delay"`
	// HedgeAfterMs is the median, over the operations that sent a second
	// request, of the time from the arrival of the first at the server to
	// the arrival of the second: the hedge delay in effect, adaptive or
	// not (null when no operation sent one).
	HedgeAfterMs num `json:"hedge_after_ms"`
	// Stalls counts the operations whose first request stalled; Unhedged
	// those of them that sent no second request, which keep their stall
	// (p99.9 is a stall when they outnumber the samples above it).
	Stalls   num `json:"stalls"`
	Unhedged num `json:"unhedged_stalls"`
}

// ratios are figures over the reference's in the same repetition and
// phase (server requests rather than the extra share, which is 0 for the
// reference).
type ratios struct {
	P50      num `json:"p50"`
	P99      num `json:"p99"`
	P999     num `json:"p999"`
	Requests num `json:"requests"`
	Busy     num `json:"busy"`
}

// slowerThan is the share of the sorted samples above d.
func slowerThan(sorted []time.Duration, d time.Duration) float64 {
	i, found := slices.BinarySearch(sorted, d)
	for found && i < len(sorted) && sorted[i] == d {
		i++
	}
	return ratio(float64(len(sorted)-i), float64(len(sorted)))
}

func figuresOf(s phaseStats, hedgeDelay time.Duration) figures {
	hedgeAfter := math.NaN()
	if len(s.hedgeAfter) > 0 {
		hedgeAfter = ms(percentile(s.hedgeAfter, ppmP50))
	}
	return figures{
		OverDelay:    num(slowerThan(s.lat, hedgeDelay)),
		HedgeAfterMs: num(hedgeAfter),
		Stalls:       num(s.stalls),
		Unhedged:     num(s.unhedged),
		Ops:          num(s.ops),
		Requests:     num(s.requests),
		Failed:       num(s.failed),
		Dropped:      num(s.dropped),
		P50Ms:        num(latencyMs(s.lat, ppmP50)),
		P95Ms:        num(latencyMs(s.lat, ppmP95)),
		P99Ms:        num(latencyMs(s.lat, ppmP99)),
		P999Ms:       num(latencyMs(s.lat, ppmP999)),
		P999Above:    num(above(len(s.lat), ppmP999)),
		Extra:        num(ratio(float64(s.requests), float64(s.ops)) - 1),
		BusyS:        num(s.busy.Seconds()),
	}
}

func ratiosOf(f, ref figures) ratios {
	return ratios{
		P50:      num(ratio(float64(f.P50Ms), float64(ref.P50Ms))),
		P99:      num(ratio(float64(f.P99Ms), float64(ref.P99Ms))),
		P999:     num(ratio(float64(f.P999Ms), float64(ref.P999Ms))),
		Requests: num(ratio(float64(f.Requests), float64(ref.Requests))),
		Busy:     num(ratio(float64(f.BusyS), float64(ref.BusyS))),
	}
}

// medianBy is the median over the repetitions of one field.
func medianBy[T any](xs []T, field func(T) num) num {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = float64(field(x))
	}
	return num(median(v))
}

func medianFigures(fs []figures) figures {
	return figures{
		Ops:          medianBy(fs, func(f figures) num { return f.Ops }),
		Requests:     medianBy(fs, func(f figures) num { return f.Requests }),
		Failed:       medianBy(fs, func(f figures) num { return f.Failed }),
		Dropped:      medianBy(fs, func(f figures) num { return f.Dropped }),
		P50Ms:        medianBy(fs, func(f figures) num { return f.P50Ms }),
		P95Ms:        medianBy(fs, func(f figures) num { return f.P95Ms }),
		P99Ms:        medianBy(fs, func(f figures) num { return f.P99Ms }),
		P999Ms:       medianBy(fs, func(f figures) num { return f.P999Ms }),
		P999Above:    medianBy(fs, func(f figures) num { return f.P999Above }),
		Extra:        medianBy(fs, func(f figures) num { return f.Extra }),
		BusyS:        medianBy(fs, func(f figures) num { return f.BusyS }),
		OverDelay:    medianBy(fs, func(f figures) num { return f.OverDelay }),
		HedgeAfterMs: medianBy(fs, func(f figures) num { return f.HedgeAfterMs }),
		Stalls:       medianBy(fs, func(f figures) num { return f.Stalls }),
		Unhedged:     medianBy(fs, func(f figures) num { return f.Unhedged }),
	}
}

func medianRatios(rs []ratios) ratios {
	return ratios{
		P50:      medianBy(rs, func(r ratios) num { return r.P50 }),
		P99:      medianBy(rs, func(r ratios) num { return r.P99 }),
		P999:     medianBy(rs, func(r ratios) num { return r.P999 }),
		Requests: medianBy(rs, func(r ratios) num { return r.Requests }),
		Busy:     medianBy(rs, func(r ratios) num { return r.Busy }),
	}
}

// turnFigures are what one turn cost the process, whatever the phase.
type turnFigures struct {
	Dials    num `json:"dials"`      // connections the client opened
	CPUS     num `json:"cpu_s"`      // user and system time of the process (client and server)
	MaxLagMs num `json:"max_lag_ms"` // the load generator's worst lag behind its schedule
}

// repFigures is one repetition's figures and ratios.
type repFigures struct {
	Rep     int     `json:"rep"`
	Figures figures `json:"figures"`
	Ratios  ratios  `json:"ratios"`
}

// row is one configuration in one phase: the medians over the
// repetitions (a ratio is the median of the per-repetition ratios), and
// each repetition's own.
type row struct {
	Config string       `json:"config"`
	Phase  string       `json:"phase"`
	Median figures      `json:"median"`
	Ratio  ratios       `json:"ratio"`
	P999Lo num          `json:"p999_ms_min"`
	P999Hi num          `json:"p999_ms_max"`
	Reps   []repFigures `json:"reps"`
}

type serviceJSON struct {
	FastMinMs   num `json:"fast_min_ms"`
	FastMeanMs  num `json:"fast_mean_ms"`
	StallProb   num `json:"stall_prob"`
	StallFactor num `json:"stall_factor"`
}

type phaseJSON struct {
	Name string `json:"name"`
	Ops  int    `json:"ops"`
}

// report is the whole run, as the table shows it and -json writes it.
type report struct {
	Benchmark    string      `json:"benchmark"`
	Rate         int         `json:"rate"`
	Seed         uint64      `json:"seed"`
	Reps         int         `json:"reps"`
	DeadlineMs   num         `json:"deadline_ms"`
	Service      serviceJSON `json:"service"`
	TrueP95Ms    num         `json:"true_p95_ms"`
	TrueP999Ms   num         `json:"true_p999_ms"`
	HedgeDelayMs num         `json:"hedge_delay_ms"`
	BudgetShare  num         `json:"budget_share"`
	Configs      []string    `json:"configs"`
	Phases       []phaseJSON `json:"phases"`
	Order        []string    `json:"order"` // the turns as they ran: rep:config
	GOMAXPROCS   int         `json:"gomaxprocs"`
	GoVersion    string      `json:"go_version"`
	LoadavgStart string      `json:"loadavg_start"`
	LoadavgEnd   string      `json:"loadavg_end"`
	Warnings     []string    `json:"warnings"`
	// Turns is, per configuration, the medians over the repetitions of
	// what its whole turn cost the process.
	Turns map[string]turnFigures `json:"turns"`
	Rows  []row                  `json:"rows"` // phase by phase: tail, brownout, warmup
	// Curves and EqualLoad are the sweep's (issue 44): each swept
	// family's p99.9 against extra requests, per judged phase, and each
	// family against failsafe-go's at equal extra load. Empty when no
	// swept configuration ran.
	Curves    []curve     `json:"curves"`
	EqualLoad []equalLoad `json:"equal_load"`
	// Judged is the target judged on the repetitions (see judgedLoad).
	Judged []judgedLoad `json:"judged"`
}

// maxLag is the arrival lag above which a turn is flagged: the load
// generator could not keep its schedule, so the process was starved of CPU.
const maxLag = 20 * time.Millisecond

// summarize takes the turns (in the order they ran) to the report's rows:
// for each phase and configuration, the medians over the repetitions and
// the medians of the ratios to the reference of the same repetition.
func summarize(o options, e env, p plan, turns []turn) *report {
	r := &report{
		Benchmark:    "hedge",
		Rate:         o.rate,
		Seed:         o.seed,
		Reps:         o.reps,
		DeadlineMs:   num(ms(o.deadline)),
		Service:      serviceJSON{num(ms(o.service.fastMin)), num(ms(o.service.fastMean)), num(o.service.stallProb), num(o.service.stallFactor)},
		TrueP95Ms:    num(ms(o.service.quantile(0.95))),
		TrueP999Ms:   num(ms(o.service.quantile(0.999))),
		HedgeDelayMs: num(ms(e.hedgeDelay)),
		BudgetShare:  num(o.budgetShare),
		Configs:      o.configs,
		Warnings:     []string{},
		Turns:        map[string]turnFigures{},
	}
	for _, ph := range p {
		r.Phases = append(r.Phases, phaseJSON{ph.name, ph.ops})
	}
	ref := map[int]turn{} // the reference's turn of each repetition
	for _, t := range turns {
		r.Order = append(r.Order, fmt.Sprintf("%d:%s", t.rep, t.config))
		if t.config == reference {
			ref[t.rep] = t
		}
		if t.stray != 0 || t.inflight != 0 || t.maxLag > maxLag {
			r.Warnings = append(r.Warnings, fmt.Sprintf("rep %d %s: stray_requests=%d unfinished_ops=%d max_arrival_lag=%s (over %s: the machine was busy, figures distorted)",
				t.rep, t.config, t.stray, t.inflight, t.maxLag.Round(time.Millisecond), maxLag))
		}
	}
	for _, c := range o.configs {
		own := slices.DeleteFunc(slices.Clone(turns), func(t turn) bool { return t.config != c })
		r.Turns[c] = turnFigures{
			Dials:    medianBy(own, func(t turn) num { return num(t.dials) }),
			CPUS:     medianBy(own, func(t turn) num { return num(t.cpu.Seconds()) }),
			MaxLagMs: medianBy(own, func(t turn) num { return num(ms(t.maxLag)) }),
		}
	}
	// The judged phases first, the warm-up last.
	var order []int
	for _, judged := range []bool{true, false} {
		for i := range p {
			if (p[i].name != warmupPhase) == judged {
				order = append(order, i)
			}
		}
	}
	for _, pi := range order {
		for _, c := range o.configs {
			rw := row{Config: c, Phase: p[pi].name}
			var fs []figures
			var rs []ratios
			for _, t := range turns {
				if t.config != c {
					continue
				}
				f := figuresOf(t.phases[pi], e.hedgeDelay)
				rt := ratios{num(math.NaN()), num(math.NaN()), num(math.NaN()), num(math.NaN()), num(math.NaN())}
				if rt0, ok := ref[t.rep]; ok {
					rt = ratiosOf(f, figuresOf(rt0.phases[pi], e.hedgeDelay))
				}
				fs = append(fs, f)
				rs = append(rs, rt)
				rw.Reps = append(rw.Reps, repFigures{Rep: t.rep, Figures: f, Ratios: rt})
			}
			rw.Median, rw.Ratio = medianFigures(fs), medianRatios(rs)
			rw.P999Lo, rw.P999Hi = p999Range(fs)
			r.Rows = append(r.Rows, rw)
		}
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// latencyMs is the ppm percentile of the sorted latencies in milliseconds,
// NaN (null in JSON) when there are none: a phase without samples is not a
// latency of 0, which the judge would take for the best.
func latencyMs(sorted []time.Duration, ppm int) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return ms(percentile(sorted, ppm))
}

func printTable(w io.Writer, r *report) {
	fmt.Fprintf(w, "\nmedians over %d interleaved repetitions; x: ratio to %s in the same repetition and phase (median of the per-repetition ratios); req_x: server requests; >delay: share of operations slower than the hedge delay; hedge_ms: the second request's arrival after the first's, at the server (median over the operations that sent one); unhedged: operations whose first request stalled and that sent no second, of stalls\n", r.Reps, reference)
	fmt.Fprintf(w, "%-22s %-9s %6s %6s %8s %8s %8s %9s %-15s %7s %6s %8s %-11s %8s | %6s %6s %7s %6s %6s\n",
		"config", "phase", "ops", "failed", "p50_ms", "p95_ms", "p99_ms", "p99.9_ms", "p99.9_min-max", "extra", ">delay", "hedge_ms", "unhedged", "busy_s",
		"p50_x", "p99_x", "p99.9_x", "req_x", "busy_x")
	phase := ""
	for _, rw := range r.Rows {
		if rw.Phase != phase && phase != "" {
			fmt.Fprintln(w)
		}
		phase = rw.Phase
		m, x := rw.Median, rw.Ratio
		fmt.Fprintf(w, "%-22s %-9s %6.0f %6.0f %8.2f %8.2f %8.2f %9.2f %-15s %7.4f %6.3f %8s %-11s %8.2f | %6s %6s %7s %6s %6s\n",
			rw.Config, rw.Phase, m.Ops, m.Failed, m.P50Ms, m.P95Ms, m.P99Ms, m.P999Ms,
			p999RangeText(rw.P999Lo, rw.P999Hi), m.Extra, m.OverDelay, fms(m.HedgeAfterMs),
			fmt.Sprintf("%.0f/%.0f", m.Unhedged, m.Stalls), m.BusyS,
			fx(x.P50), fx(x.P99), fx(x.P999), fx(x.Requests), fx(x.Busy))
	}
	fmt.Fprintf(w, "\np99.9 rests on the samples ranked above it in one repetition:")
	seen := map[string]bool{}
	for _, rw := range r.Rows {
		if rw.Config == reference && !seen[rw.Phase] {
			seen[rw.Phase] = true
			fmt.Fprintf(w, " %s %.0f;", rw.Phase, rw.Median.P999Above)
		}
	}
	fmt.Fprintf(w, " warmup is not judged. loadavg %s at start, %s at end\n", r.LoadavgStart, r.LoadavgEnd)
	fmt.Fprintf(w, "a whole turn (median): connections dialled, CPU time of the process (client and server), worst arrival lag:\n")
	for _, c := range r.Configs {
		t := r.Turns[c]
		fmt.Fprintf(w, "  %-22s dials %6.0f  cpu %6.2fs  lag %6.1fms\n", c, t.Dials, t.CPUS, t.MaxLagMs)
	}
	for _, warn := range r.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
}

func fx(n num) string {
	if math.IsNaN(float64(n)) {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(n))
}

// p999Range is the lowest and highest p99.9 of the repetitions that have
// one (a repetition without samples has none: NaN, which cmp.Compare would
// order below every number), NaN for none.
func p999Range(fs []figures) (lo, hi num) {
	var vs []float64
	for _, f := range fs {
		if !math.IsNaN(float64(f.P999Ms)) {
			vs = append(vs, float64(f.P999Ms))
		}
	}
	if len(vs) == 0 {
		return num(math.NaN()), num(math.NaN())
	}
	return num(slices.Min(vs)), num(slices.Max(vs))
}

// p999RangeText prints a p99.9 range as the table does, "-" for none.
func p999RangeText(lo, hi num) string {
	if math.IsNaN(float64(lo)) {
		return "-"
	}
	return fmt.Sprintf("%.1f-%.1f", lo, hi)
}

// fms is a duration in milliseconds, "-" when it is not a number.
func fms(n num) string {
	if math.IsNaN(float64(n)) {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(n))
}

// judgeSaved reads a report written with -json and prints its sweep's
// curves and the target judged on its repetitions again, with this
// build's rules: a run made before a rule changed is judged without
// running it again.
func judgeSaved(path string, w io.Writer) (*report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &report{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	o := defaultOptions()
	o.service.fastMin = time.Duration(float64(r.Service.FastMinMs) * float64(time.Millisecond))
	o.service.fastMean = time.Duration(float64(r.Service.FastMeanMs) * float64(time.Millisecond))
	o.service.stallProb, o.service.stallFactor = float64(r.Service.StallProb), float64(r.Service.StallFactor)
	e := o.env()
	r.Curves = curves(r, e)
	r.EqualLoad = compareAtEqualLoad(r.Curves)
	r.Judged = judgeAtEqualLoad(r, e)
	fmt.Fprintf(w, "%s: %d repetitions, loadavg %s at start, %s at end, GOMAXPROCS=%d %s\n", path, r.Reps, r.LoadavgStart, r.LoadavgEnd, r.GOMAXPROCS, r.GoVersion)
	printCurves(w, r)
	printJudged(w, r.Judged)
	return r, nil
}

func writeJSON(path string, r *report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
