// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// The HTML report is one self-contained file: inline CSS and SVG, no
// script, no font, image or style sheet from anywhere, and a Content
// Security Policy that forbids loading any. Every value from the input is
// first escaped as the text report escapes it (control, bidirectional and
// invalid bytes as Go escapes; URLs were sanitized by the inspector), then
// by html/template for its context: the HTML report shows ids and URLs
// exactly as the text report prints them, and never as markup.

//go:embed html.tmpl
var htmlTemplate string

var htmlPage = template.Must(template.New("report").Parse(htmlTemplate))

// Defaults of HTMLOptions.
const (
	// DefaultHTMLOperations is how many operations get a timeline.
	DefaultHTMLOperations = 200
	// DefaultHTMLFindings is how many findings are listed one by one.
	DefaultHTMLFindings = 500
)

// HTMLOptions tune the HTML report. The zero value is ready to use.
type HTMLOptions struct {
	// Source says where the spans came from (a file name, a Jaeger query);
	// it is shown escaped.
	Source string
	// MaxOperations bounds the timelines drawn (DefaultHTMLOperations when
	// 0). With more operations, the worst are drawn, worst first: those
	// with a finding, then those with the most attempts; the page says
	// what it left out.
	MaxOperations int
	// MaxFindings bounds the findings listed one by one
	// (DefaultHTMLFindings when 0); all are counted by code.
	MaxFindings int
}

// HTML writes r as one self-contained HTML page for a browser: a timeline
// of each operation's attempts on its own time axis, an overview of all
// operations on one time axis grouped by server and method, distributions
// of the summary, then the findings and notes in the text report's words,
// each linked to the operations it names.
func HTML(w io.Writer, r *inspect.Report, o HTMLOptions) error {
	if o.MaxOperations <= 0 {
		o.MaxOperations = DefaultHTMLOperations
	}
	if o.MaxFindings <= 0 {
		o.MaxFindings = DefaultHTMLFindings
	}
	page := buildPage(r, o)
	bw := bufio.NewWriter(w)
	if err := htmlPage.Execute(bw, page); err != nil {
		return err
	}
	return bw.Flush()
}

// page is what the template renders. Every string in it is already
// escaped for the terminal (esc); html/template escapes it for HTML.
type page struct {
	Source   string
	Counts   string
	Cards    []card
	Overview overview
	Charts   []chart
	Legend   []legendItem

	Findings        []findingView
	FindingsByCode  []codeCount
	FindingsLeftOut int
	Notes           []findingView

	Ops        []timeline
	OpsNote    string   // which operations are drawn, in which order
	OpsLeftOut []string // what the left-out operations were
}

type card struct {
	Value, Label, Detail string
	Alert                bool
}

type legendItem struct{ Class, Label string }

type codeCount struct {
	Code  string
	Count int
}

type findingView struct {
	Anchor string // id of the list item
	Code   string
	Where  string
	Seen   string
	Check  string
	Ops    []opLink
}

type opLink struct {
	ID     string
	Anchor string // "" when the operation is not drawn
}

// esc writes a value from the input as the text report does.
func esc(s string) string { return escape(s) }

func buildPage(r *inspect.Report, o HTMLOptions) *page {
	p := &page{Source: esc(o.Source), Counts: esc(countsLine(r))}
	drawn := selectOps(r, o.MaxOperations)
	anchorOf := make(map[int]string, len(drawn))
	for _, i := range drawn {
		anchorOf[i] = "op-" + strconv.Itoa(i)
	}

	// The findings of each operation, for the badges on its timeline.
	findingsOf := map[int][]findingRef{}
	byCode := map[inspect.Code]int{}
	for i, f := range r.Findings {
		byCode[f.Code]++
		listed := i < o.MaxFindings
		for _, opIdx := range f.Operations() {
			ref := findingRef{Code: string(f.Code)}
			if listed {
				ref.Anchor = "finding-" + strconv.Itoa(i)
			}
			findingsOf[opIdx] = append(findingsOf[opIdx], ref)
		}
		if listed {
			p.Findings = append(p.Findings, viewFinding(r, f, "finding-"+strconv.Itoa(i), anchorOf))
		}
	}
	p.FindingsLeftOut = max(0, len(r.Findings)-o.MaxFindings)
	for _, c := range inspect.Codes() {
		if n := byCode[c]; n > 0 {
			p.FindingsByCode = append(p.FindingsByCode, codeCount{string(c), n})
		}
	}
	for i, n := range r.Notes {
		p.Notes = append(p.Notes, viewFinding(r, n, "note-"+strconv.Itoa(i), anchorOf))
	}

	s := &r.Summary
	p.Cards = []card{
		{Value: strconv.Itoa(s.Operations), Label: "operations"},
		{Value: strconv.Itoa(s.Attempts), Label: "attempts"},
		{Value: fmt.Sprintf("%.3f", s.RetryRatio.Value), Label: "retry ratio",
			Detail: fmt.Sprintf("%d of %s", s.RetryRatio.Count, plural(s.RetryRatio.Total, "attempt"))},
		{Value: fmt.Sprintf("%.3f", s.DeadlineRatio.Value), Label: "deadline ratio",
			Detail: fmt.Sprintf("%d of %s", s.DeadlineRatio.Count, plural(s.DeadlineRatio.Total, "operation"))},
		{Value: strconv.Itoa(len(r.Findings)), Label: "findings", Alert: len(r.Findings) > 0},
		{Value: strconv.Itoa(len(r.Notes)), Label: "notes"},
	}
	p.Overview = buildOverview(r, anchorOf)
	p.Charts = buildCharts(s)
	p.Legend = legend()

	for _, i := range drawn {
		p.Ops = append(p.Ops, buildTimeline(&r.Operations[i], i, findingsOf[i]))
	}
	n := len(r.Operations)
	switch {
	case n == 0:
		p.OpsNote = "no operations: no span carries the retry attributes"
	case len(drawn) == n:
		p.OpsNote = fmt.Sprintf("all %s, in time order", plural(n, "operation"))
	default:
		p.OpsNote = fmt.Sprintf("the %d worst of %s, worst first: those with findings, then the most attempts, then those that did not return",
			len(drawn), plural(n, "operation"))
		p.OpsLeftOut = leftOut(r, drawn, findingsOf)
	}
	return p
}

func viewFinding(r *inspect.Report, f inspect.Finding, anchor string, anchorOf map[int]string) findingView {
	v := findingView{Anchor: anchor, Code: esc(string(f.Code)), Where: esc(findingWhere(f)), Seen: esc(f.Seen), Check: esc(f.Check)}
	for _, i := range f.Operations() {
		if i < 0 || i >= len(r.Operations) {
			continue
		}
		v.Ops = append(v.Ops, opLink{ID: esc(orNone(r.Operations[i].ID)), Anchor: anchorOf[i]})
	}
	return v
}

// selectOps returns the positions of the operations to draw: all of them
// in report (time) order when they fit, else the worst max of them, worst
// first.
func selectOps(r *inspect.Report, max int) []int {
	n := len(r.Operations)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if n <= max {
		return idx
	}
	findings := make([]int, n)
	for _, f := range r.Findings {
		for _, i := range f.Operations() {
			findings[i]++
		}
	}
	worse := func(i int) (int, int, int) {
		op := &r.Operations[i]
		notReturned := 0
		if op.Outcome != string(attrs.OutcomeReturn) {
			notReturned = 1
		}
		return min(findings[i], 1), len(op.Attempts), notReturned
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		fa, aa, ra := worse(a)
		fb, ab, rb := worse(b)
		switch {
		case fa != fb:
			return fb - fa
		case aa != ab:
			return ab - aa
		default:
			return rb - ra
		}
	})
	return idx[:max]
}

// leftOut describes the operations not drawn: how many, their outcomes
// and attempt counts, and how many of them have findings.
func leftOut(r *inspect.Report, drawn []int, findingsOf map[int][]findingRef) []string {
	isDrawn := make([]bool, len(r.Operations))
	for _, i := range drawn {
		isDrawn[i] = true
	}
	var rest []inspect.Operation
	withFindings := 0
	for i := range r.Operations {
		if !isDrawn[i] {
			rest = append(rest, r.Operations[i])
			if len(findingsOf[i]) > 0 {
				withFindings++
			}
		}
	}
	// The summary of the left-out operations, as the report summarizes
	// all of them.
	s := inspect.Summarize(rest)
	lines := []string{
		fmt.Sprintf("left out: %s with %s", plural(len(rest), "operation"), plural(s.Attempts, "attempt")),
		"outcomes: " + shares(s.Outcomes),
		"attempts per operation: " + shares(s.AttemptsPerOperation),
	}
	if withFindings > 0 {
		lines = append(lines, fmt.Sprintf("%d of them with findings (listed under Findings)", withFindings))
	} else {
		lines = append(lines, "none of them has a finding")
	}
	for i := range lines {
		lines[i] = esc(lines[i])
	}
	return lines
}

// Result classes: the colour of an attempt (its status or error class) and
// of an operation (its outcome). The template's CSS defines each.
const (
	classOK       = "ok"   // 1xx-3xx
	class4xx      = "s4xx" // 4xx
	class5xx      = "s5xx" // 5xx and other statuses
	classTimeout  = "timeout"
	classCanceled = "canceled"
	classNetwork  = "neterr" // other error classes
	classUnknown  = "unknown"
)

func legend() []legendItem {
	return []legendItem{
		{classOK, "1xx-3xx"}, {class4xx, "4xx"}, {class5xx, "5xx"}, {classTimeout, "timeout"},
		{classNetwork, "other error class"}, {classCanceled, "canceled"}, {classUnknown, "status and error class, or neither"},
	}
}

func attemptClass(at *inspect.Attempt) string {
	switch {
	case at.StatusCode != nil && at.ErrorClass != "", at.StatusCode == nil && at.ErrorClass == "":
		return classUnknown
	case at.StatusCode != nil && *at.StatusCode >= 100 && *at.StatusCode < 400:
		return classOK
	case at.StatusCode != nil && *at.StatusCode >= 400 && *at.StatusCode < 500:
		return class4xx
	case at.StatusCode != nil:
		return class5xx
	case at.ErrorClass == string(attrs.ErrorClassTimeout):
		return classTimeout
	case at.ErrorClass == string(attrs.ErrorClassCanceled):
		return classCanceled
	default:
		return classNetwork
	}
}

func outcomeClass(outcome string) string {
	switch attrs.Outcome(outcome) {
	case attrs.OutcomeReturn:
		return "o-return"
	case attrs.OutcomeCheckState:
		return "o-check"
	case attrs.OutcomeDeadlineExceeded:
		return "o-deadline"
	case attrs.OutcomeMaxAttempts:
		return "o-max"
	case attrs.OutcomeStop, attrs.OutcomeBudgetExhausted:
		return "o-stop"
	case attrs.OutcomeCanceled:
		return "o-canceled"
	default:
		return "o-unknown"
	}
}

// shortResult is an attempt's result for a label: "503", "timeout".
func shortResult(at *inspect.Attempt) string {
	var parts []string
	if at.StatusCode != nil {
		parts = append(parts, strconv.FormatInt(*at.StatusCode, 10))
	}
	if at.ErrorClass != "" {
		parts = append(parts, at.ErrorClass)
	}
	if len(parts) == 0 {
		return "no result"
	}
	return strings.Join(parts, " + ")
}

// clip shortens s to at most n runes for a label in a drawing; the full
// value is in the tooltip and the table.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// textWidth estimates the width in pixels of a label at the drawings'
// 11px font.
func textWidth(s string) float64 { return 6.0 * float64(utf8.RuneCountInString(s)) }

// fmtMs writes a duration in milliseconds for an axis or a label.
func fmtMs(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e12:
		return strconv.FormatFloat(v/1000, 'g', 3, 64) + " s"
	case a >= 1000:
		return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(v/1000, 'f', 2, 64), "0"), ".") + " s"
	default:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64) + " ms"
	}
}

// axis maps a range of milliseconds onto pixels.
type axis struct {
	lo, hi   float64 // milliseconds
	px0, px1 float64 // pixels
}

func (a axis) x(v float64) float64 {
	if a.hi <= a.lo {
		return a.px0
	}
	f := (v - a.lo) / (a.hi - a.lo)
	f = math.Max(-0.02, math.Min(1.02, f)) // beyond the range: at its edge
	return round1(a.px0 + f*(a.px1-a.px0))
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

type tick struct {
	X     float64
	Label string
}

// niceAxis maps [lo, hi] (lo widened down to a round step, hi by 2%)
// onto pixels and returns its ticks, at round steps, labelled by label.
func niceAxis(lo, hi, px0, px1 float64, label func(float64) string) (axis, []tick) {
	if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
	}
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / 7
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if raw <= m*mag {
			step = m * mag
			break
		}
	}
	lo = math.Floor(lo/step) * step
	hi += (hi - lo) * 0.02
	a := axis{lo: lo, hi: hi, px0: px0, px1: px1}
	var ticks []tick
	for i := 0; i <= 14; i++ {
		v := lo + float64(i)*step
		if v > hi {
			break
		}
		ticks = append(ticks, tick{X: a.x(v), Label: label(v)})
	}
	return a, ticks
}

// An operation's timeline: a waterfall of its attempts on the operation's
// time axis (0 is the operation's start), one row per attempt or state
// check. Each attempt is a bar from its start to its start plus its
// elapsed time, coloured by its result, labelled with its result, decision
// and reason; the pause before it is drawn as a dashed gap from the end of
// the attempt before; the time it had left (retry.remaining_ms) is in the
// left column and drawn as a thin line from its start. The deadline is a
// vertical line; an operation that ended deadline_exceeded shows the cut.
type timeline struct {
	Anchor   string
	Title    string
	Outcome  string
	OutClass string
	Details  string
	Findings []findingRef

	Width, Height float64
	AxisY, GridY2 float64
	PlotX0        float64
	LeftX         float64 // right edge of the time-left column
	EmptyY        float64
	DeadlineY     float64
	Ticks         []tick
	Rows          []row
	Deadline      *marker
	Cut           *cut
	Empty         string // why there is no attempt to draw

	Table     [][]string
	TableOpen bool
}

type findingRef struct {
	Code   string
	Anchor string // "" when the finding is not listed
}

type row struct {
	Y, BarY, TextY float64
	Kind           string // attempt, check
	Number         string
	Left           string // time left before the call
	X, W           float64
	Class          string
	Label          string
	LabelX         float64
	LabelEnd       bool // anchor the label at its end (left of the bar)
	LabelIn        bool // the label is inside the bar
	Title          string
	Decision       string
	Pause          *pause
	Budget         *segment
}

type pause struct {
	X1, X2, Y      float64
	LabelX, LabelY float64
	Label          string
}

// segment is a horizontal line from X1 to X2 at Y, ending in a tick from
// Y1 to Y2.
type segment struct{ X1, X2, Y, Y1, Y2 float64 }

type marker struct {
	X     float64
	Label string
}

// cut is where the deadline stopped an operation: the time left after its
// last call (X1 to the deadline at X2, hatched) and the pause that would
// have followed (from X1, PauseW wide, dashed), which crosses the deadline.
type cut struct {
	BarY, TextY     float64
	LineY1, LineY2  float64
	X1, X2, W       float64
	PauseW          float64
	HasPause, Arrow bool // Arrow: the pause runs beyond the axis
	ArrowPoints     string
	Label           string
	LabelX          float64
	LabelEnd        bool // anchor the label at its end (left of the cut)
}

// Layout of a timeline, in pixels of its viewBox.
const (
	tlWidth  = 1000
	tlPlotX0 = 150
	tlPlotX1 = 840
	tlAxisY  = 22
	tlTop    = 30 // first row
	tlRowH   = 34
	tlBottom = 26 // below the last row: the deadline's label
)

func buildTimeline(op *inspect.Operation, index int, findings []findingRef) timeline {
	t := timeline{
		Anchor:   "op-" + strconv.Itoa(index),
		Title:    esc(fmt.Sprintf("%s  %s %s", orNone(op.ID), dash(op.Method), dash(op.URL))),
		Outcome:  esc(dash(op.Outcome)),
		OutClass: outcomeClass(op.Outcome),
		Details:  esc(strings.Join(opDetails(op), "  ·  ")),
		Findings: findings,
		Width:    tlWidth, PlotX0: tlPlotX0, AxisY: tlAxisY,
	}
	if len(op.Attempts) > 0 || len(op.StateChecks) > 0 {
		for _, cols := range attemptRows(op) {
			for i := range cols {
				cols[i] = esc(cols[i])
			}
			t.Table = append(t.Table, cols)
		}
	}

	// The extent of the axis: 0 (the operation's start) to the latest of
	// the operation's end, the deadline and every attempt's end.
	lo, hi := 0.0, 1.0
	extend := func(v float64) {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if !op.End.IsZero() && !op.Start.IsZero() {
		extend(msBetween(op.Start, op.End))
	}
	if op.DeadlineMs != nil {
		extend(float64(*op.DeadlineMs))
	}
	type span struct{ start, end float64 }
	spans := make([]span, len(op.Attempts))
	for i := range op.Attempts {
		at := &op.Attempts[i]
		s := attemptSpan(op, at)
		spans[i] = span{s[0], s[1]}
		extend(s[0])
		extend(s[1])
	}
	for _, c := range op.StateChecks {
		if c.OffsetMs != nil {
			extend(float64(*c.OffsetMs))
		}
	}
	// The cut: an operation whose last attempt decided deadline_exceeded,
	// or that ended so after at least one attempt.
	n := len(op.Attempts)
	var cutPause *float64
	cutFrom, cutAt := math.NaN(), math.NaN()
	var cutLabel string
	deadlineCut := op.Outcome == string(attrs.OutcomeDeadlineExceeded) ||
		n > 0 && op.Attempts[n-1].Decision == string(attrs.DecisionDeadlineExceeded)
	if deadlineCut && n > 0 {
		last := &op.Attempts[n-1]
		cutFrom = spans[n-1].end
		switch {
		case op.DeadlineMs != nil:
			cutAt = float64(*op.DeadlineMs)
		case last.RemainingMs != nil:
			cutAt = spans[n-1].start + float64(*last.RemainingMs)
		}
		cutPause, cutLabel = describeCut(op, cutFrom, cutAt)
		if !math.IsNaN(cutAt) {
			extend(cutAt)
		}
	}
	// A pause may be far longer than the operation (a Retry-After of a
	// minute): draw it up to 1.6 times the rest, with an arrow.
	pauseEnd, arrow := math.NaN(), false
	if cutPause != nil {
		pauseEnd = cutFrom + *cutPause
		if limit := lo + (hi-lo)*1.6; pauseEnd > limit {
			pauseEnd, arrow = limit, true
		}
		extend(pauseEnd)
	}
	ax, ticks := niceAxis(lo, hi, tlPlotX0, tlPlotX1, fmtMs)
	t.Ticks = ticks

	y := float64(tlTop)
	checks := op.StateChecks
	addCheck := func(c inspect.StateCheck) {
		at := 0.0
		if c.OffsetMs != nil {
			at = float64(*c.OffsetMs)
		}
		x := ax.x(at)
		t.Rows = append(t.Rows, row{
			Y: y, BarY: y + 12, TextY: y + 23, Kind: "check", Number: "-",
			X: x, Class: "check", Label: esc("state_check " + dash(c.Result)), LabelX: x + 12,
			Title: esc(fmt.Sprintf("state check: %s at %s (span %s)", dash(c.Result), offset(c.OffsetMs), c.SpanID)),
		})
		y += tlRowH
	}
	prevEnd := math.NaN()
	var prevBackoff *int64
	for i := range op.Attempts {
		at := &op.Attempts[i]
		for len(checks) > 0 && !checks[0].Start.After(at.Start) {
			addCheck(checks[0])
			checks = checks[1:]
		}
		x1, x2 := ax.x(spans[i].start), ax.x(spans[i].end)
		w := math.Max(x2-x1, 2)
		r := row{
			Y: y, BarY: y + 12, TextY: y + 23, Kind: "attempt",
			Number: "#" + number(at.Number), X: x1, W: round1(w), Class: attemptClass(at),
			Decision: esc(at.Decision),
			Title: esc(fmt.Sprintf("attempt %s  %s  %s  at %s  elapsed %s  remaining %s  decision %s  reason %s  retry-after %s  backoff %s  span %s",
				number(at.Number), dash(at.RequestID), result(*at), offset(at.OffsetMs), ms(at.ElapsedMs), ms(at.RemainingMs),
				dash(at.Decision), dash(at.Reason), ms(at.RetryAfterMs), ms(at.BackoffMs), at.SpanID)),
		}
		if at.RemainingMs != nil {
			r.Left = esc(labelMs(float64(*at.RemainingMs)) + " left")
			end := ax.x(spans[i].start + float64(*at.RemainingMs))
			r.Budget = &segment{X1: x1, X2: end, Y: y + 30, Y1: y + 27, Y2: y + 33}
		} else {
			r.Left = "time left -"
		}
		parts := []string{shortResult(at), dash(at.Decision)}
		if at.Reason != "" {
			parts = append(parts, at.Reason)
		}
		r.Label = esc(clip(strings.Join(parts, " · "), 48))
		hasPause := !math.IsNaN(prevEnd) && spans[i].start > prevEnd
		r.LabelX, r.LabelEnd, r.LabelIn = placeLabel(textWidth(r.Label), x1, w, ax.x(pauseEndOr(prevEnd, spans[i].start)))
		if hasPause {
			gap := spans[i].start - prevEnd
			label := "pause " + labelMs(gap)
			if prevBackoff != nil && math.Abs(float64(*prevBackoff)-gap) > 1 {
				label += " (backoff " + labelMs(float64(*prevBackoff)) + ")"
			}
			px1 := ax.x(prevEnd)
			r.Pause = &pause{X1: px1, X2: x1, Y: y + 19, LabelX: round1((px1 + x1) / 2), LabelY: y + 9, Label: esc(label)}
			if half := textWidth(label) / 2; r.Pause.LabelX-half < tlPlotX0 {
				r.Pause.LabelX = round1(tlPlotX0 + half)
			}
		}
		t.Rows = append(t.Rows, r)
		y += tlRowH
		prevEnd, prevBackoff = spans[i].end, at.BackoffMs
	}
	for _, c := range checks {
		addCheck(c)
	}
	if deadlineCut && n > 0 && !math.IsNaN(cutAt) {
		x1, x2 := ax.x(math.Min(cutFrom, cutAt)), ax.x(cutAt)
		c := &cut{BarY: y + 12, TextY: y + 23, LineY1: y + 6, LineY2: y + 30,
			X1: x1, X2: x2, W: round1(x2 - x1), Label: esc(cutLabel)}
		// The label ends left of the cut when it fits there, else it
		// follows the pause.
		if w := textWidth(cutLabel) * 0.96; x1-8-w >= 40 {
			c.LabelX, c.LabelEnd = round1(x1-8), true
		} else {
			c.LabelX = round1(math.Max(x2, ax.x(pauseEndOr(pauseEnd, cutAt))) + 12)
		}
		if cutPause != nil {
			c.HasPause, c.Arrow = true, arrow
			px := ax.x(pauseEnd)
			c.PauseW = round1(math.Max(px-x1, 1))
			if arrow {
				c.ArrowPoints = fmt.Sprintf("%g,%g %g,%g %g,%g", px, y+13, px+8, y+19, px, y+25)
			}
		}
		t.Cut = c
		y += tlRowH
	}
	if n == 0 {
		t.Empty = "no attempts"
		if deadlineCut {
			t.Empty = "no attempt: the deadline was spent before the first call"
		}
		t.EmptyY = y + 14
		y += 22
	}
	if op.DeadlineMs != nil {
		t.Deadline = &marker{X: ax.x(float64(*op.DeadlineMs)), Label: esc("deadline " + labelMs(float64(*op.DeadlineMs)))}
	}
	t.Height = y + tlBottom
	t.GridY2 = y + 4
	t.DeadlineY = y + 18
	t.LeftX = tlPlotX0 - 10
	t.TableOpen = n <= 5
	return t
}

// placeLabel places the label of a bar from x1, w wide, whose pause
// starts at from: right of the bar when it fits there, else left of the
// pause (or of the bar), else inside the bar, else right of it all the
// same (the drawing lets it overflow).
func placeLabel(width, x1, w, from float64) (x float64, end, in bool) {
	switch left := math.Min(from, x1) - 6; {
	case x1+w+6+width <= tlWidth-4:
		return round1(x1 + w + 6), false, false
	case left-width >= tlPlotX0:
		return round1(left), true, false
	case width+8 <= w:
		return round1(x1 + 4), false, true
	default:
		return round1(x1 + w + 6), false, false
	}
}

// attemptSpan returns the start and end of an attempt on the operation's
// time axis, in milliseconds: from its offset, for its recorded elapsed
// time (the contract's own figure) or, without one, its span's duration.
func attemptSpan(op *inspect.Operation, at *inspect.Attempt) [2]float64 {
	start := 0.0
	switch {
	case at.OffsetMs != nil:
		start = float64(*at.OffsetMs)
	case !op.Start.IsZero() && !at.Start.IsZero():
		start = msBetween(op.Start, at.Start)
	}
	switch {
	case at.ElapsedMs != nil && *at.ElapsedMs >= 0:
		return [2]float64{start, start + float64(*at.ElapsedMs)}
	case !at.Start.IsZero() && !at.End.IsZero() && at.End.After(at.Start):
		return [2]float64{start, start + msBetween(at.Start, at.End)}
	}
	return [2]float64{start, start}
}

func msBetween(a, b time.Time) float64 { return float64(b.Sub(a)) / float64(time.Millisecond) }

// describeCut says why the deadline cut an operation: the time left after
// its last call, and the pause that would have followed: the server's
// Retry-After, or else the last backoff the operation recorded.
func describeCut(op *inspect.Operation, from, at float64) (pause *float64, label string) {
	last := &op.Attempts[len(op.Attempts)-1]
	label = dash(last.Decision)
	if last.Decision != string(attrs.DecisionDeadlineExceeded) {
		label = "outcome " + dash(op.Outcome)
	}
	if !math.IsNaN(at) {
		label += fmt.Sprintf(": %s left after attempt %s", labelMs(math.Max(at-from, 0)), number(last.Number))
	}
	what := ""
	if last.RetryAfterMs != nil {
		v := float64(*last.RetryAfterMs)
		pause, what = &v, "Retry-After"
	} else {
		for i := len(op.Attempts) - 1; i >= 0; i-- {
			if bo := op.Attempts[i].BackoffMs; bo != nil {
				v := float64(*bo)
				pause, what = &v, "backoff"
				break
			}
		}
	}
	if pause == nil {
		return nil, label
	}
	return pause, label + fmt.Sprintf(", less than the next pause (%s %s)", what, labelMs(*pause))
}

func pauseEndOr(end, or float64) float64 {
	if math.IsNaN(end) {
		return or
	}
	return end
}

// labelMs writes a duration in milliseconds for a label, as the contract
// and the text report count: "400 ms", "1000 ms".
func labelMs(v float64) string {
	if math.Abs(v) >= 1e6 {
		return fmtMs(v)
	}
	return strconv.FormatFloat(math.Round(v), 'f', -1, 64) + " ms"
}
