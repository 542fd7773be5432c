// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/benchmarks/internal/svgplot"
)

// The plot is well-formed SVG with one panel per configuration (its name,
// escaped, and its recovery), each with the offered load and the goodput
// as step lines over the whole run, and the same figures draw the same
// bytes. Ticks print as the round numbers they are (0.6 s, not
// 0.6000000000000001 s).
func TestPlotDrawsOnePanelPerConfiguration(t *testing.T) {
	o := defaultOptions()
	o.before, o.trigger, o.after = 400*time.Millisecond, 200*time.Millisecond, 600*time.Millisecond
	o.step, o.window, o.tail, o.bucket = 100*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond, 150*time.Millisecond
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	reports := []report{
		{config: "no-retry", recovery: 1.5, goodput: []float64{300, 300, 0, 0, 0, 200, 300, 300}, offered: []float64{300, 310, 290, 300, 300, 300, 300, 300}},
		{config: "a<b", recovery: math.Inf(1), goodput: make([]float64, 8), offered: []float64{300, 310, 290, 300, 300, 300, 300, 300}},
	}
	svg := plotSVG(o, reports)
	if !bytes.Equal(svg, plotSVG(o, reports)) {
		t.Fatal("the same figures drew different plots")
	}
	parsed, err := svgplot.Parse(svg)
	if err != nil {
		t.Fatal(err)
	}
	polylines, texts := parsed.Polylines, parsed.Texts
	if len(polylines) != 2*len(reports) {
		t.Fatalf("%d lines, want 2 per configuration", len(polylines))
	}
	for i, p := range polylines {
		// A step line: two points per bucket.
		if n := len(strings.Fields(p)); n != 2*len(reports[0].goodput) {
			t.Errorf("line %d has %d points, want %d", i, n, 2*len(reports[0].goodput))
		}
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{"no-retry", "recovery 1.5 s", "a<b", "recovery none", "|0.6 s|", "|1.2 s|", "|300|"} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q in %q", want, all)
		}
	}
}
