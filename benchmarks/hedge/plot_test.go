// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/benchmarks/internal/svgplot"
)

// The plot is well-formed SVG with one panel per judged phase, one line
// per family through its points (a point and a bar each) and no hedging's
// point; the same figures draw the same bytes.
func TestPlotDrawsOneLinePerFamilyAndPhase(t *testing.T) {
	r := &report{Reps: 3, Rate: 1000, GOMAXPROCS: 2, GoVersion: "go1.26", LoadavgStart: "0.5", LoadavgEnd: "0.7",
		Phases: []phaseJSON{{warmupPhase, 10}, {"tail", 100}, {"brownout", 40}}}
	for _, ph := range []string{"tail", "brownout"} {
		r.Rows = append(r.Rows, row{Config: reference, Phase: ph, Median: figures{P999Ms: 390}})
		r.Curves = append(r.Curves,
			curve{Family: "failsafe-d", Phase: ph, Points: []point{
				{Config: "failsafe-d5ms", Extra: 0.08, P999Ms: 10, P999Lo: 9, P999Hi: 11},
				{Config: "failsafe-d8ms", Extra: 0.01, P999Ms: 12, P999Lo: 11, P999Hi: 14}}},
			curve{Family: "otelretry-q", Phase: ph, Points: []point{{Config: "otelretry-q0.95", Extra: 0.03, P999Ms: 11, P999Lo: 10, P999Hi: 12}}})
	}
	svg := plotSVG(r)
	if !bytes.Equal(svg, plotSVG(r)) {
		t.Fatal("the same figures drew different plots")
	}
	parsed, err := svgplot.Parse(svg)
	if err != nil {
		t.Fatal(err)
	}
	polylines, circles, texts := len(parsed.Polylines), parsed.Circles, parsed.Texts
	if polylines != 4 || circles != 2*(3+1) {
		t.Errorf("%d lines and %d points, want 4 lines and 8 points (3 swept and no hedging, per phase)", polylines, circles)
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{"|tail|", "|brownout|", "no hedging 390 ms", "|10|", "|100|", "go1.26, 2 cores, load 0.5 to 0.7"} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q in %q", want, all)
		}
	}
}
