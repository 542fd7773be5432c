// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/otelretry/otelretry-go/benchmarks/internal/svgplot"
)

// The plot: one panel per configuration, goodput over time (operations
// that succeeded, by arrival, per second) against the load offered, the
// trigger shaded, the recovery a dashed line. Plain SVG, so that the benchmark draws it itself.
const (
	plotCols   = 3
	panelW     = 320.0
	panelH     = 180.0
	padLeft    = 44.0
	padRight   = 12.0
	padTop     = 26.0
	padBottom  = 30.0
	headerH    = 34.0
	goodColor  = "#1f77b4"
	offerColor = "#999999"
	trigColor  = "#f4cccc"
)

// plotSVG draws every configuration's goodput over time.
func plotSVG(o options, reports []report) []byte {
	rows := (len(reports) + plotCols - 1) / plotCols
	width := plotCols * panelW
	height := headerH + float64(rows)*panelH
	var b bytes.Buffer
	svgplot.Begin(&b, width, height)
	fmt.Fprintf(&b, `<text x="8" y="16" font-size="13">Goodput over time (operations arriving then that succeed within %s, per second); grey: offered; red: the trigger (%d of %d workers)</text>`+"\n",
		o.deadline, o.triggerWorkers, o.workers)
	fmt.Fprintf(&b, `<text x="8" y="29" fill="#555">%d op/s, %d workers of %s, queue %d, attempt timeout %s; green: recovery, back at %.0f %% of the goodput before</text>`+"\n",
		o.rate, o.workers, o.service, o.queue, o.attemptTimeout, 100*o.target)

	total := o.total().Seconds()
	top := 0.0
	for _, r := range reports {
		for i := range r.offered {
			top = max(top, r.offered[i], r.goodput[i])
		}
	}
	yStep := svgplot.NiceStep(top, 4)
	yMax := math.Ceil(top/yStep) * yStep
	if yMax == 0 {
		yMax = 1
	}
	xStep := svgplot.NiceStep(total, 6)

	for k, r := range reports {
		x0 := float64(k%plotCols)*panelW + padLeft
		y0 := headerH + float64(k/plotCols)*panelH + padTop
		w, h := panelW-padLeft-padRight, panelH-padTop-padBottom
		px := func(t float64) float64 { return x0 + w*t/total }
		py := func(v float64) float64 { return y0 + h - h*v/yMax }

		fmt.Fprintf(&b, `<g>`+"\n")
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-weight="bold">%s</text><text x="%.1f" y="%.1f" text-anchor="end">recovery %s</text>`+"\n",
			x0, y0-8, html.EscapeString(r.config), x0+w, y0-8, r.recoveryText())
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n",
			px(o.before.Seconds()), y0, px((o.before+o.trigger).Seconds())-px(o.before.Seconds()), h, trigColor)
		for _, v := range svgplot.Ticks(yMax, yStep) {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/><text x="%.1f" y="%.1f" text-anchor="end" fill="#555">%.6g</text>`+"\n",
				x0, x0+w, py(v), py(v), x0-4, py(v)+4, v)
		}
		for _, t := range svgplot.Ticks(total, xStep) {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%.6g s</text>`+"\n", px(t), y0+h+14, t)
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#888"/>`+"\n", x0, y0, w, h)
		if !math.IsInf(r.recovery, 1) {
			// The recovery, where goodput is back for good.
			x := px((o.before + o.trigger).Seconds() + r.recovery)
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#2ca02c" stroke-dasharray="3,2"/>`+"\n", x, x, y0, y0+h)
		}
		bucket := o.bucket.Seconds()
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1" points="%s"/>`+"\n", offerColor, steps(r.offered, bucket, px, py))
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", goodColor, steps(r.goodput, bucket, px, py))
		fmt.Fprintf(&b, `</g>`+"\n")
	}
	svgplot.End(&b)
	return b.Bytes()
}

// steps is a step line through per-bucket values: flat over each bucket.
func steps(vs []float64, bucket float64, px, py func(float64) float64) string {
	var s strings.Builder
	for i, v := range vs {
		t := float64(i) * bucket
		fmt.Fprintf(&s, "%.1f,%.1f %.1f,%.1f ", px(t), py(v), px(t+bucket), py(v))
	}
	return strings.TrimSpace(s.String())
}
