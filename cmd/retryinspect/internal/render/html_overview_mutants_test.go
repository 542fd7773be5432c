// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

func i64(v int64) *int64 { return &v }

// TestTheBusiestDependencyComesFirst: the overview's lanes are the
// busiest first (most attempts).
func TestTheBusiestDependencyComesFirst(t *testing.T) {
	t0 := time.Unix(1000, 0)
	quiet := &dependency{name: "quiet", attempts: 1, ivs: []opInterval{{start: t0, end: t0.Add(time.Millisecond)}}}
	busy := &dependency{name: "busy", attempts: 5, ivs: []opInterval{{start: t0, end: t0.Add(time.Millisecond)}}}
	deps, _, _ := drawnDependencies([]*dependency{quiet, busy})
	if len(deps) != 2 || deps[0].name != "busy" {
		t.Fatalf("lanes %q, %q: want busy first", deps[0].name, deps[1].name)
	}
}

// TestAHistogramCountsOnlyTheFirstAttemptAsFirst: the second attempt of
// an operation is a retry in its histogram.
func TestAHistogramCountsOnlyTheFirstAttemptAsFirst(t *testing.T) {
	t0 := time.Unix(1000, 0)
	iv := opInterval{start: t0, end: t0.Add(10 * time.Millisecond), attempts: []attemptStart{{t0, "retry"}, {t0, "retry"}, {t0, "return"}}}
	hist, most := histograms([]*dependency{{ivs: []opInterval{iv}}}, t0, axis{lo: 0, hi: 10})
	var first, retry int
	for b := range ovBuckets {
		first += hist[0].first[b]
		retry += hist[0].retry[b]
	}
	if first != 1 || retry != 2 || most != 3 {
		t.Fatalf("first %d, retries %d, most %d: want 1, 2, 3", first, retry, most)
	}
}

// TestAChartListsTwelveRowsThenSaysHowManyMore.
func TestAChartListsTwelveRowsThenSaysHowManyMore(t *testing.T) {
	var ss []inspect.Share
	for i := range 14 {
		ss = append(ss, inspect.Share{Value: string(rune('a' + i)), Count: 1, Share: 1.0 / 14})
	}
	c := makeChart("x", "over", ss, nil)
	if len(c.Rows) != chartMaxRows || c.More != 2 {
		t.Fatalf("%d rows, %d more: want %d, 2", len(c.Rows), c.More, chartMaxRows)
	}
}

// TestTheStripNamesTheFirstPeakAndTheFirstRefusal: the note names the
// first column of the highest ratio and the first refusal.
func TestTheStripNamesTheFirstPeakAndTheFirstRefusal(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var ivs []opInterval
	// one retry at 0 ms, one at 1000 ms: two columns of ratio 1; a
	// refusal at 0 ms and one at 1000 ms.
	for _, ms := range []int{0, 1000} {
		ivs = append(ivs, opInterval{start: at(ms), end: at(ms), attempts: []attemptStart{{at(ms), string(attrs.DecisionRetry)}, {at(ms), string(attrs.DecisionBudgetExhausted)}}})
	}
	ax := axis{lo: 0, hi: 1200}
	s := buildStrip([]*dependency{{ivs: ivs}}, t0, ax, nil)
	if !strings.Contains(s.Note, "from +0 ms);") {
		t.Errorf("the peak is not the first column: %s", s.Note)
	}
	if !strings.Contains(s.Note, "refused 2 retries, the first from +0 ms.") {
		t.Errorf("the first refusal is not the first column's: %s", s.Note)
	}
}

// TestABarGoesToANewSubRowWhenItWouldTouchTheLastOne: bars keep a gap
// of 2 px in a sub-row.
func TestABarGoesToANewSubRowWhenItWouldTouchTheLastOne(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := &inspect.Report{Operations: []inspect.Operation{{Start: t0}, {Start: t0}}}
	d := &dependency{ivs: []opInterval{
		{index: 0, start: t0, end: t0.Add(10 * time.Millisecond)},
		{index: 1, start: t0.Add(11 * time.Millisecond), end: t0.Add(20 * time.Millisecond)},
	}}
	bars, _ := operationBars(r, d, 0, func(t time.Time) float64 { return 300 + msBetween(t0, t) }, nil)
	if bars[0].Y == bars[1].Y {
		t.Fatalf("bars 1 px apart share a sub-row (y %g)", bars[0].Y)
	}
}

// TestTwentyFourDependenciesLeaveNoneOut and 80 operations are bars.
func TestTwentyFourDependenciesLeaveNoneOutAndEightyOperationsAreBars(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var deps []*dependency
	r := &inspect.Report{}
	for i := range ovMaxBars {
		r.Operations = append(r.Operations, inspect.Operation{Start: t0, End: t0.Add(time.Millisecond)})
		if i < ovMaxLanes {
			deps = append(deps, &dependency{name: string(rune('a' + i)), ivs: []opInterval{{index: i, start: t0, end: t0.Add(time.Millisecond)}}})
		}
	}
	o, _ := buildOverview(r, deps, nil)
	if o.LeftOut != "" {
		t.Errorf("%d dependencies: %q", ovMaxLanes, o.LeftOut)
	}
	if o.Histogram {
		t.Errorf("%d operations drawn as histograms, want bars", ovMaxBars)
	}
}
