// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package svgplot holds what the benchmarks that draw their own plots
// share: the document's frame and the axes' ticks. The plots are plain
// SVG, written by the benchmark that measured the figures, so that a page
// shows what the last run printed.
package svgplot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Begin opens a document of width × height on a white background, in the
// benchmarks' font.
func Begin(b *bytes.Buffer, width, height float64) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	fmt.Fprintf(b, `<rect width="%g" height="%g" fill="white"/>`+"\n", width, height)
}

// End closes the document Begin opened.
func End(b *bytes.Buffer) { b.WriteString("</svg>\n") }

// NiceStep is the tick spacing, 1, 2 or 5 times a power of ten, that puts
// at most n ticks on [0, span].
func NiceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// Ticks are the multiples of step on [0, end] (print them with %.6g, so
// that 3 × 0.2 shows as 0.6).
func Ticks(end, step float64) []float64 {
	var ts []float64
	for i := 0; float64(i)*step <= end+step/2; i++ {
		ts = append(ts, float64(i)*step)
	}
	return ts
}

// LogTicks are the values 1, 2 and 5 times a power of ten on [lo, hi]
// (0 < lo ≤ hi), for a logarithmic axis.
func LogTicks(lo, hi float64) []float64 {
	if lo <= 0 || hi < lo {
		return nil
	}
	var ts []float64
	for v := logStep(lo, false); v <= hi*(1+1e-9); v = logStep(v*1.0001, true) {
		ts = append(ts, v)
	}
	return ts
}

// LogRange widens [lo, hi] (0 < lo ≤ hi) to the nearest values 1, 2 or 5
// times a power of ten: the ends of a logarithmic axis that holds both.
func LogRange(lo, hi float64) (float64, float64) {
	return logStep(lo, false), logStep(hi, true)
}

// logStep is the value 1, 2 or 5 times a power of ten nearest to x (> 0):
// the one at or above it when up, else the one at or below it.
func logStep(x float64, up bool) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	steps := []float64{1, 2, 5, 10}
	if up {
		for _, m := range steps {
			if v := round6(m * p); v >= x*(1-1e-9) {
				return v
			}
		}
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if v := round6(steps[i] * p); v <= x*(1+1e-9) {
			return v
		}
	}
	return round6(p)
}

// round6 is x to six significant digits: 0.1 × 10 × 10 is not quite 10.
func round6(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return v
}

// Parsed is what a plot's tests read back from its document.
type Parsed struct {
	Polylines []string // each polyline's points, in order
	Circles   int
	Texts     []string // each text's content, in order
}

// Parse reads a document back; it fails on one that is not well-formed.
func Parse(svg []byte) (Parsed, error) {
	var p Parsed
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return p, nil
		}
		if err != nil {
			return p, fmt.Errorf("not well-formed: %w", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "polyline":
			for _, a := range se.Attr {
				if a.Name.Local == "points" {
					p.Polylines = append(p.Polylines, a.Value)
				}
			}
		case "circle":
			p.Circles++
		case "text":
			var s string
			if err := d.DecodeElement(&s, &se); err != nil {
				return p, err
			}
			p.Texts = append(p.Texts, s)
		}
	}
}
