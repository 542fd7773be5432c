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

	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"

	"github.com/otelretry/otelretry-go/otelretry"
)

// A family is a configuration with one parameter, swept (issue 44): its
// members are named by the family's prefix and the parameter, so that
// -configs can name any of them (failsafe-d5.5ms, otelretry-q0.95).
type family struct {
	prefix string
	// what the family is, for the report and the plot.
	what string
	// parse reads the parameter; build makes the configuration of it.
	parse func(s string) (float64, bool)
	build func(param float64) func(base http.RoundTripper, e env) http.RoundTripper
}

// The swept families:
//   - failsafe-d<delay>: failsafe-go's hedgepolicy through failsafehttp,
//     one hedge after a fixed delay, no budget: the extra load is what the
//     delay asks for;
//   - otelretry-d<delay>: otelretry's hedging after the same fixed delay,
//     with a hedge rate (MaxRate) of twice the share of service times
//     longer than the delay (sweepRate), so that the rate does not bind in
//     the tail phase and the delay alone sets the extra load there, as it
//     does for failsafe-go;
//   - otelretry-q<quantile>: otelretry's adaptive delay at that Quantile
//     (no Delay), with a MaxRate of twice 1 - quantile.
//
// Every otelretry member keeps the default retry budget, as the fixed
// configurations do.
var families = []family{
	{prefix: "failsafe-d", what: "failsafe-go hedgepolicy, fixed delay", parse: parseDelay,
		build: func(d float64) func(http.RoundTripper, env) http.RoundTripper {
			return func(base http.RoundTripper, _ env) http.RoundTripper {
				return failsafehttp.NewRoundTripper(base, hedgepolicy.NewWithDelay[*http.Response](time.Duration(d)))
			}
		}},
	{prefix: "otelretry-d", what: "otelretry, fixed Delay", parse: parseDelay,
		build: func(d float64) func(http.RoundTripper, env) http.RoundTripper {
			return func(base http.RoundTripper, e env) http.RoundTripper {
				share := 1 - e.service.cdf(time.Duration(d))
				return newOtelretry(base, e, otelretry.Hedging{Delay: time.Duration(d), MaxRate: sweepRate(share)})
			}
		}},
	{prefix: "otelretry-q", what: "otelretry, Adaptive, Quantile", parse: parseQuantile,
		build: func(q float64) func(http.RoundTripper, env) http.RoundTripper {
			return func(base http.RoundTripper, e env) http.RoundTripper {
				return newOtelretry(base, e, otelretry.Hedging{Adaptive: true, Quantile: q, MaxRate: sweepRate(1 - q)})
			}
		}},
}

// reference family: the one every other family is compared with, at equal
// extra load.
const peerFamily = "failsafe-d"

// sweepRate is the hedge rate a swept otelretry member gets for a delay
// that passes share of the service times: twice that share (at most 1), so
// that it is at least the share the delay produces once the client's own
// time is added (a few tenths of a millisecond), and the rate binds only in
// the brownout, where every request passes the delay.
func sweepRate(share float64) float64 { return min(1, 2*share) }

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
	for _, f := range families {
		if s, ok := strings.CutPrefix(name, f.prefix); ok {
			if p, ok := f.parse(s); ok {
				return config{name: name, transport: f.build(p)}, true
			}
		}
	}
	return config{}, false
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
// quantiles' delays are the buckets of otelretry's sketch they fall in
// (4.6, 5.5, 6.6 and 8.0 ms for this client). Each fixed delay's two
// members run next to each other.
var (
	sweepDelays    = []string{"4.5ms", "5ms", "5.5ms", "6ms", "7ms", "8ms"}
	sweepQuantiles = []string{"0.85", "0.9", "0.95", "0.98"}
)

// sweepConfigs are the configurations of -sweep, the reference first.
func sweepConfigs() []string {
	names := []string{reference}
	for _, d := range sweepDelays {
		names = append(names, "failsafe-d"+d, "otelretry-d"+d)
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
	MaxRate  num     `json:"max_rate"`
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

// equalLoad is the comparison of a family with the peer's at one extra
// load: each p99.9 interpolated between its sweep points.
type equalLoad struct {
	Phase  string `json:"phase"`
	Family string `json:"family"`
	Extra  num    `json:"extra"`
	PeerMs num    `json:"peer_p999_ms"`
	OwnMs  num    `json:"p999_ms"`
	Ratio  num    `json:"ratio"`
}

// curves gathers the swept members' rows into one curve per family and
// judged phase.
func curves(r *report, e env) []curve {
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
				c.Points = append(c.Points, point{Config: rw.Config, Param: p, MaxRate: num(memberRate(f.prefix, p, e)),
					Extra: rw.Median.Extra, P999Ms: rw.Median.P999Ms, P999Lo: rw.P999Lo, P999Hi: rw.P999Hi,
					Stalls: rw.Median.Stalls, Unhedged: rw.Median.Unhedged, DelayMs: rw.Median.HedgeAfterMs})
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

// memberRate is a member's MaxRate (NaN for failsafe-go, which has none).
func memberRate(prefix string, p float64, e env) float64 {
	switch prefix {
	case "otelretry-d":
		return sweepRate(1 - e.service.cdf(time.Duration(p)))
	case "otelretry-q":
		return sweepRate(1 - p)
	}
	return math.NaN()
}

// interpolate is the curve's p99.9 at extra x, linear between the two
// points around it by extra, and whether x is within the curve's range.
func (c curve) interpolate(x float64) (float64, bool) {
	pts := c.Points
	if len(pts) == 0 || x < float64(pts[0].Extra) || x > float64(pts[len(pts)-1].Extra) {
		return math.NaN(), false
	}
	for i := 1; i < len(pts); i++ {
		x0, x1 := float64(pts[i-1].Extra), float64(pts[i].Extra)
		if x > x1 {
			continue
		}
		y0, y1 := float64(pts[i-1].P999Ms), float64(pts[i].P999Ms)
		if x1 == x0 {
			return (y0 + y1) / 2, true
		}
		return y0 + (y1-y0)*(x-x0)/(x1-x0), true
	}
	return float64(pts[0].P999Ms), true // a single point, at x
}

// compareAtEqualLoad compares each family's curve with the peer's of the
// same phase: at every whole percent of extra requests from 1 % to 10 %,
// and at each of the family's own points, within both curves' ranges.
func compareAtEqualLoad(cs []curve) []equalLoad {
	var out []equalLoad
	for _, peer := range cs {
		if peer.Family != peerFamily {
			continue
		}
		for _, c := range cs {
			if c.Phase != peer.Phase || c.Family == peerFamily {
				continue
			}
			var grid []float64
			for pct := 1; pct <= 10; pct++ {
				grid = append(grid, float64(pct)/100)
			}
			for _, p := range c.Points {
				grid = append(grid, float64(p.Extra))
			}
			slices.Sort(grid)
			grid = slices.CompactFunc(grid, func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })
			for _, x := range grid {
				peerMs, ok1 := peer.interpolate(x)
				ownMs, ok2 := c.interpolate(x)
				if ok1 && ok2 {
					out = append(out, equalLoad{Phase: c.Phase, Family: c.Family, Extra: num(x), PeerMs: num(peerMs), OwnMs: num(ownMs), Ratio: num(ratio(ownMs, peerMs))})
				}
			}
		}
	}
	return out
}

// printCurves prints each family's curve, phase by phase, then the
// comparison at equal extra load.
func printCurves(w io.Writer, r *report) {
	if len(r.Curves) == 0 {
		return
	}
	fmt.Fprintf(w, "\nsweep (issue 44): p99.9 against extra requests, each the median over %d repetitions (p99.9's min-max); max_rate: otelretry's MaxRate\n", r.Reps)
	fmt.Fprintf(w, "%-9s %-20s %9s %8s %9s %-15s %9s %-9s\n", "phase", "config", "max_rate", "extra", "p99.9_ms", "p99.9_min-max", "hedge_ms", "unhedged")
	for _, c := range r.Curves {
		for _, p := range c.Points {
			fmt.Fprintf(w, "%-9s %-20s %9s %7.2f%% %9.2f %-15s %9s %-9s\n", c.Phase, p.Config, fx(p.MaxRate), 100*float64(p.Extra), p.P999Ms,
				fmt.Sprintf("%.1f-%.1f", p.P999Lo, p.P999Hi), fms(p.DelayMs), fmt.Sprintf("%.0f/%.0f", p.Unhedged, p.Stalls))
		}
	}
	fmt.Fprintf(w, "\nat equal extra load: p99.9 interpolated linearly between sweep points by extra requests; x: over %s\n", peerFamily)
	if len(r.EqualLoad) == 0 {
		fmt.Fprintln(w, "  no extra load within both curves' ranges")
	}
	worst := map[[2]string]equalLoad{}
	var keys [][2]string
	for _, e := range r.EqualLoad {
		fmt.Fprintf(w, "%-9s %-12s extra %6.2f%%  %s %7.2f ms  own %7.2f ms  x%.3f\n", e.Phase, e.Family, 100*float64(e.Extra), peerFamily, e.PeerMs, e.OwnMs, e.Ratio)
		k := [2]string{e.Phase, e.Family}
		if old, ok := worst[k]; !ok || e.Ratio > old.Ratio {
			if !ok {
				keys = append(keys, k)
			}
			worst[k] = e
		}
	}
	for _, k := range keys {
		e := worst[k]
		fmt.Fprintf(w, "%-9s %-12s worst x%.3f at %.2f%% extra (at or below %s: %s)\n", k[0], k[1], e.Ratio, 100*float64(e.Extra), peerFamily, yesNo(e.Ratio <= 1))
	}
	// A phase with curves but no comparison: say why.
	for _, c := range r.Curves {
		if c.Family == peerFamily || slices.ContainsFunc(r.EqualLoad, func(e equalLoad) bool { return e.Phase == c.Phase && e.Family == c.Family }) {
			continue
		}
		fmt.Fprintf(w, "%-9s %-12s no extra load in common with %s (%s)\n", c.Phase, c.Family, peerFamily, rangesOf(r.Curves, c))
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// rangesOf tells the extra loads c and the peer's curve of its phase span.
func rangesOf(cs []curve, c curve) string {
	span := func(c curve) string {
		return fmt.Sprintf("%s %.1f-%.1f %%", c.Family, 100*float64(c.Points[0].Extra), 100*float64(c.Points[len(c.Points)-1].Extra))
	}
	for _, p := range cs {
		if p.Family == peerFamily && p.Phase == c.Phase {
			return span(c) + ", " + span(p)
		}
	}
	return span(c)
}
