// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"

	"github.com/otelretry/otelretry-go/benchmarks/internal/paired"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A family is a configuration with one parameter, swept (issue 44): its
// members are named by the family's prefix and the parameter, so that
// -configs can name any of them (failsafe-d5.5ms, otelretry-q0.95).
type family struct {
	prefix string
	// what the family is, for the report and the plot.
	what string
	// peer: failsafe-go's, which otelretry's families are compared with.
	peer bool
	// parse reads the parameter; rate is a member's hedge rate (otelretry's
	// MaxShare, failsafe-go's budget's max rate; NaN: none); build makes
	// the member's RoundTripper, given its rate.
	parse func(s string) (float64, bool)
	rate  func(param float64, e env) float64
	build func(param, rate float64, base http.RoundTripper, e env) http.RoundTripper
}

// The swept families:
//   - failsafe-d<delay>: failsafe-go's hedgepolicy through failsafehttp,
//     one hedge after a fixed delay, no budget: the extra load is what the
//     delay asks for;
//   - failsafe-budget-d<delay>: the same with failsafe-go's budget, at a
//     max rate of delayRate: in the brownout, where every request passes
//     the delay, it is failsafe-go at an extra load otelretry's members
//     also reach;
//   - otelretry-d<delay>: otelretry's hedging after the same fixed delay,
//     with a hedge rate (MaxShare) of delayRate, at least the share of
//     operations the delay passes, so that the rate does not bind in the
//     tail phase and the delay alone sets the extra load there, as it
//     does for failsafe-go;
//   - otelretry-q<quantile>: otelretry's adaptive delay at that Quantile
//     (no Delay), with a MaxShare of twice 1 - quantile: its delay is the
//     quantile of the client's own latency, so it passes about that
//     share.
//
// Every otelretry member keeps the default retry budget, as the fixed
// configurations do. The diagnostic families, run only when -configs names
// them, tell the rate's part from the budget's: otelretry after a fixed
// delay with no retry budget (otelretry-nobudget-d), with a MaxShare of 1
// (otelretry-rate1-d), or both (otelretry-rate1-nobudget-d).
var families = []family{
	{prefix: "failsafe-d", what: "failsafe-go hedgepolicy, fixed delay", peer: true, parse: parseDelay, rate: noRate,
		build: func(d, _ float64, base http.RoundTripper, _ env) http.RoundTripper {
			return failsafehttp.NewRoundTripper(base, hedgepolicy.NewWithDelay[*http.Response](time.Duration(d)))
		}},
	{prefix: "failsafe-budget-d", what: "failsafe-go hedgepolicy and budget", peer: true, parse: parseDelay, rate: delayRate,
		build: func(d, rate float64, base http.RoundTripper, _ env) http.RoundTripper {
			b := budget.NewBuilder().WithMaxRate(rate).Build()
			return failsafehttp.NewRoundTripper(base, hedgepolicy.NewBuilderWithDelay[*http.Response](time.Duration(d)).WithBudget(b).Build())
		}},
	{prefix: "otelretry-d", what: "otelretry, fixed Delay", parse: parseDelay, rate: delayRate,
		build: func(d, rate float64, base http.RoundTripper, e env) http.RoundTripper {
			return newOtelretry(base, e, otelretry.Hedging{Delay: time.Duration(d), MaxShare: rate})
		}},
	{prefix: "otelretry-q", what: "otelretry, Adaptive, Quantile", parse: parseQuantile,
		rate: func(q float64, _ env) float64 { return min(1, 2*(1-q)) },
		build: func(q, rate float64, base http.RoundTripper, e env) http.RoundTripper {
			return newOtelretry(base, e, otelretry.Hedging{Adaptive: true, Quantile: q, MaxShare: rate})
		}},
	{prefix: "otelretry-nobudget-d", what: "otelretry, fixed Delay, no retry budget", parse: parseDelay, rate: delayRate,
		build: func(d, rate float64, base http.RoundTripper, e env) http.RoundTripper {
			return newOtelretry(base, e, otelretry.Hedging{Delay: time.Duration(d), MaxShare: rate}, otelretry.WithoutBudget())
		}},
	{prefix: "otelretry-rate1-d", what: "otelretry, fixed Delay, MaxShare 1", parse: parseDelay,
		rate: func(float64, env) float64 { return 1 },
		build: func(d, rate float64, base http.RoundTripper, e env) http.RoundTripper {
			return newOtelretry(base, e, otelretry.Hedging{Delay: time.Duration(d), MaxShare: rate})
		}},
	{prefix: "otelretry-rate1-nobudget-d", what: "otelretry, fixed Delay, MaxShare 1, no retry budget", parse: parseDelay,
		rate: func(float64, env) float64 { return 1 },
		build: func(d, rate float64, base http.RoundTripper, e env) http.RoundTripper {
			return newOtelretry(base, e, otelretry.Hedging{Delay: time.Duration(d), MaxShare: rate}, otelretry.WithoutBudget())
		}},
}

// clientTime is how much later than the server's service time this
// benchmark's client sees the tail of its operations: the share of
// operations slower than a delay d is about the share of service times
// longer than d - clientTime (failsafe-go at 7 ms sends 4 % extra
// requests, where 1.4 % of service times are longer than 7 ms).
const clientTime = time.Millisecond

// delayRate is the hedge rate of a member that hedges after a fixed delay
// d: three times the share of service times longer than d - clientTime,
// at most 1, so that it is at least the share of operations the delay
// passes, with room for the bursts of a busy client (at twice the share
// of service times longer than d, 12 of 74 stalls went unhedged at 7 ms);
// the rate binds only in the brownout, where every request passes the
// delay.
func delayRate(d float64, e env) float64 {
	return min(1, 3*(1-e.service.cdf(time.Duration(d)-clientTime)))
}

func noRate(float64, env) float64 { return math.NaN() }

func parseDelay(s string) (float64, bool) {
	d, err := time.ParseDuration(s)
	return float64(d), err == nil && d > 0
}

func parseQuantile(s string) (float64, bool) {
	q, err := strconv.ParseFloat(s, 64)
	return q, err == nil && q > 0 && q < 1
}

// member is the configuration a family's member name stands for.
func member(name string) (config, bool) {
	f, p, ok := familyOf(name)
	if !ok {
		return config{}, false
	}
	return config{name: name, transport: func(base http.RoundTripper, e env) http.RoundTripper {
		return f.build(p, f.rate(p, e), base, e)
	}}, true
}

// familyOf is the family of a member name and its parameter.
func familyOf(name string) (family, float64, bool) {
	for _, f := range families {
		if s, ok := strings.CutPrefix(name, f.prefix); ok {
			if p, ok := f.parse(s); ok {
				return f, p, true
			}
		}
	}
	return family{}, 0, false
}

// The default sweep: the fixed delays span about 1 % to 13 % of extra
// requests in the tail phase (the share of operations slower than the
// delay: about 12 % at 4.5 ms, 1 % at 8 ms, where 0.7 % stall); the
// quantiles' delays are the client's own quantiles of latency (about 5 to
// 8 ms for this client). failsafe-go with its budget
// runs at three of the delays: its points differ from failsafe-go's
// without it in the brownout only, where the delay makes no difference
// but through the budget's max rate. Each fixed delay's members run next
// to each other.
var (
	sweepDelays       = []string{"4.5ms", "5ms", "5.5ms", "6ms", "7ms", "8ms"}
	sweepBudgetDelays = []string{"5ms", "6ms", "8ms"}
	sweepQuantiles    = []string{"0.85", "0.9", "0.95", "0.98"}
)

// sweepConfigs are the configurations of -sweep, the reference first.
func sweepConfigs() []string {
	names := []string{reference}
	for _, d := range sweepDelays {
		names = append(names, "failsafe-d"+d, "otelretry-d"+d)
		if slices.Contains(sweepBudgetDelays, d) {
			names = append(names, "failsafe-budget-d"+d)
		}
	}
	for _, q := range sweepQuantiles {
		names = append(names, "otelretry-q"+q)
	}
	return names
}

// point is one member's figures in one phase: the medians over the
// repetitions of its extra requests and p99.9, the spread of p99.9.
type point struct {
	Config   string  `json:"config"`
	Param    float64 `json:"param"` // nanoseconds of delay, or the quantile
	MaxShare num     `json:"max_rate"`
	Extra    num     `json:"extra"`
	P999Ms   num     `json:"p999_ms"`
	P999Lo   num     `json:"p999_ms_min"`
	P999Hi   num     `json:"p999_ms_max"`
	Stalls   num     `json:"stalls"`
	Unhedged num     `json:"unhedged_stalls"`
	// DelayMs is the hedge delay as the server saw it (hedge_after_ms).
	DelayMs num `json:"hedge_after_ms"`
}

// curve is one family's points in one phase, by extra requests.
type curve struct {
	Family string  `json:"family"`
	Phase  string  `json:"phase"`
	Points []point `json:"points"`
}

// equalLoad is the comparison of a family with a peer family at one
// extra load: each p99.9 interpolated between its sweep points.
type equalLoad struct {
	Phase  string `json:"phase"`
	Family string `json:"family"`
	Peer   string `json:"peer"`
	Extra  num    `json:"extra"`
	PeerMs num    `json:"peer_p999_ms"`
	OwnMs  num    `json:"p999_ms"`
	Ratio  num    `json:"ratio"`
}

// curves gathers the swept members' rows into one curve per family and
// judged phase, each point the medians over the repetitions.
func curves(r *report, e env) []curve {
	return curvesBy(r, e, func(rw row) (figures, bool) { return rw.Median, true })
}

// repCurves are the curves of repetition rep alone: each point that
// member's figures in that repetition.
func repCurves(r *report, e env, rep int) []curve {
	return curvesBy(r, e, func(rw row) (figures, bool) {
		i := slices.IndexFunc(rw.Reps, func(f repFigures) bool { return f.Rep == rep })
		if i < 0 {
			return figures{}, false
		}
		return rw.Reps[i].Figures, true
	})
}

// curvesBy gathers one curve per family and judged phase, a point per
// member row whose figures pick gives.
func curvesBy(r *report, e env, pick func(rw row) (figures, bool)) []curve {
	var out []curve
	for _, ph := range r.Phases {
		if ph.Name == warmupPhase {
			continue
		}
		for _, f := range families {
			c := curve{Family: f.prefix, Phase: ph.Name}
			for _, rw := range r.Rows {
				fam, p, ok := familyOf(rw.Config)
				if !ok || fam.prefix != f.prefix || rw.Phase != ph.Name {
					continue
				}
				fig, ok := pick(rw)
				if !ok || math.IsNaN(float64(fig.Extra)) || math.IsNaN(float64(fig.P999Ms)) {
					continue // no point where a figure is no measurement (null in hedge.json)
				}
				c.Points = append(c.Points, point{Config: rw.Config, Param: p, MaxShare: num(f.rate(p, e)),
					Extra: fig.Extra, P999Ms: fig.P999Ms, P999Lo: rw.P999Lo, P999Hi: rw.P999Hi,
					Stalls: fig.Stalls, Unhedged: fig.Unhedged, DelayMs: fig.HedgeAfterMs})
			}
			if len(c.Points) == 0 {
				continue
			}
			slices.SortStableFunc(c.Points, func(a, b point) int { return cmp.Compare(a.Extra, b.Extra) })
			out = append(out, c)
		}
	}
	return out
}

// interpolate is the curve's p99.9 at extra x, linear between the two
// points around it by extra, and whether x is within the curve's range.
// Points measured at the same extra load count as one, their mean,
// whatever the order the configurations were listed in.
func (c curve) interpolate(x float64) (float64, bool) {
	pts := c.Points // sorted by extra, none NaN (curvesBy)
	if len(pts) == 0 || !(x >= float64(pts[0].Extra)-loadTolerance) || x > float64(pts[len(pts)-1].Extra)+loadTolerance {
		return math.NaN(), false
	}
	above := slices.IndexFunc(pts, func(p point) bool { return float64(p.Extra) >= x-loadTolerance })
	x1 := float64(pts[above].Extra)
	y1 := c.meanAt(pts[above].Extra)
	if x1 <= x || math.Abs(x1-x) < loadTolerance || above == 0 {
		return y1, true // x is this point, to a rounding error
	}
	x0 := float64(pts[above-1].Extra)
	y0 := c.meanAt(pts[above-1].Extra)
	return y0 + (y1-y0)*(x-x0)/(x1-x0), true
}

// loadTolerance is how near two extra loads are one: a load measured as
// requests/operations - 1 sits a rounding error off the whole percent it is
// (10 100 requests over 10 000 operations: 0.010000000000000009).
const loadTolerance = 1e-9

// meanAt is the mean p99.9 of the curve's points at extra load x, to
// loadTolerance.
func (c curve) meanAt(x num) float64 {
	var sum float64
	n := 0
	for _, p := range c.Points {
		if math.Abs(float64(p.Extra)-float64(x)) < loadTolerance {
			sum += float64(p.P999Ms)
			n++
		}
	}
	return sum / float64(n)
}

// compareAtEqualLoad compares each otelretry family's curve with each
// peer family's of the same phase: at every whole percent of extra
// requests from 1 % to 10 %, every tenth from 10 % to 100 %, and each
// point of either curve (where one side was measured), within both
// curves' ranges.
func compareAtEqualLoad(cs []curve) []equalLoad {
	var grid []float64
	for pct := 1; pct <= 10; pct++ {
		grid = append(grid, float64(pct)/100)
	}
	for pct := 20; pct <= 100; pct += 10 {
		grid = append(grid, float64(pct)/100)
	}
	var out []equalLoad
	for _, peer := range cs {
		if !isPeer(peer.Family) {
			continue
		}
		for _, c := range cs {
			if c.Phase != peer.Phase || isPeer(c.Family) {
				continue
			}
			xs := slices.Clone(grid)
			for _, p := range slices.Concat(c.Points, peer.Points) { // each side where it was measured
				xs = append(xs, float64(p.Extra))
			}
			slices.Sort(xs)
			xs = slices.CompactFunc(xs, func(a, b float64) bool { return math.Abs(a-b) < loadTolerance })
			for _, x := range xs {
				peerMs, ok1 := peer.interpolate(x)
				ownMs, ok2 := c.interpolate(x)
				if ok1 && ok2 {
					out = append(out, equalLoad{Phase: c.Phase, Family: c.Family, Peer: peer.Family, Extra: num(x),
						PeerMs: num(peerMs), OwnMs: num(ownMs), Ratio: num(ratio(ownMs, peerMs))})
				}
			}
		}
	}
	return out
}

// judgedLoad is the target (otelretry's p99.9 at or below failsafe-go's at
// equal extra load) at one load, judged on the repetitions as compare.sh
// judges its targets on runs: in each repetition both curves are that
// repetition's own points, interpolated at the load, and the ratio is the
// median of the per-repetition ratios, with its 95 % bootstrap interval
// over the repetitions. The repetitions run every configuration in turn,
// so a slow spell lands on both sides of a repetition's ratio; the
// medians' curves (equalLoad) mix repetitions.
type judgedLoad struct {
	Phase   string `json:"phase"`
	Family  string `json:"family"`
	Peer    string `json:"peer"`
	Extra   num    `json:"extra"`
	Reps    int    `json:"reps"` // repetitions whose curves both reach the load
	Ratio   num    `json:"ratio"`
	Lo      num    `json:"ratio_lo"`
	Hi      num    `json:"ratio_hi"`
	Verdict string `json:"verdict"` // ok, EDGE or MISS
}

// judgedRange is the target's range of extra loads: 1 % to 10 %, each
// whole percent.
var judgedRange = func() []float64 {
	var xs []float64
	for pct := 1; pct <= 10; pct++ {
		xs = append(xs, float64(pct)/100)
	}
	return xs
}()

// minJudgedReps is the fewest repetitions a load is judged on: the
// fewest a 95 % interval can be drawn from (paired.MinRuns; the issue
// asked for a median of at least 3, which draws the curves).
const minJudgedReps = paired.MinRuns

// judgeAtEqualLoad judges each otelretry family against each of
// failsafe-go's, phase by phase, at the loads of judgedRange that at least
// minJudgedReps repetitions' curves of both reach.
func judgeAtEqualLoad(r *report, e env) []judgedLoad {
	reps := repetitionsOf(r)
	byRep := make([][]curve, len(reps))
	for i, k := range reps {
		byRep[i] = repCurves(r, e, k)
	}
	var out []judgedLoad
	for _, peer := range r.Curves {
		if !isPeer(peer.Family) {
			continue
		}
		for _, c := range r.Curves {
			if c.Phase != peer.Phase || isPeer(c.Family) {
				continue
			}
			for _, x := range judgedRange {
				if j, ok := judgeAt(byRep, c.Phase, c.Family, peer.Family, x); ok {
					out = append(out, j)
				}
			}
		}
	}
	return out
}

// repetitionsOf lists the repetitions the report's rows hold, in order.
func repetitionsOf(r *report) []int {
	var reps []int
	for _, rw := range r.Rows {
		for _, f := range rw.Reps {
			if !slices.Contains(reps, f.Rep) {
				reps = append(reps, f.Rep)
			}
		}
	}
	slices.Sort(reps)
	return reps
}

// judgeAt judges one family against one peer in one phase at extra load x,
// from the repetitions whose curves of both reach x and whose peer's p99.9
// there is above zero (a ratio needs it; Reps counts only those).
func judgeAt(byRep [][]curve, phase, family, peer string, x float64) (judgedLoad, bool) {
	var own, theirs []float64
	for _, cs := range byRep {
		oc, ok1 := findCurve(cs, phase, family)
		pc, ok2 := findCurve(cs, phase, peer)
		if !ok1 || !ok2 {
			continue
		}
		o, ok1 := oc.interpolate(x)
		p, ok2 := pc.interpolate(x)
		if ok1 && ok2 && p > 0 {
			own, theirs = append(own, o), append(theirs, p)
		}
	}
	if len(own) < minJudgedReps {
		return judgedLoad{}, false
	}
	rt, okRatio := paired.Ratio(own, theirs)
	lo, hi, okInterval := paired.Interval(own, theirs)
	if !okRatio || !okInterval {
		return judgedLoad{}, false // a value that is no measurement: no ratio, so no verdict
	}
	return judgedLoad{Phase: phase, Family: family, Peer: peer, Extra: num(x), Reps: len(own),
		Ratio: num(rt), Lo: num(lo), Hi: num(hi), Verdict: paired.AtMost(1).Verdict(lo, hi)}, true
}

// findCurve finds a family's curve in a phase.
func findCurve(cs []curve, phase, family string) (curve, bool) {
	i := slices.IndexFunc(cs, func(c curve) bool { return c.Phase == phase && c.Family == family })
	if i < 0 {
		return curve{}, false
	}
	return cs[i], true
}

// printJudged prints each judged load, then per family and peer how many
// loads were ok, EDGE and MISS.
func printJudged(w io.Writer, js []judgedLoad) {
	if len(js) == 0 {
		return
	}
	fmt.Fprintf(w, "\njudged on the repetitions (the target: at or below failsafe-go at equal extra load, 1-10 %%): in each repetition both p99.9s interpolated on its own points; x: median of the per-repetition ratios [95 %% bootstrap interval]; ok: the whole interval at or below 1, MISS: all of it above, EDGE: the repetitions cannot tell\n")
	type key struct{ phase, family, peer string }
	counts := map[key]map[string]int{}
	var keys []key
	for _, j := range js {
		fmt.Fprintf(w, "%-4s %-9s %-20s vs %-17s extra %4.1f%%  x%.3f [%.3f-%.3f] over %d repetitions\n", j.Verdict, j.Phase, j.Family, j.Peer, 100*float64(j.Extra), j.Ratio, j.Lo, j.Hi, j.Reps)
		k := key{j.Phase, j.Family, j.Peer}
		if counts[k] == nil {
			counts[k] = map[string]int{}
			keys = append(keys, k)
		}
		counts[k][j.Verdict]++
	}
	for _, k := range keys {
		n := counts[k]
		fmt.Fprintf(w, "%-9s %-20s vs %-17s ok %d, EDGE %d, MISS %d of %d loads\n", k.phase, k.family, k.peer, n["ok"], n["EDGE"], n["MISS"], n["ok"]+n["EDGE"]+n["MISS"])
	}
}

// isPeer reports whether a family is failsafe-go's.
func isPeer(prefix string) bool {
	i := slices.IndexFunc(families, func(f family) bool { return f.prefix == prefix })
	return i >= 0 && families[i].peer
}

// printCurves prints each family's curve, phase by phase, then the
// comparison at equal extra load.
func printCurves(w io.Writer, r *report) {
	if len(r.Curves) == 0 {
		return
	}
	fmt.Fprintf(w, "\nsweep (issue 44): p99.9 against extra requests, each the median over %d repetitions (p99.9's min-max); max_rate: otelretry's MaxShare or failsafe-go's budget's max rate\n", r.Reps)
	fmt.Fprintf(w, "%-9s %-28s %9s %8s %9s %-15s %9s %-9s\n", "phase", "config", "max_rate", "extra", "p99.9_ms", "p99.9_min-max", "hedge_ms", "unhedged")
	for _, c := range r.Curves {
		for _, p := range c.Points {
			fmt.Fprintf(w, "%-9s %-28s %9s %7.2f%% %9.2f %-15s %9s %-9s\n", c.Phase, p.Config, fx(p.MaxShare), 100*float64(p.Extra), p.P999Ms,
				fmt.Sprintf("%.1f-%.1f", p.P999Lo, p.P999Hi), fms(p.DelayMs), fmt.Sprintf("%.0f/%.0f", p.Unhedged, p.Stalls))
		}
	}
	printEqualLoad(w, r.EqualLoad)
	printNoLoadInCommon(w, r)
}

// printEqualLoad prints each comparison at equal extra load, then per family
// and peer at how many loads it was at or below and its worst ratio.
func printEqualLoad(w io.Writer, es []equalLoad) {
	fmt.Fprintf(w, "\nat equal extra load: p99.9 interpolated linearly between sweep points by extra requests; x: own over the peer's\n")
	if len(es) == 0 {
		fmt.Fprintln(w, "  no extra load within both curves' ranges")
	}
	type key struct{ phase, family, peer string }
	worst := map[key]equalLoad{}
	below, loads := map[key]int{}, map[key]int{}
	var keys []key
	for _, e := range es {
		fmt.Fprintf(w, "%-9s %-20s extra %6.2f%%  %-17s %8.2f ms  own %8.2f ms  x%.3f\n", e.Phase, e.Family, 100*float64(e.Extra), e.Peer, e.PeerMs, e.OwnMs, e.Ratio)
		k := key{e.Phase, e.Family, e.Peer}
		old, ok := worst[k]
		if !ok {
			keys = append(keys, k)
		}
		if !ok || e.Ratio > old.Ratio {
			worst[k] = e
		}
		if e.Ratio <= 1 {
			below[k]++
		}
		loads[k]++
	}
	for _, k := range keys {
		e := worst[k]
		fmt.Fprintf(w, "%-9s %-20s vs %-17s at or below at %d of %d loads; worst x%.3f at %.2f%% extra\n", k.phase, k.family, k.peer, below[k], loads[k], e.Ratio, 100*float64(e.Extra))
	}
}

// printNoLoadInCommon says, for a family and a peer with curves in a phase
// but no comparison, why: the extra loads each spans.
func printNoLoadInCommon(w io.Writer, r *report) {
	for _, c := range r.Curves {
		if isPeer(c.Family) {
			continue
		}
		for _, p := range r.Curves {
			if !isPeer(p.Family) || p.Phase != c.Phase || slices.ContainsFunc(r.EqualLoad, func(e equalLoad) bool {
				return e.Phase == c.Phase && e.Family == c.Family && e.Peer == p.Family
			}) {
				continue
			}
			fmt.Fprintf(w, "%-9s %-20s vs %-17s no extra load in common (%s, %s)\n", c.Phase, c.Family, p.Family, span(c), span(p))
		}
	}
}

// span tells the extra loads a curve spans.
func span(c curve) string {
	return fmt.Sprintf("%s %.1f-%.1f %%", c.Family, 100*float64(c.Points[0].Extra), 100*float64(c.Points[len(c.Points)-1].Extra))
}
