// Package inspect groups spans of the retry contract into operations,
// checks them against the contract and summarizes them.
//
// Grouping is structural: an attempt belongs to the operation span above
// it, whatever operation id it carries (a differing id is a finding, not a
// new operation). Attempts without an operation span are grouped by trace
// and operation id.
package inspect

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

type spanKey struct{ trace, span string }

func keyOf(s *model.Span) spanKey { return spanKey{s.TraceID, s.SpanID} }

// group is one operation under construction.
type group struct {
	op       Operation
	span     *model.Span // the operation span; nil when it was not found
	attempts []*model.Span
	checks   []*model.Span
	index    int // position in the report, for ordering findings
}

type analyzer struct {
	spans    []*model.Span // distinct spans in input order
	byKey    map[spanKey]*model.Span
	dups     map[spanKey]int // extra deliveries per span
	groups   []*group
	groupOf  map[spanKey]*group // operation, attempt and state-check spans
	orphans  map[spanKey]*group // by trace and operation id
	findings []Finding
}

// Analyze inspects spans and returns the report. It never fails: spans
// that break the contract become findings.
func Analyze(spans []model.Span) *Report {
	a := &analyzer{
		byKey:   make(map[spanKey]*model.Span, len(spans)),
		dups:    make(map[spanKey]int),
		groupOf: make(map[spanKey]*group),
		orphans: make(map[spanKey]*group),
	}
	for i := range spans {
		s := &spans[i]
		k := keyOf(s)
		if _, seen := a.byKey[k]; seen {
			a.dups[k]++
			continue
		}
		a.byKey[k] = s
		a.spans = append(a.spans, s)
	}
	// Work in time order, so that the report does not depend on the order
	// in which a format or an exporter happened to list the spans.
	slices.SortStableFunc(a.spans, func(x, y *model.Span) int {
		return cmp.Or(x.Start.Compare(y.Start), cmp.Compare(x.TraceID, y.TraceID), cmp.Compare(x.SpanID, y.SpanID))
	})

	report := &Report{Spans: a.countSpans()}
	a.group()
	for _, g := range a.groups {
		a.checkOperation(g)
	}
	a.checkAcrossOperations()
	for _, s := range a.spans {
		a.checkURLs(s, a.enclosingGroup(s))
	}

	report.Operations = make([]Operation, 0, len(a.groups))
	for _, g := range a.groups {
		if g.op.Attempts == nil {
			g.op.Attempts = []Attempt{}
		}
		report.Operations = append(report.Operations, g.op)
	}
	report.Summary = summarize(report.Operations)
	slices.SortStableFunc(a.findings, func(x, y Finding) int {
		return cmp.Or(cmp.Compare(findingOrder(x), findingOrder(y)), cmp.Compare(x.Code.rank(), y.Code.rank()))
	})
	report.Findings = append([]Finding{}, a.findings...)
	return report
}

func findingOrder(f Finding) int {
	if f.group == nil {
		return int(^uint(0) >> 1)
	}
	return f.group.index
}

func (a *analyzer) countSpans() SpanCounts {
	c := SpanCounts{Total: len(a.spans)}
	for _, n := range a.dups {
		c.Duplicates += n
	}
	for _, s := range a.spans {
		switch roleOf(s) {
		case roleOperation:
			c.Operation++
		case roleAttempt:
			c.Attempt++
		case roleStateCheck:
			c.StateCheck++
		default:
			c.Other++
		}
	}
	return c
}

// add records a finding about group g (nil when none applies).
func (a *analyzer) add(g *group, code Code, spanID, format string, args ...any) {
	f := Finding{Code: code, SpanID: spanID, Seen: fmt.Sprintf(format, args...), Check: code.Check(), group: g}
	if g != nil {
		f.OperationID, f.TraceID = g.op.ID, g.op.TraceID
	}
	a.findings = append(a.findings, f)
}

// addFields reports the missing and malformed attributes read from a span.
func (a *analyzer) addFields(g *group, f fields) {
	if len(f.missing) > 0 {
		a.add(g, CodeMissingAttribute, f.span.SpanID, "%s lacks %s", describeSpan(f.span), strings.Join(f.missing, ", "))
	}
	if len(f.invalid) > 0 {
		a.add(g, CodeInvalidAttribute, f.span.SpanID, "%s: %s", describeSpan(f.span), strings.Join(f.invalid, "; "))
	}
}

// group builds the operations: operation spans first, then attempts and
// state checks attached to the operation span above them.
func (a *analyzer) group() {
	for _, s := range a.spans {
		if roleOf(s) != roleOperation {
			continue
		}
		op, f := readOperation(s)
		g := &group{op: op, span: s}
		a.groups = append(a.groups, g)
		a.groupOf[keyOf(s)] = g
		a.addFields(g, f)
	}
	for _, s := range a.spans {
		switch roleOf(s) {
		case roleAttempt, roleStateCheck:
			g := a.owner(s)
			a.groupOf[keyOf(s)] = g
			if roleOf(s) == roleAttempt {
				g.attempts = append(g.attempts, s)
			} else {
				g.checks = append(g.checks, s)
			}
		}
	}
	for _, g := range a.groups {
		a.finishGroup(g)
	}
	slices.SortStableFunc(a.groups, func(x, y *group) int {
		return cmp.Or(x.op.Start.Compare(y.op.Start), cmp.Compare(x.op.ID, y.op.ID),
			cmp.Compare(x.op.TraceID, y.op.TraceID), cmp.Compare(x.op.SpanID, y.op.SpanID))
	})
	for i, g := range a.groups {
		g.index = i
	}
}

// owner finds the operation of an attempt or state-check span: the nearest
// operation span above it, else the only operation span of its trace with
// its operation id, else an operation without span keyed by trace and id.
func (a *analyzer) owner(s *model.Span) *group {
	if op := a.ancestor(s, func(p *model.Span) bool { return roleOf(p) == roleOperation }); op != nil {
		return a.groupOf[keyOf(op)]
	}
	id := stringAttr(s, keyOperationID)
	var match *group
	for _, g := range a.groups {
		if g.span != nil && g.op.TraceID == s.TraceID && g.op.ID == id {
			if match != nil {
				match = nil // ambiguous
				break
			}
			match = g
		}
	}
	if match != nil {
		return match
	}
	k := spanKey{s.TraceID, id}
	g := a.orphans[k]
	if g == nil {
		g = &group{op: Operation{ID: id, TraceID: s.TraceID}}
		a.orphans[k] = g
		a.groups = append(a.groups, g)
	}
	return g
}

// ancestor returns the nearest span above s for which match is true.
func (a *analyzer) ancestor(s *model.Span, match func(*model.Span) bool) *model.Span {
	for range len(a.spans) { // bounded: a malformed input may hold a cycle
		p := a.byKey[spanKey{s.TraceID, s.ParentID}]
		if s.ParentID == "" || p == nil {
			return nil
		}
		if match(p) {
			return p
		}
		s = p
	}
	return nil
}

// enclosingGroup returns the operation a span belongs to or lies under.
func (a *analyzer) enclosingGroup(s *model.Span) *group {
	if g := a.groupOf[keyOf(s)]; g != nil {
		return g
	}
	if p := a.ancestor(s, func(p *model.Span) bool { return a.groupOf[keyOf(p)] != nil }); p != nil {
		return a.groupOf[keyOf(p)]
	}
	return nil
}

// finishGroup reads the attempts and state checks of g in order.
func (a *analyzer) finishGroup(g *group) {
	slices.SortStableFunc(g.checks, func(x, y *model.Span) int {
		return cmp.Or(x.Start.Compare(y.Start), cmp.Compare(x.SpanID, y.SpanID))
	})
	for _, s := range g.checks {
		c, f := readStateCheck(s)
		c.OffsetMs = offsetMs(g.op, s)
		g.op.StateChecks = append(g.op.StateChecks, c)
		a.addFields(g, f)
	}
	for _, s := range g.attempts {
		at, f := readAttempt(s)
		at.OffsetMs = offsetMs(g.op, s)
		g.op.Attempts = append(g.op.Attempts, at)
		a.addFields(g, f)
	}
	slices.SortStableFunc(g.op.Attempts, func(x, y Attempt) int {
		return cmp.Or(cmp.Compare(x.Number, y.Number), x.Start.Compare(y.Start), cmp.Compare(x.SpanID, y.SpanID))
	})
	if g.span == nil { // an operation known from its attempts only
		for _, at := range g.op.Attempts {
			if g.op.Start.IsZero() || at.Start.Before(g.op.Start) {
				g.op.Start = at.Start
			}
			if g.op.Method == "" {
				g.op.Method = at.Method
			}
		}
	}
}

func offsetMs(op Operation, s *model.Span) *int64 {
	if op.Start.IsZero() || s.Start.IsZero() {
		return nil
	}
	ms := s.Start.Sub(op.Start).Milliseconds()
	return &ms
}

// plural writes n and noun, adding "s" unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func stringAttr(s *model.Span, key string) string {
	v, _ := s.Attr(key)
	return v.Text()
}
