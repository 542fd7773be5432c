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

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// The incident overview: every operation on one time axis, one lane per
// dependency (the service they call), busiest first, so that a storm
// on one dependency stands out. With few operations each is a bar from its
// start to its end, coloured by outcome, with a tick at each retry; with
// many, each lane is a histogram of attempts over time, first attempts and
// retries stacked, on one scale for all lanes. Under it, on the same axis,
// the strip of the retry ratio and the budget's refusals.
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
	Outcome    string // for the legend
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
	ovPlotX0    = 250
	ovPlotX1    = 975
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
	attempts   []attemptStart
	// refusedAt is when the budget refused the retry that ended the
	// operation, when no attempt's decision records it (a call abandoned
	// after its pause, a state check's resend): the operation's end.
	refusedAt time.Time
}

// attemptStart is when an attempt started, and what it decided.
type attemptStart struct {
	start    time.Time
	decision string
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
		iv.attempts = append(iv.attempts, attemptStart{start, at.Decision})
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
	onAnAttempt := slices.ContainsFunc(op.Attempts, func(a inspect.Attempt) bool { return a.Decision == string(attrs.DecisionBudgetExhausted) })
	if op.Refused() == "budget" && !onAnAttempt { // an attempt's decision marks it already
		iv.refusedAt = iv.end
	}
	return iv, true
}

// dependency is the operations of one dependency, for the overview's
// lanes (inspect.Dependency has its figures).
type dependency struct {
	name     string
	ivs      []opInterval // of the operations with a start time
	attempts int
	extra    int // attempts after an operation's first: its retries and hedges, as its ticks and histogram draw them
}

// dependencies groups the operations by dependency (the service they
// call), in the order they first appear.
func dependencies(r *inspect.Report) []*dependency {
	byName := map[string]*dependency{}
	var deps []*dependency
	for i := range r.Operations {
		op := &r.Operations[i]
		d := byName[op.Dependency]
		if d == nil {
			d = &dependency{name: inspect.DependencyLabel(op.Dependency)}
			byName[op.Dependency] = d
			deps = append(deps, d)
		}
		if iv, ok := interval(i, op); ok {
			d.ivs = append(d.ivs, iv)
		}
		d.attempts += len(op.Attempts)
		d.extra += max(0, len(op.Attempts)-1)
	}
	return deps
}

// headline is the answer for one dependency: inspect.Dependency's
// headline, in the colour of its most frequent outcome other than return
// (return's when all returned).
type headline struct {
	Text, Class string
}

func headlines(r *inspect.Report) []headline {
	out := make([]headline, 0, len(r.Dependencies))
	for _, d := range r.Dependencies {
		class := valueClass(string(attrs.OutcomeReturn))
		if len(d.Outcomes) > 0 {
			class = valueClass(d.Outcomes[0].Value)
		}
		out = append(out, headline{Text: esc(d.Headline), Class: class})
	}
	return out
}

func buildOverview(r *inspect.Report, all []*dependency, anchorOf map[int]string) (overview, strip) {
	o := overview{Width: ovWidth, AxisY: ovAxisY}
	deps, t0, t1 := drawnDependencies(all)
	if len(deps) == 0 {
		o.Empty = "no operation with a start time"
		o.Height = ovTop
		return o, strip{}
	}
	if len(deps) > ovMaxLanes {
		rest, ops := deps[ovMaxLanes:], 0
		for _, d := range rest {
			ops += len(d.ivs)
		}
		o.LeftOut = fmt.Sprintf("%d more dependencies with %s are not drawn", len(rest), plural(ops, "operation"))
		deps = deps[:ovMaxLanes]
	}
	ax, ticks := niceAxis(0, msBetween(t0, t1), ovPlotX0, ovPlotX1, func(v float64) string { return "+" + fmtMs(v) })
	o.Ticks = ticks
	o.Start = esc(timestamp(t0))
	o.Histogram = len(r.Operations) > ovMaxBars
	var hist []laneCounts
	if o.Histogram {
		o.BucketWidth = esc(fmtMs((ax.hi - ax.lo) / ovBuckets))
		hist, o.MaxCount = histograms(deps, t0, ax)
	}
	y := float64(ovTop)
	for i, d := range deps {
		l := laneOf(d, y)
		var h float64
		if o.Histogram {
			l.Cols, h = hist[i].columns(o.MaxCount, y)
		} else {
			l.Bars, h = operationBars(r, d, y, func(t time.Time) float64 { return ax.x(msBetween(t0, t)) }, anchorOf)
		}
		y += h + 6
		l.Separator = y - 3
		o.Lanes = append(o.Lanes, l)
	}
	o.Height = y + 4
	return o, buildStrip(deps, t0, ax, ticks)
}

// drawnDependencies are the dependencies of all with an operation that
// has a start time, the busiest first (the most attempts, then the most
// operations), and the first start and the last end of their operations.
func drawnDependencies(all []*dependency) (deps []*dependency, t0, t1 time.Time) {
	for _, d := range all {
		if len(d.ivs) > 0 {
			deps = append(deps, d)
		}
		for _, iv := range d.ivs {
			if t0.IsZero() || iv.start.Before(t0) {
				t0 = iv.start
			}
			if iv.end.After(t1) {
				t1 = iv.end
			}
		}
	}
	slices.SortStableFunc(deps, func(a, b *dependency) int {
		return cmp.Or(cmp.Compare(b.attempts, a.attempts), cmp.Compare(len(b.ivs), len(a.ivs)))
	})
	return deps, t0, t1
}

// laneOf is d's lane at y, without its drawing: its name and counts.
func laneOf(d *dependency, y float64) lane {
	l := lane{LabelY: y + 14, SubY: y + 28}
	l.Label = esc(fitAt(d.name, ovPlotX0-14, 12)) // bold 11.5px
	l.Sub = esc(fitAt(fmt.Sprintf("%s · %s · %s", plural(len(d.ivs), "op"), plural(d.attempts, "attempt"), plural(d.extra, "extra attempt")), ovPlotX0-14, 10.5))
	l.Title = esc(fmt.Sprintf("%s: %s, %s, %s", d.name, plural(len(d.ivs), "operation"), plural(d.attempts, "attempt"), plural(d.extra, "extra attempt")))
	return l
}

// laneCounts are a lane's attempts per column of its histogram, first
// attempts apart from retries.
type laneCounts struct{ first, retry []int }

// histograms count each dependency's attempts per column of the axis,
// and return the most any column holds.
func histograms(deps []*dependency, t0 time.Time, ax axis) (hist []laneCounts, most int) {
	bucket := func(t time.Time) int {
		f := (msBetween(t0, t) - ax.lo) / (ax.hi - ax.lo)
		return max(0, min(ovBuckets-1, int(math.Floor(f*ovBuckets))))
	}
	hist = make([]laneCounts, len(deps))
	for i, d := range deps {
		c := laneCounts{first: make([]int, ovBuckets), retry: make([]int, ovBuckets)}
		for _, iv := range d.ivs {
			for j, a := range iv.attempts {
				if j == 0 {
					c.first[bucket(a.start)]++
				} else {
					c.retry[bucket(a.start)]++
				}
			}
		}
		for b := range ovBuckets {
			most = max(most, c.first[b]+c.retry[b])
		}
		hist[i] = c
	}
	return hist, most
}

// columns draws c's histogram in the lane at y, scaled to most, and
// returns its columns and the lane's height.
func (c laneCounts) columns(most int, y float64) ([]column, float64) {
	var cols []column
	base := y + 4 + ovHistH
	colW := (ovPlotX1 - ovPlotX0) / float64(ovBuckets)
	for b := range ovBuckets {
		first, retry := c.first[b], c.retry[b]
		if first+retry == 0 {
			continue
		}
		scale := ovHistH / float64(max(most, 1))
		fh := math.Max(round1(float64(first)*scale), 0)
		rh := math.Max(round1(float64(retry)*scale), 0)
		if fh+rh < 1 { // visible however small
			if retry > 0 {
				rh = 1
			} else {
				fh = 1
			}
		}
		cols = append(cols, column{X: round1(ovPlotX0 + float64(b)*colW), W: round1(math.Max(colW-0.6, 0.8)),
			FirstY: round1(base - fh), FirstH: fh, RetryY: round1(base - fh - rh), RetryH: rh})
	}
	return cols, ovHistH + 10
}

// operationBars draws each of d's operations as a bar in the lane at y,
// at its times' x (at), in the first sub-row where it fits (the last when
// none does), and returns the bars and the lane's height.
func operationBars(r *inspect.Report, d *dependency, y float64, at func(time.Time) float64, anchorOf map[int]string) ([]opBar, float64) {
	var bars []opBar
	var rowEnd []float64 // the right edge of the last bar of each sub-row
	for _, iv := range d.ivs {
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
			}
			sub = len(rowEnd) - 1
		}
		rowEnd[sub] = math.Max(rowEnd[sub], x2)
		op := &r.Operations[iv.index]
		top := y + 4 + float64(sub)*ovSubRowH
		b := opBar{X: x1, Y: top, Y2: top + 8, W: round1(x2 - x1), H: 8,
			Class: valueClass(op.Outcome), Outcome: legendValue(op.Outcome), Anchor: anchorOf[iv.index],
			Title: esc(fmt.Sprintf("%s  %s %s  outcome %s  %s", orNone(op.ID), dash(op.Method), dash(op.URL), dash(op.Outcome), plural(len(op.Attempts), "attempt")))}
		for _, a := range iv.attempts[min(1, len(iv.attempts)):] {
			b.Retries = append(b.Retries, at(a.start))
		}
		bars = append(bars, b)
	}
	return bars, math.Max(36, float64(len(rowEnd))*ovSubRowH+8)
}

// strip is the retry ratio over time, on the overview's axis: a column
// per stretch of time, as tall as the share of the attempts started then
// that decided retry, and under it a mark wherever the retry budget
// refused a retry (budget_exhausted).
type strip struct {
	Width, Height  float64
	Top, Base      float64 // the columns' band: 100% at Top, 0 at Base
	MarkY          float64 // the refusals' band
	LabelX         float64
	AxisLabelX     float64 // the right end of the 0% and 100% labels
	PlotX0, PlotX1 float64
	Ticks          []tick
	Cols           []rateColumn
	Refusals       []refusalMark
	Note           string
	Empty          bool
	RetryClass     string
	RefusedClass   string
	RatioLabelY    float64
	RefusalsLabelY float64
}

type rateColumn struct {
	X, W, Y, H float64
	Ratio      string // retries / attempts, for the tooltip and the tests
	Title      string
}

type refusalMark struct {
	Points string
	Count  int
	Title  string
}

const (
	stMaxBuckets = 60
	stMinBuckets = 12
	stTop        = 8
	stBandH      = 40
)

// stripEvent is an attempt the strip counts: when it started, in ms from
// the overview's start, and what it decided.
type stripEvent struct {
	at       float64
	decision string
}

// stripEvents are the attempts of deps, and the times (ms from t0) of the
// budget's refusals no attempt's decision records.
func stripEvents(deps []*dependency, t0 time.Time) (events []stripEvent, refusals []float64) {
	for _, d := range deps {
		for _, iv := range d.ivs {
			for _, a := range iv.attempts {
				events = append(events, stripEvent{msBetween(t0, a.start), a.decision})
			}
			if !iv.refusedAt.IsZero() {
				refusals = append(refusals, msBetween(t0, iv.refusedAt))
			}
		}
	}
	return events, refusals
}

func buildStrip(deps []*dependency, t0 time.Time, ax axis, ticks []tick) strip {
	events, refusals := stripEvents(deps, t0)
	s := strip{Width: ovWidth, Top: stTop, Base: stTop + stBandH, LabelX: 6, Ticks: ticks,
		AxisLabelX: ovPlotX0 - 6, PlotX0: ovPlotX0, PlotX1: ovPlotX1,
		RetryClass: valueClass(string(attrs.DecisionRetry)), RefusedClass: valueClass(string(attrs.DecisionBudgetExhausted))}
	s.MarkY = s.Base + 6
	s.Height = s.MarkY + 16
	s.RatioLabelY, s.RefusalsLabelY = s.Top+stBandH/2+4, s.MarkY+10
	if len(events) == 0 {
		s.Empty = true
		return s
	}
	// Columns of a round span of time, as many as the attempts fill.
	span := roundUp((ax.hi - ax.lo) / float64(max(stMinBuckets, min(stMaxBuckets, len(events)/4))))
	nb := max(1, int(math.Ceil((ax.hi-ax.lo)/span)))
	attempts, retries, refused := make([]int, nb), make([]int, nb), make([]int, nb)
	bucket := func(at float64) int { return max(0, min(nb-1, int(math.Floor((at-ax.lo)/span)))) }
	for _, e := range events {
		b := bucket(e.at)
		attempts[b]++
		switch e.decision {
		case string(attrs.DecisionRetry):
			retries[b]++
		case string(attrs.DecisionBudgetExhausted):
			refused[b]++
		}
	}
	for _, at := range refusals {
		refused[bucket(at)]++
	}
	colW := (ovPlotX1 - ovPlotX0) / float64(nb)
	peak, peakAt, totalRefused, firstRefused := -1.0, 0, 0, -1
	for b := range nb {
		x := round1(ovPlotX0 + float64(b)*colW)
		from := "+" + fmtMs(ax.lo+float64(b)*span)
		if attempts[b] > 0 {
			ratio := float64(retries[b]) / float64(attempts[b])
			h := math.Max(round1(ratio*stBandH), 0.8) // a zero ratio shows as a line
			s.Cols = append(s.Cols, rateColumn{X: x, W: round1(math.Max(colW-1, 0.8)), Y: round1(s.Base - h), H: h,
				Ratio: strconv.FormatFloat(ratio, 'f', 4, 64),
				Title: esc(fmt.Sprintf("from %s: %d of %s decided retry", from, retries[b], plural(attempts[b], "attempt")))})
			if ratio > peak {
				peak, peakAt = ratio, b
			}
		}
		if refused[b] > 0 {
			mid := x + colW/2
			s.Refusals = append(s.Refusals, refusalMark{Count: refused[b],
				Points: fmt.Sprintf("%g,%g %g,%g %g,%g", round1(mid-5), s.MarkY+10, round1(mid+5), s.MarkY+10, round1(mid), s.MarkY),
				Title:  esc(fmt.Sprintf("from %s: the budget refused %s", from, plural(refused[b], "retry")))})
			totalRefused += refused[b]
			if firstRefused < 0 {
				firstRefused = b
			}
		}
	}
	note := fmt.Sprintf("Retry ratio: each column is the share of the attempts started in its %s that decided retry (the highest %.0f%%, from +%s); ",
		fmtMs(span), 100*peak, fmtMs(ax.lo+float64(peakAt)*span))
	if totalRefused > 0 {
		note += fmt.Sprintf("a triangle marks where the budget refused retries: the budget refused %s, the first from +%s.",
			plural(totalRefused, "retry"), fmtMs(ax.lo+float64(firstRefused)*span))
	} else {
		note += "the budget refused no retry."
	}
	s.Note = esc(note)
	return s
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
		makeChart("outcomes", over(s.Operations, "operation"), s.Outcomes, valueClass),
		makeChart("decisions", over(s.Attempts, "attempt"), s.Decisions, valueClass),
		makeChart("reasons", over(s.Attempts, "attempt"), s.Reasons, nil),
		makeChart("status codes", over(s.Attempts, "attempt"), s.StatusCodes, nil),
		makeChart("error classes", over(s.Attempts, "attempt"), s.ErrorClasses, nil),
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
		r := chartRow{Label: esc(s.Value), Count: s.Count, Pct: fmt.Sprintf("%.1f%%", s.Share*100),
			W: round1(math.Max(s.Share*chartBarWidth, 1)), Class: "neutral"}
		if class != nil {
			r.Class = class(s.Value)
		}
		c.Rows = append(c.Rows, r)
	}
	return c
}

// roundUp rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func roundUp(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if v <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}
