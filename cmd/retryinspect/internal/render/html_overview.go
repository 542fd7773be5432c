// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// The incident overview: every operation on one time axis, one lane per
// dependency (server.address and method), busiest first, so that a storm
// on one dependency stands out. With few operations each is a bar from its
// start to its end, coloured by outcome, with a tick at each retry; with
// many, each lane is a histogram of attempts over time, first attempts and
// retries stacked, on one scale for all lanes.
type overview struct {
	Width, Height float64
	AxisY         float64
	Ticks         []tick
	Start         string // the instant at the axis' 0
	Histogram     bool
	BucketWidth   string // histogram: the time one column covers
	MaxCount      int    // histogram: the attempts of the tallest column
	Lanes         []lane
	LeftOut       string
	Empty         string
}

type lane struct {
	LabelY     float64
	SubY       float64
	Label, Sub string
	Bars       []opBar
	Cols       []column
	Separator  float64
	Title      string
}

type opBar struct {
	X, Y, W, H float64
	Y2         float64 // Y + H
	Class      string
	Anchor     string // "" when the operation has no timeline
	Title      string
	Retries    []float64 // x of each retry's start
}

type column struct {
	X, W           float64
	FirstY, FirstH float64
	RetryY, RetryH float64
}

// Layout of the overview, in pixels of its viewBox.
const (
	ovWidth     = 1000
	ovPlotX0    = 230
	ovPlotX1    = 980
	ovAxisY     = 22
	ovTop       = 32
	ovMaxLanes  = 24
	ovMaxBars   = 80 // more operations: histograms
	ovBuckets   = 120
	ovSubRowH   = 11
	ovMaxSubRow = 10
	ovHistH     = 34 // the tallest column
)

// opInterval is an operation on the overview's time axis.
type opInterval struct {
	index      int
	start, end time.Time
	attempts   []time.Time // start of each attempt
}

func interval(i int, op *inspect.Operation) (opInterval, bool) {
	iv := opInterval{index: i, start: op.Start, end: op.End}
	for j := range op.Attempts {
		at := &op.Attempts[j]
		start := at.Start
		if start.IsZero() && !op.Start.IsZero() && at.OffsetMs != nil {
			start = op.Start.Add(time.Duration(*at.OffsetMs) * time.Millisecond)
		}
		if start.IsZero() {
			continue
		}
		iv.attempts = append(iv.attempts, start)
		s := attemptSpan(op, at)
		if end := start.Add(time.Duration((s[1] - s[0]) * float64(time.Millisecond))); end.After(iv.end) {
			iv.end = end
		}
	}
	if iv.start.IsZero() {
		return iv, false
	}
	if iv.end.Before(iv.start) {
		iv.end = iv.start
	}
	return iv, true
}

type dependency struct {
	server, method string
	ops            []opInterval
	attempts       int
	retries        int
}

func buildOverview(r *inspect.Report, anchorOf map[int]string) overview {
	o := overview{Width: ovWidth, AxisY: ovAxisY}
	byKey := map[[2]string]*dependency{}
	var deps []*dependency
	var t0, t1 time.Time
	for i := range r.Operations {
		op := &r.Operations[i]
		iv, ok := interval(i, op)
		if !ok {
			continue
		}
		if t0.IsZero() || iv.start.Before(t0) {
			t0 = iv.start
		}
		if iv.end.After(t1) {
			t1 = iv.end
		}
		k := [2]string{op.ServerAddress, op.Method}
		d := byKey[k]
		if d == nil {
			d = &dependency{server: op.ServerAddress, method: op.Method}
			byKey[k] = d
			deps = append(deps, d)
		}
		d.ops = append(d.ops, iv)
		d.attempts += len(op.Attempts)
		for _, at := range op.Attempts {
			if at.Number > 1 {
				d.retries++
			}
		}
	}
	if len(deps) == 0 {
		o.Empty = "no operation with a start time"
		o.Height = ovTop
		return o
	}
	slices.SortStableFunc(deps, func(a, b *dependency) int {
		return cmp.Or(cmp.Compare(b.attempts, a.attempts), cmp.Compare(len(b.ops), len(a.ops)))
	})
	if len(deps) > ovMaxLanes {
		rest, ops := deps[ovMaxLanes:], 0
		for _, d := range rest {
			ops += len(d.ops)
		}
		o.LeftOut = fmt.Sprintf("%d more dependencies with %s are not drawn", len(rest), plural(ops, "operation"))
		deps = deps[:ovMaxLanes]
	}
	total := msBetween(t0, t1)
	ax, ticks := niceAxis(0, total, ovPlotX0, ovPlotX1, func(v float64) string { return "+" + fmtMs(v) })
	o.Ticks = ticks
	o.Start = esc(timestamp(t0))
	o.Histogram = len(r.Operations) > ovMaxBars
	at := func(t time.Time) float64 { return ax.x(msBetween(t0, t)) }

	// Histogram: count attempts per column, first attempts apart from
	// retries, on the widened axis.
	type counts struct{ first, retry []int }
	var hist []counts
	if o.Histogram {
		o.BucketWidth = esc(fmtMs((ax.hi - ax.lo) / ovBuckets))
		bucket := func(t time.Time) int {
			f := (msBetween(t0, t) - ax.lo) / (ax.hi - ax.lo)
			return max(0, min(ovBuckets-1, int(math.Floor(f*ovBuckets))))
		}
		hist = make([]counts, len(deps))
		for i, d := range deps {
			c := counts{first: make([]int, ovBuckets), retry: make([]int, ovBuckets)}
			for _, iv := range d.ops {
				for j, a := range iv.attempts {
					if j == 0 {
						c.first[bucket(a)]++
					} else {
						c.retry[bucket(a)]++
					}
				}
			}
			for b := range ovBuckets {
				o.MaxCount = max(o.MaxCount, c.first[b]+c.retry[b])
			}
			hist[i] = c
		}
	}

	y := float64(ovTop)
	for i, d := range deps {
		l := lane{LabelY: y + 14, SubY: y + 28}
		server, method := d.server, d.method
		if server == "" {
			server = "(no server.address)"
		}
		l.Label = esc(clip(server+" · "+dash(method), 34))
		l.Sub = esc(fmt.Sprintf("%s · %s · %s", plural(len(d.ops), "op"), plural(d.attempts, "attempt"), plural(d.retries, "retry")))
		l.Title = esc(fmt.Sprintf("%s %s: %s, %s, %s", server, dash(method), plural(len(d.ops), "operation"), plural(d.attempts, "attempt"), plural(d.retries, "retry")))
		h := 36.0
		if o.Histogram {
			base := y + 4 + ovHistH
			colW := (ovPlotX1 - ovPlotX0) / float64(ovBuckets)
			for b := range ovBuckets {
				first, retry := hist[i].first[b], hist[i].retry[b]
				if first+retry == 0 {
					continue
				}
				scale := ovHistH / float64(max(o.MaxCount, 1))
				fh := math.Max(round1(float64(first)*scale), 0)
				rh := math.Max(round1(float64(retry)*scale), 0)
				if first+retry > 0 && fh+rh < 1 { // visible however small
					if retry > 0 {
						rh = 1
					} else {
						fh = 1
					}
				}
				c := column{X: round1(ovPlotX0 + float64(b)*colW), W: round1(math.Max(colW-0.6, 0.8)),
					FirstY: round1(base - fh), FirstH: fh, RetryY: round1(base - fh - rh), RetryH: rh}
				l.Cols = append(l.Cols, c)
			}
			h = ovHistH + 10
		} else {
			var rowEnd []float64 // the right edge of the last bar of each sub-row
			for _, iv := range d.ops {
				x1, x2 := at(iv.start), at(iv.end)
				x2 = math.Max(x2, x1+3)
				sub := -1
				for k, e := range rowEnd {
					if e+2 <= x1 {
						sub = k
						break
					}
				}
				if sub < 0 {
					if len(rowEnd) < ovMaxSubRow {
						rowEnd = append(rowEnd, 0)
						sub = len(rowEnd) - 1
					} else {
						sub = len(rowEnd) - 1
					}
				}
				rowEnd[sub] = math.Max(rowEnd[sub], x2)
				op := &r.Operations[iv.index]
				top := y + 4 + float64(sub)*ovSubRowH
				b := opBar{X: x1, Y: top, Y2: top + 8, W: round1(x2 - x1), H: 8,
					Class: outcomeClass(op.Outcome), Anchor: anchorOf[iv.index],
					Title: esc(fmt.Sprintf("%s  %s %s  outcome %s  %s", orNone(op.ID), dash(op.Method), dash(op.URL), dash(op.Outcome), plural(len(op.Attempts), "attempt")))}
				for _, a := range iv.attempts[min(1, len(iv.attempts)):] {
					b.Retries = append(b.Retries, at(a))
				}
				l.Bars = append(l.Bars, b)
			}
			h = math.Max(h, float64(len(rowEnd))*ovSubRowH+8)
		}
		y += h + 6
		l.Separator = y - 3
		o.Lanes = append(o.Lanes, l)
	}
	o.Height = y + 4
	return o
}

// A chart is one distribution of the summary, as bars.
type chart struct {
	Title string
	Over  string
	Rows  []chartRow
	More  int
}

type chartRow struct {
	Label string
	Count int
	Pct   string
	W     float64
	Class string
}

const (
	chartBarWidth = 150
	chartMaxRows  = 12
)

func buildCharts(s *inspect.Summary) []chart {
	over := func(n int, noun string) string { return "over " + plural(n, noun) }
	charts := []chart{
		makeChart("attempts per operation", over(s.Operations, "operation"), s.AttemptsPerOperation, nil),
		makeChart("outcomes", over(s.Operations, "operation"), s.Outcomes, outcomeClass),
		makeChart("decisions", over(s.Attempts, "attempt"), s.Decisions, nil),
		makeChart("reasons", over(s.Attempts, "attempt"), s.Reasons, nil),
		makeChart("status codes", over(s.Attempts, "attempt"), s.StatusCodes, statusClass),
		makeChart("error classes", over(s.Attempts, "attempt"), s.ErrorClasses, errorClassClass),
	}
	return charts
}

func makeChart(title, over string, shares []inspect.Share, class func(string) string) chart {
	c := chart{Title: title, Over: esc(over)}
	for i, s := range shares {
		if i == chartMaxRows {
			c.More = len(shares) - i
			break
		}
		r := chartRow{Label: esc(clip(s.Value, 28)), Count: s.Count, Pct: fmt.Sprintf("%.1f%%", s.Share*100),
			W: round1(math.Max(s.Share*chartBarWidth, 1)), Class: "neutral"}
		if class != nil {
			r.Class = class(s.Value)
		}
		c.Rows = append(c.Rows, r)
	}
	return c
}

func statusClass(v string) string {
	code, err := strconv.ParseInt(v, 10, 64)
	at := inspect.Attempt{StatusCode: &code}
	if err != nil {
		return classUnknown
	}
	return attemptClass(&at)
}

func errorClassClass(v string) string {
	at := inspect.Attempt{ErrorClass: v}
	return attemptClass(&at)
}
