// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/otelretry/otelretry-go/benchmarks/internal/svgplot"
)

// The sweep's plot: one panel per judged phase, p99.9 (logarithmic)
// against the extra requests, one line per family through its points, each
// point's p99.9 spread over the repetitions as a bar, and no hedging as a
// grey point at 0 %.
const (
	panelW    = 430.0
	panelH    = 300.0
	padLeft   = 50.0
	padRight  = 14.0
	padTop    = 26.0
	padBottom = 34.0
	refColor  = "#888888"
)

// familyStyle is how a family is drawn: its colour, and its line dashed
// or not.
var familyStyle = map[string]struct {
	color string
	dash  string
}{
	"failsafe-d":        {"#d62728", ""},
	"otelretry-d":       {"#1f77b4", ""},
	"otelretry-q":       {"#2ca02c", "5,3"},
	"failsafe-budget-d": {"#ff7f0e", "5,3"},
	// The diagnostic families.
	"otelretry-nobudget-d":       {"#9467bd", "2,2"},
	"otelretry-rate1-d":          {"#8c564b", "2,2"},
	"otelretry-rate1-nobudget-d": {"#e377c2", "2,2"},
}

// plotSVG draws the sweep's curves, phase by phase.
func plotSVG(r *report) []byte {
	var phases []string
	for _, c := range r.Curves {
		if !slices.Contains(phases, c.Phase) {
			phases = append(phases, c.Phase)
		}
	}
	width := float64(max(1, len(phases))) * panelW
	// The legend: the families drawn, in rows as wide as the plot.
	type entry struct {
		x, y  float64
		f     family
		label string
	}
	var legend []entry
	x, y := 8.0, 48.0
	for _, f := range families {
		if !slices.ContainsFunc(r.Curves, func(c curve) bool { return c.Family == f.prefix }) {
			continue
		}
		label := f.prefix + "…: " + f.what
		w := 36 + 5.6*float64(len([]rune(label)))
		if x > 8 && x+w > width {
			x, y = 8, y+14
		}
		legend = append(legend, entry{x, y, f, label})
		x += w
	}
	top := y + 8 // the panels' top
	var b bytes.Buffer
	svgplot.Begin(&b, width, top+panelH)
	fmt.Fprintf(&b, `<text x="8" y="16" font-size="13">p99.9 against extra requests, each point the median of %d repetitions (bar: their min-max); grey: no hedging</text>`+"\n", r.Reps)
	fmt.Fprintf(&b, `<text x="8" y="32" fill="#555">%d op/s, service %s + exp(%s), %.2g %% stalled x%.0f; %s; %s, %d cores, load %s to %s</text>`+"\n",
		r.Rate, ms2(float64(r.Service.FastMinMs)), ms2(float64(r.Service.FastMeanMs)), 100*float64(r.Service.StallProb), float64(r.Service.StallFactor),
		phaseOps(r), r.GoVersion, r.GOMAXPROCS, r.LoadavgStart, r.LoadavgEnd)
	for _, e := range legend {
		st := familyStyle[e.f.prefix]
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/><text x="%.1f" y="%.1f">%s</text>`+"\n",
			e.x, e.x+18, e.y-4, e.y-4, st.color, dashAttr(st.dash), e.x+22, e.y, html.EscapeString(e.label))
	}
	for k, ph := range phases {
		drawPanel(&b, r, ph, float64(k)*panelW+padLeft, top+padTop)
	}
	svgplot.End(&b)
	return b.Bytes()
}

// dashAttr is the stroke-dasharray attribute of a dashed line, "" for a
// solid one.
func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return ` stroke-dasharray="` + dash + `"`
}

func ms2(v float64) string { return fmt.Sprintf("%.3g ms", v) }

func phaseOps(r *report) string {
	var parts []string
	for _, p := range r.Phases {
		if p.Name != warmupPhase {
			parts = append(parts, fmt.Sprintf("%s %d ops", p.Name, p.Ops))
		}
	}
	return strings.Join(parts, ", ")
}

// drawPanel draws phase ph's curves in the panel whose plot area starts
// at (x0, y0).
func drawPanel(b *bytes.Buffer, r *report, ph string, x0, y0 float64) {
	w, h := panelW-padLeft-padRight, panelH-padTop-padBottom
	refMs, xMax, xStep, lo, hi := panelScales(r, ph)
	px := func(pct float64) float64 { return x0 + w*pct/xMax }
	py := func(v float64) float64 {
		v = min(max(v, lo), hi)
		return y0 + h - h*math.Log(v/lo)/math.Log(hi/lo)
	}

	fmt.Fprintf(b, `<g>`+"\n")
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-weight="bold">%s</text>`+"\n", x0, y0-8, html.EscapeString(ph))
	for _, v := range svgplot.LogTicks(lo, hi) {
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/><text x="%.1f" y="%.1f" text-anchor="end" fill="#555">%.6g</text>`+"\n",
			x0, x0+w, py(v), py(v), x0-4, py(v)+4, v)
	}
	for _, t := range svgplot.Ticks(xMax, xStep) {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%.6g %%</text>`+"\n", px(t), y0+h+14, t)
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">extra requests</text>`+"\n", x0+w/2, y0+h+28)
	fmt.Fprintf(b, `<text transform="translate(%.1f,%.1f) rotate(-90)" text-anchor="middle" fill="#555">p99.9 (ms)</text>`+"\n", x0-38, y0+h/2)
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#888"/>`+"\n", x0, y0, w, h)
	if refMs > 0 {
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/><text x="%.1f" y="%.1f" fill="%s">no hedging %.0f ms</text>`+"\n",
			px(0), py(refMs), refColor, px(0)+6, py(refMs)-6, refColor, refMs)
	}
	for _, c := range r.Curves {
		if c.Phase != ph {
			continue
		}
		st := familyStyle[c.Family]
		var pts []string
		for _, p := range c.Points {
			x, y := px(100*float64(p.Extra)), py(float64(p.P999Ms))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
			fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-opacity="0.5"/>`+"\n",
				x, x, py(float64(p.P999Lo)), py(float64(p.P999Hi)), st.color)
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s: %.2f %% extra, p99.9 %.2f ms</title></circle>`+"\n",
				x, y, st.color, html.EscapeString(p.Config), 100*float64(p.Extra), float64(p.P999Ms))
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"/>`+"\n",
			st.color, dashAttr(st.dash), strings.Join(pts, " "))
	}
	fmt.Fprintf(b, `</g>`+"\n")
}

// panelScales are phase ph's panel's scales: no hedging's p99.9 (0 when
// it did not run), the extra load's axis (its end and step, in percent),
// and the p99.9's logarithmic range.
func panelScales(r *report, ph string) (refMs, xMax, xStep, lo, hi float64) {
	for _, rw := range r.Rows {
		if rw.Config == reference && rw.Phase == ph {
			refMs = float64(rw.Median.P999Ms)
		}
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	if refMs > 0 {
		lo, hi = refMs, refMs
	}
	for _, c := range r.Curves {
		if c.Phase != ph {
			continue
		}
		for _, p := range c.Points {
			xMax = max(xMax, 100*float64(p.Extra))
			for _, v := range []num{p.P999Ms, p.P999Lo, p.P999Hi} {
				if v > 0 {
					lo, hi = min(lo, float64(v)), max(hi, float64(v))
				}
			}
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 1, 10
	}
	lo, hi = svgplot.LogRange(lo, hi)
	if hi <= lo {
		hi = lo * 10
	}
	xStep = svgplot.NiceStep(xMax, 6)
	xMax = math.Ceil(xMax/xStep) * xStep
	if xMax == 0 {
		xMax = 1
	}
	return refMs, xMax, xStep, lo, hi
}
