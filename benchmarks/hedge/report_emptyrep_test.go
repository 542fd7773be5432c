// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// A repetition without samples has no p99.9 (latencyMs: NaN); the p99.9
// range over the repetitions leaves it out, so no NaN reaches the SVG or
// the table (cmp.Compare ordered it below every number: the range's low
// end was NaN, drawn y1="NaN" and printed "NaN-12.0"; a reviewer's find).
func TestAnEmptyRepetitionPutsNoNaNInThePlot(t *testing.T) {
	o := defaultOptions()
	o.reps, o.configs = 3, []string{reference, "failsafe-d5ms"}
	ms := time.Millisecond
	turns := []turn{
		synthTurn(0, reference, 400*ms, 100, 100, 4*time.Second),
		synthTurn(0, "failsafe-d5ms", 10*ms, 100, 105, 3*time.Second),
		synthTurn(1, reference, 420*ms, 100, 100, 5*time.Second),
		synthTurn(1, "failsafe-d5ms", 12*ms, 100, 106, 3*time.Second),
		synthTurn(2, reference, 100*ms, 100, 100, 4*time.Second),
		synthTurn(2, "failsafe-d5ms", 0, 0, 0, 2*time.Second), // no samples in this repetition
	}
	e := o.env()
	r := summarize(o, e, o.plan(), turns)
	r.Curves = curves(r, e)
	for _, rw := range r.Rows {
		if rw.Config == "failsafe-d5ms" && rw.Phase == "tail" {
			if math.IsNaN(float64(rw.Median.P999Ms)) {
				t.Fatalf("median p99.9 NaN; the test expects the median to skip the empty repetition")
			}
			if math.IsNaN(float64(rw.P999Lo)) || math.IsNaN(float64(rw.P999Hi)) {
				t.Errorf("p99.9 range %v-%v with median %v: an empty repetition made the range NaN", rw.P999Lo, rw.P999Hi, rw.Median.P999Ms)
			}
		}
	}
	if svg := plotSVG(r); bytes.Contains(svg, []byte("NaN")) {
		i := bytes.Index(svg, []byte("NaN"))
		t.Errorf("the SVG holds NaN: ...%s...", svg[max(0, i-80):min(len(svg), i+20)])
	}
	var table strings.Builder
	printTable(&table, r)
	if strings.Contains(table.String(), "NaN") {
		for _, l := range strings.Split(table.String(), "\n") {
			if strings.Contains(l, "NaN") {
				t.Errorf("the table prints NaN: %s", l)
			}
		}
	}
}
