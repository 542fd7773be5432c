// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
)

// An operation's timeline: a waterfall of its attempts on the operation's
// own time axis (0 is the operation's start, the right end about its
// end), one row per attempt or state check. Each attempt is a bar from its
// start to its start plus its elapsed time, coloured by its decision,
// labelled with its result, decision and reason; the pause before it is
// drawn as a dashed gap from the end of the attempts before; the time it
// had left (retry.remaining_ms) is in the left column and drawn as a thin
// line from its start. The deadline is a vertical line when it falls near
// the operation's end, else a marker past the axis' end; an operation that
// ended deadline_exceeded shows the cut. Attempts may overlap in time (a
// hedged request): each keeps its row, a lane of its own, no pause is
// drawn before one that starts before the others ended, the rows of
// attempts in flight together share a band (a race: an attempt and its
// hedges), a dotted link drops from the attempt hedged to its hedge at the
// instant it was sent, and a superseded attempt (it lost the race) is
// drawn faded with a dashed outline.
//
// A group of identical operations is drawn as its first operation's
// timeline, with the count and the list of the others.
type timeline struct {
	Anchor   string
	Title    string
	Outcome  string // as recorded, escaped
	OutValue string // the outcome for the legend: a vocabulary value or "other"
	OutClass string
	Details  string
	Findings []findingRef

	Count     int    // operations the timeline stands for
	Severity  string // severityFinding, ...
	GroupNote string
	Members   []member
	MoreNote  string // the members not listed

	Width, Height float64
	AxisY, GridY2 float64
	PlotX0        float64
	PlotX1        float64
	LeftX         float64 // right edge of the time-left column
	EmptyY        float64
	DeadlineY     float64
	Ticks         []tick
	Races         []race
	Links         []hedgeLink
	Rows          []row
	Deadline      *marker
	Cut           *cut
	Empty         string // why there is no attempt to draw

	Table     [][]string
	TableOpen bool
}

// member is an operation of a group.
type member struct {
	ID, Anchor, When string
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
	Faded          bool // superseded: the bar is faded, its label dark
	Title          string
	Decision       string
	Pause          *pause
	Budget         *segment
}

// race is a band behind the rows of attempts in flight together: an
// attempt and its hedges.
type race struct {
	X, Y, W, H float64
	Attempts   string // their numbers, "1 2"
	Title      string
}

// hedgeLink drops from the bar of the attempt hedged to the bar of its
// hedge, at the hedge's start.
type hedgeLink struct {
	X, Y1, Y2 float64
	Title     string
}

type pause struct {
	X1, X2, Y      float64
	LabelX, LabelY float64
	Label          string
}

// segment is a horizontal line from X1 to X2 at Y, ending in a tick from
// Y1 to Y2, or, when it runs past the axis, in an arrow.
type segment struct {
	X1, X2, Y, Y1, Y2 float64
	Arrow             string // the arrow's points, when past the axis
}

// marker is the deadline: a line at X with its label, or, past the axis
// (OffAxis), a label and an arrow at the axis' end.
type marker struct {
	X       float64
	Label   string
	LabelX  float64
	OffAxis bool
	Arrow   string
}

// cut is where the deadline stopped an operation: the time left after its
// last call (X1 to the deadline at X2, hatched; when the deadline is far
// past the axis, only a mark at X1, where the operation stopped) and the
// pause that would have followed (from X1, PauseW wide, dashed), which
// crosses the deadline.
type cut struct {
	BarY, TextY     float64
	LineY1, LineY2  float64
	X1, X2, W       float64
	PauseW          float64
	HasPause, Arrow bool // Arrow: the pause runs beyond the axis
	ArrowPoints     string
	HasLeft         bool // the time left, hatched up to the deadline on the axis
	HasLine         bool // the deadline's line
	Stop            bool // the deadline is past the axis: a mark where the operation stopped
	Label           string
	LabelX, LabelY  float64
	LabelEnd        bool // anchor the label at its end (left of the cut)
}

// Layout of a timeline, in pixels of its viewBox.
const (
	tlWidth    = 1000
	tlPlotX0   = 150
	tlPlotX1   = 800
	tlTextEnd  = 994 // no label goes further right
	tlAxisY    = 22
	tlTop      = 30 // first row
	tlRowH     = 34
	tlBottom   = 26  // below the last row: the deadline's label
	tlNear     = 1.5 // a deadline or pause up to this times the operation's extent is drawn on its axis
	tlMinRange = 1.0 // ms: the shortest axis
)

// buildGroupTimeline draws the timeline of a group: its first operation's.
func buildGroupTimeline(r *inspect.Report, g *group, findings []findingRef) timeline {
	first := g.members[0]
	t := buildTimeline(&r.Operations[first], first, findings)
	t.Anchor, t.Count, t.Severity = g.anchor, len(g.members), g.severity
	if len(g.members) == 1 {
		return t
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, i := range g.members {
		op := &r.Operations[i]
		if !op.Start.IsZero() && !op.End.IsZero() {
			d := msBetween(op.Start, op.End)
			lo, hi = math.Min(lo, d), math.Max(hi, d)
		}
		if k < maxListedMembers {
			m := member{ID: esc(orNone(op.ID)), When: esc(timestamp(op.Start))}
			if k > 0 { // the first is the card itself
				m.Anchor = memberAnchor(i)
			}
			t.Members = append(t.Members, m)
		}
	}
	if n := len(g.members) - maxListedMembers; n > 0 {
		t.MoreNote = esc(fmt.Sprintf("and %d more", n))
	}
	note := fmt.Sprintf("%d identical operations: the same method, route, outcome and findings, the same decisions, results and hedges attempt by attempt; the timeline is the first one's", len(g.members))
	if !math.IsInf(lo, 0) {
		if labelMs(lo) == labelMs(hi) {
			note += "; each took " + labelMs(lo)
		} else {
			note += fmt.Sprintf("; they took %s to %s", labelMs(lo), labelMs(hi))
		}
	}
	t.GroupNote = esc(note)
	return t
}

func buildTimeline(op *inspect.Operation, index int, findings []findingRef) timeline {
	t := timelineHead(op, index, findings)
	p := planTimeline(op)
	t.Ticks = p.ticks
	d := rowDrawer{t: &t, plan: &p, y: tlTop, raceFrom: -1, prevEnd: math.NaN(), rowOf: map[int64]int{}}
	checks := op.StateChecks
	for i := range op.Attempts {
		at := &op.Attempts[i]
		for len(checks) > 0 && !checks[0].Start.After(at.Start) {
			d.check(checks[0])
			checks = checks[1:]
		}
		d.attempt(at, p.spans[i])
	}
	t.closeRace(d.raceFrom)
	d.raceFrom = -1
	for _, c := range checks {
		d.check(c)
	}
	y := d.y
	n := len(op.Attempts)
	if p.cut.on && n > 0 && !math.IsNaN(p.cut.at) {
		t.Cut, y = p.drawCut(y)
	}
	if n == 0 {
		t.Empty = "no attempts"
		if p.cut.on {
			t.Empty = "no attempt: the deadline was spent before the first call"
		}
		t.EmptyY = y + 14
		y += 22
	}
	t.Height = y + tlBottom
	t.GridY2 = y + 4
	t.DeadlineY = y + 18
	if op.DeadlineMs != nil {
		t.Deadline = p.deadlineMarker(t.DeadlineY)
	}
	t.LeftX = tlPlotX0 - 10
	t.TableOpen = n <= 5
	return t
}

// timelineHead is an operation's timeline without its drawing: its
// title, outcome, details, findings and table of attempts.
func timelineHead(op *inspect.Operation, index int, findings []findingRef) timeline {
	t := timeline{
		Anchor:   memberAnchor(index),
		Title:    esc(fmt.Sprintf("%s  %s %s", orNone(op.ID), dash(op.Method), dash(op.URL))),
		Outcome:  esc(dash(op.Outcome)),
		OutValue: legendValue(op.Outcome),
		OutClass: valueClass(op.Outcome),
		Details:  esc(strings.Join(opDetails(op), "  ·  ")),
		Findings: findings,
		Count:    1,
		Width:    tlWidth, PlotX0: tlPlotX0, PlotX1: tlPlotX1, AxisY: tlAxisY,
	}
	if len(op.Attempts) > 0 || len(op.StateChecks) > 0 {
		for _, cols := range attemptRows(op) {
			for i := range cols {
				cols[i] = esc(cols[i])
			}
			t.Table = append(t.Table, cols)
		}
	}
	return t
}

// msSpan is an attempt's start and end, in milliseconds from the
// operation's start.
type msSpan struct{ start, end float64 }

// timelinePlan is where an operation's timeline puts things: its axis,
// each attempt's span, the deadline and the deadline's cut.
type timelinePlan struct {
	ax         axis
	ticks      []tick
	spans      []msSpan // by attempt
	deadlineAt float64  // NaN: no deadline recorded
	cut        cutPlan
}

// cutPlan is where the deadline stopped an operation: its last attempt
// ended at from, the deadline was at, and the pause that would have
// followed (nil: none) ends at pauseEnd.
type cutPlan struct {
	on                 bool // the operation ended deadline_exceeded, or its last attempt decided so
	from, at, pauseEnd float64
	pause              *float64
	label              string
}

// planTimeline lays out op's axis: 0 (its start) to the latest of its
// end, every attempt's end and every state check, and, when near enough,
// its deadline and its cut's pause.
func planTimeline(op *inspect.Operation) timelinePlan {
	p := timelinePlan{spans: make([]msSpan, len(op.Attempts)), deadlineAt: math.NaN()}
	lo, hi := 0.0, 0.0
	extend := func(v float64) {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if !op.End.IsZero() && !op.Start.IsZero() {
		extend(msBetween(op.Start, op.End))
	}
	for i := range op.Attempts {
		s := attemptSpan(op, &op.Attempts[i])
		p.spans[i] = msSpan{s[0], s[1]}
		extend(s[0])
		extend(s[1])
	}
	for _, c := range op.StateChecks {
		if c.OffsetMs != nil {
			extend(float64(*c.OffsetMs))
		}
	}
	hi = math.Max(hi, lo+tlMinRange)
	// What lies near the operation's end is drawn on its axis; what lies
	// far beyond (a deadline of seconds after an operation of 1 ms) is a
	// marker at the axis' end.
	reach := lo + (hi-lo)*tlNear
	extendNear := func(v float64) {
		if !math.IsNaN(v) && v <= reach {
			extend(v)
		}
	}
	if op.DeadlineMs != nil {
		p.deadlineAt = float64(*op.DeadlineMs)
		extendNear(p.deadlineAt)
	}
	p.cut = p.planCut(op)
	extendNear(p.cut.at)
	extendNear(p.cut.pauseEnd)
	p.ax, p.ticks = niceAxis(lo, hi, tlPlotX0, tlPlotX1, fmtMs)
	return p
}

// planCut finds the cut: an operation whose last attempt (the one it
// ended on) decided deadline_exceeded, or that ended so after at least
// one attempt.
func (p *timelinePlan) planCut(op *inspect.Operation) cutPlan {
	c := cutPlan{from: math.NaN(), at: math.NaN(), pauseEnd: math.NaN()}
	end := op.Ending()
	c.on = op.Outcome == string(attrs.OutcomeDeadlineExceeded) ||
		end >= 0 && op.Attempts[end].Decision == string(attrs.DecisionDeadlineExceeded)
	if !c.on || end < 0 {
		return c
	}
	last := &op.Attempts[end]
	c.from = p.spans[end].end
	switch {
	case op.DeadlineMs != nil:
		c.at = p.deadlineAt
	case last.RemainingMs != nil:
		c.at = p.spans[end].start + float64(*last.RemainingMs)
	}
	c.pause, c.label = describeCut(op, end, c.from, c.at)
	if c.pause != nil {
		c.pauseEnd = c.from + *c.pause
	}
	return c
}

// xOf is the x of v on the axis, and whether v is past the axis' end.
func (p *timelinePlan) xOf(v float64) (float64, bool) {
	if v > p.ax.hi {
		return tlPlotX1, true
	}
	return p.ax.x(v), false
}

// rowDrawer draws a timeline's rows, one attempt or state check at a
// time, in the order they started, from y down.
type rowDrawer struct {
	t           *timeline
	plan        *timelinePlan
	y           float64
	raceFrom    int           // the row of the first attempt of the race under way (-1: none)
	prevEnd     float64       // the latest end of the attempts so far (NaN: none yet)
	prevBackoff *int64        // the backoff of the attempt that ended last so far
	rowOf       map[int64]int // the row of each attempt number, for the hedge links
}

// check draws a state check's row. A state check follows an attempt that
// ended: it ends a race.
func (d *rowDrawer) check(c inspect.StateCheck) {
	d.t.closeRace(d.raceFrom)
	d.raceFrom = -1
	at := 0.0
	if c.OffsetMs != nil {
		at = float64(*c.OffsetMs)
	}
	y := d.y
	x := d.plan.ax.x(at)
	label := "state_check " + dash(c.Result)
	r := row{
		Y: y, BarY: y + 12, TextY: y + 23, Kind: "check", Number: "-", X: x, Class: "check",
		Title: esc(fmt.Sprintf("state check: %s at %s (span %s)", dash(c.Result), offset(c.OffsetMs), c.SpanID)),
	}
	r.LabelX, r.LabelEnd, r.Label = placeText(label, x+12, x-10, false)
	r.Label = esc(r.Label)
	d.t.Rows = append(d.t.Rows, r)
	d.y += tlRowH
}

// attempt draws an attempt's row, sp its span: its bar, the time it had
// left, the pause before it and, for a hedge, the link from the attempt
// it hedged.
func (d *rowDrawer) attempt(at *inspect.Attempt, sp msSpan) {
	y, ax := d.y, d.plan.ax
	x1, x2 := ax.x(sp.start), ax.x(sp.end)
	w := math.Max(x2-x1, 2)
	r := row{
		Y: y, BarY: y + 12, TextY: y + 23, Kind: "attempt",
		Number: "#" + number(at.Number), X: x1, W: round1(w), Class: valueClass(at.Decision),
		Faded:    at.Decision == string(attrs.DecisionSuperseded),
		Decision: esc(legendValue(at.Decision)),
		Title: esc(fmt.Sprintf("attempt %s  %s  %s  at %s  elapsed %s  remaining %s  decision %s  reason %s  retry-after %s  backoff %s  span %s",
			number(at.Number), dash(at.RequestID), result(*at), offset(at.OffsetMs), ms(at.ElapsedMs), ms(at.RemainingMs),
			dash(at.Decision), dash(at.Reason), ms(at.RetryAfterMs), ms(at.BackoffMs), at.SpanID)),
	}
	if at.RemainingMs != nil {
		r.Left = esc(labelMs(float64(*at.RemainingMs)) + " left")
		end, past := d.plan.xOf(sp.start + float64(*at.RemainingMs))
		r.Budget = &segment{X1: x1, X2: end, Y: y + 30, Y1: y + 27, Y2: y + 33}
		if past {
			r.Budget.Arrow = fmt.Sprintf("%g,%g %g,%g %g,%g", end, y+27, end+6, y+30, end, y+33)
		}
	} else {
		r.Left = "time left -"
	}
	hasPause := !math.IsNaN(d.prevEnd) && sp.start > d.prevEnd
	leftOf := x1
	if hasPause {
		leftOf = math.Min(leftOf, ax.x(d.prevEnd))
	}
	var label string
	r.LabelX, r.LabelEnd, r.LabelIn, label = placeLabel(attemptLabel(at), x1, w, leftOf)
	r.Label = esc(label)
	if hasPause {
		r.Pause = d.pause(sp.start-d.prevEnd, x1)
	}
	if !at.IsHedge() {
		d.t.closeRace(d.raceFrom)
		d.raceFrom = len(d.t.Rows)
	}
	if of := hedged(at); of != nil {
		if k, ok := d.rowOf[*of]; ok {
			hr := &d.t.Rows[k]
			d.t.Links = append(d.t.Links, hedgeLink{X: x1, Y1: hr.BarY + 7, Y2: r.BarY,
				Title: esc(fmt.Sprintf("attempt %s sent at %s, while attempt %s was in flight", number(at.Number), offset(at.OffsetMs), number(*of)))})
		}
	}
	if _, ok := d.rowOf[at.Number]; !ok {
		d.rowOf[at.Number] = len(d.t.Rows)
	}
	d.t.Rows = append(d.t.Rows, r)
	d.y += tlRowH
	if math.IsNaN(d.prevEnd) || sp.end >= d.prevEnd {
		d.prevEnd = sp.end
		d.prevBackoff = at.BackoffMs
	}
}

// attemptLabel is the text beside an attempt's bar: its result, decision
// and reason, and the attempt it hedged or ran beside.
func attemptLabel(at *inspect.Attempt) string {
	parts := []string{at.Result(), dash(at.Decision)}
	if at.Reason != "" {
		parts = append(parts, at.Reason)
	}
	switch {
	case at.HedgeOf != nil:
		parts = append(parts, "hedge of #"+number(*at.HedgeOf))
	case at.Overlaps != nil:
		parts = append(parts, "alongside #"+number(*at.Overlaps))
	}
	return strings.Join(parts, " · ")
}

// pause is the pause of gap milliseconds from the latest end so far to
// the bar at x1 on the row at d.y, with the backoff asked when the two
// differ.
func (d *rowDrawer) pause(gap, x1 float64) *pause {
	text := "pause " + labelMs(gap)
	if d.prevBackoff != nil && math.Abs(float64(*d.prevBackoff)-gap) > 1 {
		text += " (backoff " + labelMs(float64(*d.prevBackoff)) + ")"
	}
	px1 := d.plan.ax.x(d.prevEnd)
	half := textWidth(text) / 2
	return &pause{X1: px1, X2: x1, Y: d.y + 19, LabelY: d.y + 9, Label: esc(text),
		LabelX: round1(math.Max(tlPlotX0+half, math.Min((px1+x1)/2, tlTextEnd-half)))}
}

// drawCut draws the cut on the row at y, and returns it and the y below.
func (p *timelinePlan) drawCut(y float64) (*cut, float64) {
	cp := &p.cut
	x1 := p.ax.x(math.Min(cp.from, cp.at))
	x2, past := p.xOf(cp.at)
	c := &cut{BarY: y + 12, TextY: y + 23, LineY1: y + 6, LineY2: y + 30, X1: x1, X2: x2}
	if past {
		// The deadline is far past the operation's end: the time left is
		// not drawn across the axis; a mark says where the operation
		// stopped.
		c.Stop = true
	} else {
		c.HasLeft, c.HasLine, c.W = true, true, round1(math.Max(x2-x1, 0))
	}
	right := x2
	if c.Stop {
		right = x1 + 2
	}
	if cp.pause != nil {
		px, beyond := p.xOf(cp.pauseEnd)
		c.HasPause, c.Arrow = true, beyond
		c.PauseW = round1(math.Max(px-x1, 1))
		if beyond {
			c.ArrowPoints = fmt.Sprintf("%g,%g %g,%g %g,%g", px, y+13, px+8, y+19, px, y+25)
			px += 8
		}
		right = math.Max(right, px)
	}
	// The label ends left of the cut when it fits there, else it follows
	// the cut and the pause, else it takes a line of its own.
	label := cp.label
	width := textWidth(label)
	switch {
	case width <= x1-8-40:
		c.LabelX, c.LabelEnd = round1(x1-8), true
	case width <= tlTextEnd-(right+10):
		c.LabelX = round1(right + 10)
	default:
		c.LabelX, c.LabelY = 40, c.TextY+16
		label = fit(label, tlTextEnd-40)
		y += 16
	}
	if c.LabelY == 0 {
		c.LabelY = c.TextY
	}
	c.Label = esc(label)
	return c, y + tlRowH
}

// deadlineMarker is the deadline's line and label at labelY, or, past the
// axis, its label and an arrow at the axis' end.
func (p *timelinePlan) deadlineMarker(labelY float64) *marker {
	label := "deadline " + labelMs(p.deadlineAt)
	if x, past := p.xOf(p.deadlineAt); !past && p.deadlineAt >= p.ax.lo {
		half := textWidth(label) / 2
		return &marker{X: x, Label: esc(label), LabelX: round1(math.Max(half, math.Min(x, tlTextEnd-half)))}
	}
	label += ", off axis"
	return &marker{X: tlPlotX1, OffAxis: true, Label: esc(label), LabelX: tlTextEnd - 12,
		Arrow: fmt.Sprintf("%g,%g %g,%g %g,%g", float64(tlTextEnd-8), labelY-8, float64(tlTextEnd), labelY-4, float64(tlTextEnd-8), labelY)}
}

// hedged returns the number of the attempt that at hedges: the one it
// records (retry.hedge.of), else the one in flight when it started; nil
// for an attempt that is not a hedge.
func hedged(at *inspect.Attempt) *int64 {
	if at.HedgeOf != nil {
		return at.HedgeOf
	}
	return at.Overlaps
}

// closeRace draws the band of the race whose first attempt is on row from
// (-1: none), when the rows since hold two attempts or more.
func (t *timeline) closeRace(from int) {
	if from < 0 || len(t.Rows)-from < 2 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var numbers []string
	for _, r := range t.Rows[from:] {
		lo, hi = math.Min(lo, r.X), math.Max(hi, r.X+r.W)
		numbers = append(numbers, strings.TrimPrefix(r.Number, "#"))
	}
	first, last := t.Rows[from], t.Rows[len(t.Rows)-1]
	t.Races = append(t.Races, race{
		X: round1(lo - 3), Y: first.BarY - 5, W: round1(hi - lo + 6), H: last.BarY + 14 + 5 - (first.BarY - 5),
		Attempts: strings.Join(numbers, " "),
		Title:    esc(fmt.Sprintf("attempts %s in flight together: an attempt and its hedges; the first answer whose verdict is not retry wins", strings.Join(numbers, ", "))),
	})
}

// placeLabel places the label of a bar from x1, w wide, whose row's
// drawing begins at leftOf (the bar, or the pause before it): right of the
// bar when it fits there, else left of the row's drawing, else inside the
// bar; else it is shortened to the widest of these places, so that it
// never leaves the drawing.
func placeLabel(label string, x1, w, leftOf float64) (x float64, end, in bool, text string) {
	width := textWidth(label)
	right, left, inside := tlTextEnd-(x1+w+6), leftOf-6-tlPlotX0, w-8
	switch {
	case width <= right:
		return round1(x1 + w + 6), false, false, label
	case width <= left:
		return round1(leftOf - 6), true, false, label
	case width <= inside:
		return round1(x1 + 4), false, true, label
	}
	switch best := max(right, left, inside); best {
	case right:
		return round1(x1 + w + 6), false, false, fit(label, right)
	case left:
		return round1(leftOf - 6), true, false, fit(label, left)
	default:
		return round1(x1 + 4), false, true, fit(label, inside)
	}
}

// placeText places a label that starts at from, or that ends at before
// (anchored at its end), the preferred side first when it has the room,
// shortened to the wider of the two when neither has.
func placeText(label string, from, before float64, preferLeft bool) (x float64, end bool, text string) {
	width := textWidth(label)
	right, left := tlTextEnd-from, before-40 // the row's own name is left of 40
	switch {
	case preferLeft && width <= left, !preferLeft && width > right && width <= left:
		return round1(before), true, label
	case width <= right:
		return round1(from), false, label
	case left >= right:
		return round1(before), true, fit(label, left)
	default:
		return round1(from), false, fit(label, right)
	}
}

// legendValue is the value of a decision or outcome in the legend:
// itself, or "other".
func legendValue(v string) string {
	if valueClass(v) == classOther {
		return "other"
	}
	return v
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
// its last call (the attempt at end, which it ended on), and, where that
// call decided deadline_exceeded (a pause would have followed it), the
// pause that would have crossed the deadline: the server's Retry-After, or
// else the last backoff the operation recorded, named only when the time
// left is indeed less. An operation that ended otherwise (its state
// check cut) had no pause to come.
func describeCut(op *inspect.Operation, end int, from, at float64) (pause *float64, label string) {
	last := &op.Attempts[end]
	label = dash(last.Decision)
	if last.Decision != string(attrs.DecisionDeadlineExceeded) {
		label = "outcome " + dash(op.Outcome)
	}
	left := math.Max(at-from, 0)
	if !math.IsNaN(at) {
		label += fmt.Sprintf(": %s left after attempt %s", labelMs(left), number(last.Number))
	}
	if last.Decision != string(attrs.DecisionDeadlineExceeded) {
		return nil, label
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
	if pause == nil || !math.IsNaN(at) && left >= *pause {
		return nil, label
	}
	return pause, label + fmt.Sprintf(", less than the next pause (%s %s)", what, labelMs(*pause))
}

// labelMs writes a duration in milliseconds for a label, as the contract
// and the text report count: "400 ms", "1000 ms".
func labelMs(v float64) string {
	if math.Abs(v) >= 1e6 {
		return fmtMs(v)
	}
	return strconv.FormatFloat(math.Round(v), 'f', -1, 64) + " ms"
}
