// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// markTogether marks the operations of one trace and operation id that
// ran at once (a job's fan-out under one WithOperationID): the transport
// numbers attempts on across the operations under an id, so theirs
// interleave. Each gets the run of operations it overlaps, in time order;
// an operation known from its attempts only has no end, and is left out.
func markTogether(ops []*group) {
	timed := make([]*group, 0, len(ops))
	for _, g := range ops {
		if g.span != nil && !g.op.End.IsZero() {
			timed = append(timed, g)
		}
	}
	slices.SortStableFunc(timed, func(x, y *group) int { return x.op.Start.Compare(y.op.Start) })
	var run []*group
	var end time.Time
	flush := func() {
		if len(run) > 1 {
			for _, g := range run {
				g.together = run
			}
		}
	}
	for _, g := range timed {
		if len(run) > 0 && g.op.Start.Before(end) {
			run = append(run, g)
			if g.op.End.After(end) {
				end = g.op.End
			}
			continue
		}
		flush()
		run, end = []*group{g}, g.op.End
	}
	flush()
}

// byCall is, for an attempt record s, the operations among ops (one
// trace and id, in time order) that may have started it, with its method
// and URL, when the latest to start before s ran at once with others
// (the only ones that may hold s): one, several, or none (s is then of
// an operation whose record was lost: lost). unsure: several fit, or the
// run is longer than maxTogether.
func byCall(ops []*group, s *model.Span) (fits []*group, lost, unsure bool) {
	n, _ := slices.BinarySearchFunc(ops, s.Start, func(o *group, t time.Time) int {
		if o.op.Start.After(t) {
			return 1
		}
		return -1 // at or before: the search lands after the last of them
	})
	if n == 0 || ops[n-1].together == nil {
		return nil, false, false
	}
	run := ops[n-1].together
	if len(run) > maxTogether {
		return nil, false, true
	}
	for _, o := range run {
		if holds(o, s) {
			fits = append(fits, o)
		}
	}
	return fits, len(fits) == 0, len(fits) > 1
}

// maxTogether bounds the operations of one id in flight together among
// which an attempt record is looked for: a hostile input's thousands
// would cost a scan of them all for each record.
const maxTogether = 64

// byRecord is the operation of log record s among ops, its id's (see
// byCall, then byTime); nil when there is none, and for spans, which
// hang under their operation span.
func (a *analyzer) byRecord(ops []*group, h *holders, s *model.Span) *group {
	if !a.logs {
		return nil
	}
	fits, lost, unsure := byCall(ops, s)
	switch {
	case len(fits) == 1:
		return fits[0]
	case lost:
		return nil // attempts without their operation record
	case len(fits) > 1:
		// Which of them is not known: the first that holds fewer than
		// its record says it made, never one of another method or URL.
		g := fits[0]
		for _, o := range fits {
			if o.op.RecordedAttempts == nil || int64(len(o.attempts)) < *o.op.RecordedAttempts {
				g = o
				break
			}
		}
		markUnsure(g)
		return g
	case unsure:
		g := byTime(ops, h, s)
		if g != nil {
			markUnsure(g)
		}
		return g
	}
	return byTime(ops, h, s)
}

// holds reports whether operation g may have made attempt s: of its
// method and target (where s carries them; see target), started within it (its start
// read up to a millisecond late, the operation's end up to one early; an
// attempt may end after its operation: a hedge that lost).
func holds(g *group, s *model.Span) bool {
	return ranAt(g, s) && sameTarget(g, s)
}

// ranAt reports whether operation g, of the method of attempt s, ran when
// s started.
func ranAt(g *group, s *model.Span) bool {
	if g.span == nil || g.op.Start.After(s.Start) || startedAfter(s, g) {
		return false
	}
	// A field the attempt does not carry (another implementation's) tells nothing.
	method := stringAttr(s, keyMethod)
	return method == "" || stringAttr(g.span, keyMethod) == method
}

// sameTarget reports whether attempt s names g's target (see target), or
// carries no URL.
func sameTarget(g *group, s *model.Span) bool {
	raw := stringAttr(s, keyURLFull)
	return raw == "" || target(g.op.URL) == target(raw)
}

// choose is, of the operations that ran when attempt s started (ran),
// the one that names its target, or the only one that ran then (a
// PrepareAttemptFunc may change the path); nil when none or several fit.
func choose(ran []*group, s *model.Span) *group {
	var named *group
	for _, o := range ran {
		if sameTarget(o, s) {
			if named != nil {
				return nil
			}
			named = o
		}
	}
	if named == nil && len(ran) == 1 {
		return ran[0]
	}
	return named
}

// target is what a URL names, but its query and fragment, which a
// PrepareAttemptFunc may change on each attempt (a signature, a version):
// its host, lowered, and its path.
func target(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.ToLower(u.Host) + u.EscapedPath()
}

// holding is the operations among ops (one trace and id, in time order)
// that ran when attempt s started (see ranAt): of the latest to start
// before it, and of those before it still running or in flight together
// with others, at most maxTogether looked at (past them, none is said to).
func holding(ops []*group, s *model.Span) []*group {
	n, _ := slices.BinarySearchFunc(ops, s.Start, func(o *group, t time.Time) int {
		if o.op.Start.After(t) {
			return 1
		}
		return -1 // at or before: the search lands after the last of them
	})
	var fits []*group
	for i := n - 1; i >= 0 && i >= n-maxTogether; i-- {
		o := ops[i]
		if startedAfter(s, o) && o.together == nil {
			break // it, and every operation before it, ended before s
		}
		if ranAt(o, s) {
			fits = append(fits, o)
		}
	}
	return fits
}

// startedAfter reports whether s started after operation g ended (its
// end read up to a millisecond early, the start of s, from a record, up
// to one late).
func startedAfter(s *model.Span, g *group) bool {
	return !g.op.End.IsZero() && !s.Start.Before(g.op.End.Add(2*time.Millisecond))
}

// room reports whether operation g may take another attempt record: not
// an operation read from a record once it holds as many as its record
// says it made. The others are of an operation of its id whose record
// was lost, and which of them are g's the records do not tell: g is
// marked unsure.
func (a *analyzer) room(g *group) bool {
	if !a.logs || g.span == nil || g.op.RecordedAttempts == nil || int64(len(g.attempts)) < *g.op.RecordedAttempts {
		return true
	}
	markUnsure(g)
	return false
}

// markUnsure marks g's run of operations in flight together as read from
// records that do not tell their attempts apart.
func markUnsure(g *group) {
	if g.unsure {
		return // its run is marked already
	}
	g.unsure = true
	for _, o := range g.together {
		o.unsure = true
	}
}

// checkNumberingTogether wants, of an operation in flight together with
// others under its id, increasing numbers, and of the run (checked on its
// first) the numbers 1, 2, ... n between them, from the first number of
// the run when every operation in it continues an earlier one (see
// marked).
func (a *analyzer) checkNumberingTogether(g *group) {
	for i := 1; i < len(g.op.Attempts); i++ {
		if g.op.Attempts[i].Number <= g.op.Attempts[i-1].Number {
			a.add(g, CodeAttemptNumbering, "", "%s values are %s; want them increasing", keyAttempt, numbersOf(g.op.Attempts))
			return
		}
	}
	if g != g.together[0] {
		return
	}
	// The run's numbers: its attempts', and those of calls a retry
	// planned and did not make (retry.abandoned_attempt). An operation
	// stopped before its first call (none made) took a number it does
	// not record: that many may be missing.
	var all []Attempt
	first, unrecorded := int64(0), 0
	for _, o := range g.together {
		all = append(all, o.op.Attempts...)
		if v, ok := o.span.Attr(string(attrs.AbandonedAttemptKey)); ok && v.Type == model.TypeInt {
			all = append(all, Attempt{Number: v.Int})
		}
		if len(o.op.Attempts) == 0 {
			unrecorded++
		}
		if !marked(o) {
			first = 1
		}
	}
	if len(all) == 0 {
		return
	}
	slices.SortStableFunc(all, func(x, y Attempt) int { return cmp.Compare(x.Number, y.Number) })
	if first == 0 {
		first = all[0].Number
	}
	missing := 0
	for i, at := range all {
		if i > 0 && at.Number == all[i-1].Number {
			missing = unrecorded + 1 // a number used twice: reported below
			break
		}
		missing = int(at.Number-first) - i
	}
	if missing > unrecorded || all[0].Number < first {
		a.add(g, CodeAttemptNumbering, "", "%s values of the %d operations in flight together under this id are %s; want %d to %d",
			keyAttempt, len(g.together), numbersOf(all), first, first+int64(len(all))-1)
	}
}

// numbersOf lists the attempts' numbers.
func numbersOf(atts []Attempt) string {
	s := make([]string, len(atts))
	for i, at := range atts {
		s[i] = strconv.FormatInt(at.Number, 10)
	}
	return listed(s, ", ")
}

// besideLost reports whether g is, or ran at once with, attempts of its
// id that lost their operation span or record (an orphan group, read
// from its first attempt's start to its last one's end).
func (a *analyzer) besideLost(g *group) bool {
	k := spanKey{g.op.TraceID, g.op.ID}
	o := a.orphans[k]
	if o == nil || len(a.byID[k]) == 0 {
		return false
	}
	if g == o {
		return true
	}
	return o.ranDuring(g.op.Start, g.op.End)
}

// ranDuring reports whether one of g's attempts ran during [from, to]
// (to zero: no end known), in time logarithmic in its attempts once they
// are read (starts sorted, and the latest end up to each).
func (g *group) ranDuring(from, to time.Time) bool {
	if !g.spanned {
		atts := slices.Clone(g.attempts)
		slices.SortFunc(atts, func(x, y *model.Span) int { return x.Start.Compare(y.Start) })
		var latest time.Time
		for _, s := range atts {
			if s.End.After(latest) {
				latest = s.End
			}
			g.starts, g.ends = append(g.starts, s.Start), append(g.ends, latest)
		}
		g.spanned = true
	}
	// The attempts that started by to; of them, the latest end.
	n := len(g.starts)
	if !to.IsZero() {
		n, _ = slices.BinarySearchFunc(g.starts, to, func(t, at time.Time) int {
			if t.After(at) {
				return 1
			}
			return -1
		})
	}
	return n > 0 && !g.ends[n-1].Before(from)
}

// adopts reports whether g takes one more attempt span of another target
// than its own, under a lost span (a PrepareAttemptFunc may change the
// path): only while its span's count of attempts leaves room, as another
// operation of its id whose span was lost made the others.
func (g *group) adopts() bool {
	if g.op.RecordedAttempts == nil || g.underSpan+g.adopted < *g.op.RecordedAttempts {
		g.adopted++
		return true
	}
	return false
}
