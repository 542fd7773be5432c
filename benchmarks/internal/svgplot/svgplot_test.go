// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package svgplot

import (
	"bytes"
	"encoding/xml"
	"math"
	"slices"
	"testing"
)

func TestNiceStep(t *testing.T) {
	for _, c := range []struct {
		span float64
		n    int
		want float64
	}{{32, 6, 10}, {1.2, 6, 0.2}, {390, 4, 100}, {450, 4, 200}, {0, 4, 1}} {
		if got := NiceStep(c.span, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("NiceStep(%v, %d) = %v, want %v", c.span, c.n, got, c.want)
		}
	}
}

func TestTicksReachTheEnd(t *testing.T) {
	if got := Ticks(1.2, 0.2); len(got) != 7 || got[0] != 0 || math.Abs(got[6]-1.2) > 1e-12 {
		t.Errorf("Ticks(1.2, 0.2) = %v, want 0 to 1.2 by 0.2", got)
	}
}

func TestLogTicksAndRange(t *testing.T) {
	lo, hi := LogRange(7.3, 387)
	if lo != 5 || hi != 500 {
		t.Errorf("LogRange(7.3, 387) = %v, %v; want 5, 500", lo, hi)
	}
	if lo, hi := LogRange(10, 20); lo != 10 || hi != 20 {
		t.Errorf("LogRange(10, 20) = %v, %v; want the same", lo, hi)
	}
	if got, want := LogTicks(5, 500), []float64{5, 10, 20, 50, 100, 200, 500}; !slices.Equal(got, want) {
		t.Errorf("LogTicks(5, 500) = %v, want %v", got, want)
	}
	if got, want := LogTicks(0.1, 1), []float64{0.1, 0.2, 0.5, 1}; !slices.Equal(got, want) {
		t.Errorf("LogTicks(0.1, 1) = %v, want %v", got, want)
	}
	if LogTicks(0, 1) != nil || LogTicks(2, 1) != nil {
		t.Error("LogTicks of an empty or non-positive range: want none")
	}
}

func TestBeginAndEndMakeAWellFormedDocument(t *testing.T) {
	var b bytes.Buffer
	Begin(&b, 100, 50)
	End(&b)
	var doc struct {
		XMLName xml.Name
		Width   string `xml:"width,attr"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil || doc.XMLName.Local != "svg" || doc.Width != "100" {
		t.Errorf("%s: %v, %+v", b.String(), err, doc)
	}
}
