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

	// The operation's own extent: 0 (its start) to the latest of its end,
	// every attempt's end and every state check.
	lo, hi := 0.0, 0.0
	extend := func(v float64) {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if !op.End.IsZero() && !op.Start.IsZero() {
		extend(msBetween(op.Start, op.End))
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
	hi = math.Max(hi, lo+tlMinRange)
	// What lies near the operation's end is drawn on its axis; what lies
	// far beyond (a deadline of seconds after an operation of 1 ms) is a
	// marker at the axis' end.
	reach := lo + (hi-lo)*tlNear
	near := func(v float64) bool { return !math.IsNaN(v) && v <= reach }
	deadlineAt := math.NaN()
	if op.DeadlineMs != nil {
		deadlineAt = float64(*op.DeadlineMs)
		if near(deadlineAt) {
			extend(deadlineAt)
		}
	}
	// The cut: an operation whose last attempt (the one it ended on)
	// decided deadline_exceeded, or that ended so after at least one
	// attempt.
	n, end := len(op.Attempts), op.Ending()
	var cutPause *float64
	cutFrom, cutAt := math.NaN(), math.NaN()
	var cutLabel string
	deadlineCut := op.Outcome == string(attrs.OutcomeDeadlineExceeded) ||
		end >= 0 && op.Attempts[end].Decision == string(attrs.DecisionDeadlineExceeded)
	if deadlineCut && end >= 0 {
		last := &op.Attempts[end]
		cutFrom = spans[end].end
		switch {
		case op.DeadlineMs != nil:
			cutAt = deadlineAt
		case last.RemainingMs != nil:
			cutAt = spans[end].start + float64(*last.RemainingMs)
		}
		cutPause, cutLabel = describeCut(op, end, cutFrom, cutAt)
		if near(cutAt) {
			extend(cutAt)
		}
	}
	pauseEnd := math.NaN()
	if cutPause != nil {
		pauseEnd = cutFrom + *cutPause
		if near(pauseEnd) {
			extend(pauseEnd)
		}
	}
	ax, ticks := niceAxis(lo, hi, tlPlotX0, tlPlotX1, fmtMs)
	t.Ticks = ticks
	// x of v on the axis, and whether v is past the axis' end.
	xOf := func(v float64) (float64, bool) {
		if v > ax.hi {
			return tlPlotX1, true
		}
		return ax.x(v), false
	}

	y := float64(tlTop)
	checks := op.StateChecks
	raceFrom := -1 // the row of the first attempt of the race under way
	addCheck := func(c inspect.StateCheck) {
		// A state check follows an attempt that ended: it ends a race.
		t.closeRace(raceFrom)
		raceFrom = -1
		at := 0.0
		if c.OffsetMs != nil {
			at = float64(*c.OffsetMs)
		}
		x := ax.x(at)
		label := "state_check " + dash(c.Result)
		r := row{
			Y: y, BarY: y + 12, TextY: y + 23, Kind: "check", Number: "-", X: x, Class: "check",
			Title: esc(fmt.Sprintf("state check: %s at %s (span %s)", dash(c.Result), offset(c.OffsetMs), c.SpanID)),
		}
		r.LabelX, r.LabelEnd, r.Label = placeText(label, x+12, x-10, false)
		r.Label = esc(r.Label)
		t.Rows = append(t.Rows, r)
		y += tlRowH
	}
	prevEnd := math.NaN()    // the latest end of the attempts so far
	var prevBackoff *int64   // the backoff of the attempt that ended last so far
	rowOf := map[int64]int{} // the row of each attempt number, for the hedge links
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
			Number: "#" + number(at.Number), X: x1, W: round1(w), Class: valueClass(at.Decision),
			Faded:    at.Decision == string(attrs.DecisionSuperseded),
			Decision: esc(legendValue(at.Decision)),
			Title: esc(fmt.Sprintf("attempt %s  %s  %s  at %s  elapsed %s  remaining %s  decision %s  reason %s  retry-after %s  backoff %s  span %s",
				number(at.Number), dash(at.RequestID), result(*at), offset(at.OffsetMs), ms(at.ElapsedMs), ms(at.RemainingMs),
				dash(at.Decision), dash(at.Reason), ms(at.RetryAfterMs), ms(at.BackoffMs), at.SpanID)),
		}
		if at.RemainingMs != nil {
			r.Left = esc(labelMs(float64(*at.RemainingMs)) + " left")
			end, past := xOf(spans[i].start + float64(*at.RemainingMs))
			r.Budget = &segment{X1: x1, X2: end, Y: y + 30, Y1: y + 27, Y2: y + 33}
			if past {
				r.Budget.Arrow = fmt.Sprintf("%g,%g %g,%g %g,%g", end, y+27, end+6, y+30, end, y+33)
			}
		} else {
			r.Left = "time left -"
		}
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
		label := strings.Join(parts, " · ")
		hasPause := !math.IsNaN(prevEnd) && spans[i].start > prevEnd
		leftOf := x1
		if hasPause {
			leftOf = math.Min(leftOf, ax.x(prevEnd))
		}
		r.LabelX, r.LabelEnd, r.LabelIn, label = placeLabel(label, x1, w, leftOf)
		r.Label = esc(label)
		if hasPause {
			gap := spans[i].start - prevEnd
			text := "pause " + labelMs(gap)
			if prevBackoff != nil && math.Abs(float64(*prevBackoff)-gap) > 1 {
				text += " (backoff " + labelMs(float64(*prevBackoff)) + ")"
			}
			px1 := ax.x(prevEnd)
			half := textWidth(text) / 2
			r.Pause = &pause{X1: px1, X2: x1, Y: y + 19, LabelY: y + 9, Label: esc(text),
				LabelX: round1(math.Max(tlPlotX0+half, math.Min((px1+x1)/2, tlTextEnd-half)))}
		}
		if !at.IsHedge() {
			t.closeRace(raceFrom)
			raceFrom = len(t.Rows)
		}
		if of := hedged(at); of != nil {
			if k, ok := rowOf[*of]; ok {
				hr := &t.Rows[k]
				t.Links = append(t.Links, hedgeLink{X: x1, Y1: hr.BarY + 7, Y2: r.BarY,
					Title: esc(fmt.Sprintf("attempt %s sent at %s, while attempt %s was in flight", number(at.Number), offset(at.OffsetMs), number(*of)))})
			}
		}
		if _, ok := rowOf[at.Number]; !ok {
			rowOf[at.Number] = len(t.Rows)
		}
		t.Rows = append(t.Rows, r)
		y += tlRowH
		if math.IsNaN(prevEnd) || spans[i].end >= prevEnd {
			prevEnd = spans[i].end
			prevBackoff = at.BackoffMs
		}
	}
	t.closeRace(raceFrom)
	raceFrom = -1
	for _, c := range checks {
		addCheck(c)
	}
	if deadlineCut && n > 0 && !math.IsNaN(cutAt) {
		x1 := ax.x(math.Min(cutFrom, cutAt))
		x2, past := xOf(cutAt)
		c := &cut{BarY: y + 12, TextY: y + 23, LineY1: y + 6, LineY2: y + 30, X1: x1, X2: x2}
		if past {
			// The deadline is far past the operation's end: the time
			// left is not drawn across the axis; a mark says where the
			// operation stopped.
			c.Stop = true
		} else {
			c.HasLeft, c.HasLine, c.W = true, true, round1(math.Max(x2-x1, 0))
		}
		right := x2
		if c.Stop {
			right = x1 + 2
		}
		if cutPause != nil {
			px, beyond := xOf(pauseEnd)
			c.HasPause, c.Arrow = true, beyond
			c.PauseW = round1(math.Max(px-x1, 1))
			if beyond {
				c.ArrowPoints = fmt.Sprintf("%g,%g %g,%g %g,%g", px, y+13, px+8, y+19, px, y+25)
				px += 8
			}
			right = math.Max(right, px)
		}
		// The label ends left of the cut when it fits there, else it
		// follows the cut and the pause, else it takes a line of its own.
		width := textWidth(cutLabel)
		switch {
		case width <= x1-8-40:
			c.LabelX, c.LabelEnd = round1(x1-8), true
		case width <= tlTextEnd-(right+10):
			c.LabelX = round1(right + 10)
		default:
			c.LabelX, c.LabelY = 40, c.TextY+16
			cutLabel = fit(cutLabel, tlTextEnd-40)
			y += 16
		}
		if c.LabelY == 0 {
			c.LabelY = c.TextY
		}
		c.Label = esc(cutLabel)
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
	t.Height = y + tlBottom
	t.GridY2 = y + 4
	t.DeadlineY = y + 18
	if op.DeadlineMs != nil {
		label := "deadline " + labelMs(deadlineAt)
		if x, past := xOf(deadlineAt); past || deadlineAt < ax.lo {
			// Past the axis: said at its end, with an arrow.
			label += ", off axis"
			t.Deadline = &marker{X: tlPlotX1, OffAxis: true, Label: esc(label), LabelX: tlTextEnd - 12,
				Arrow: fmt.Sprintf("%g,%g %g,%g %g,%g", float64(tlTextEnd-8), t.DeadlineY-8, float64(tlTextEnd), t.DeadlineY-4, float64(tlTextEnd-8), t.DeadlineY)}
		} else {
			half := textWidth(label) / 2
			t.Deadline = &marker{X: x, Label: esc(label), LabelX: round1(math.Max(half, math.Min(x, tlTextEnd-half)))}
		}
	}
	t.LeftX = tlPlotX0 - 10
	t.TableOpen = n <= 5
	return t
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
