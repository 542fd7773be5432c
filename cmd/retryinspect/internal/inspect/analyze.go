// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

type spanKey struct{ trace, span string }

func keyOf(s *model.Span) spanKey { return spanKey{s.TraceID, s.SpanID} }

// group is one operation under construction.
type group struct {
	op       Operation
	span     *model.Span // the operation span; nil when it was not found
	at       int         // the operation span's index in analyzer.spans
	attempts []*model.Span
	checks   []*model.Span
	index    int  // position in the report, for ordering findings
	lost     bool // a member's parent span is absent from the input
	// firstAttempt is the number of the operation's first attempt, for
	// log records (numberHops); 0 when unknown. took: the numbers byTime
	// gave it among operations that started at one instant.
	firstAttempt int64
	took         map[int64]bool
	// together is the run of operations of the same trace and id that
	// ran at once with this one (see markTogether), nil when none did;
	// unsure: read from log records that do not tell their attempts apart.
	together []*group
	unsure   bool
	// starts, ends: its attempts' starts in order, and the latest end up
	// to each, once read (spanned; see group.ranDuring).
	spanned bool
	starts  []time.Time
	ends    []time.Time
	// sent is sentNumber, once read (0 before).
	sent int64
	// underSpan counts the attempt spans under its operation span, adopted
	// those of another target it took under a lost span (see adopts).
	underSpan, adopted int64
}

// conflict is a second delivery of a span id whose content differs.
type conflict struct {
	kept, other *model.Span
	diff        []string
}

type analyzer struct {
	spans     []*model.Span // distinct spans in time order
	roles     []role        // by span index
	parent    []int         // by span index: the parent's index, -1 for a root or an absent parent
	dups      map[*model.Span]int
	conflicts []conflict
	groups    []*group
	groupOf   []*group // by span index: operation, attempt and state-check spans
	findings  []Finding
	notes     map[string]*Note
	logs      bool // the input is log records (model.Span.Log): no span tree
	// byID holds the operations of each trace and operation id with an
	// operation span (or record), orphans those known from their
	// attempts only.
	byID    map[spanKey][]*group
	orphans map[spanKey]*group
}

// Analyze inspects spans and returns the report. It never fails: spans
// that break the contract become findings, absences the contract allows
// become notes.
//
// Log records (spans with Log set, which a log reader returns) are read
// the same way, an operation per retry.operation record and an attempt per
// retry.attempt record. What only the span tree can tell (a lost operation
// span, a span id reused, a state check between two calls, an abandoned
// call, a repeat marker's earlier operations under the same parent span)
// becomes a needs-spans note instead of a finding.
func Analyze(spans []model.Span) *Report {
	a := &analyzer{dups: map[*model.Span]int{}, notes: map[string]*Note{}}
	a.logs = slices.ContainsFunc(spans, func(s model.Span) bool { return s.Log })
	var pos map[spanKey]int
	if a.logs {
		pos = a.dedupRecords(spans)
	} else {
		pos = a.dedup(spans)
	}
	// Work in time order, so that the report does not depend on the order
	// in which a format or an exporter happened to list the spans.
	slices.SortStableFunc(a.spans, func(x, y *model.Span) int {
		return cmp.Or(x.Start.Compare(y.Start), cmp.Compare(x.TraceID, y.TraceID), cmp.Compare(x.SpanID, y.SpanID))
	})
	n := len(a.spans)
	a.roles, a.parent, a.groupOf = make([]role, n), make([]int, n), make([]*group, n)
	for i, s := range a.spans {
		pos[keyOf(s)] = i
		a.roles[i] = roleOf(s)
	}
	for i, s := range a.spans {
		a.parent[i] = -1
		if s.ParentID == "" {
			continue
		}
		if p, ok := pos[spanKey{s.TraceID, s.ParentID}]; ok {
			a.parent[i] = p
		}
	}

	report := &Report{Spans: a.countSpans()}
	if a.logs {
		report.Input = InputLogs
	}
	a.group()
	a.checkMissingOperationSpans()
	for _, g := range a.groups {
		a.checkOperation(g)
	}
	a.checkAcrossOperations()
	enclosing := nearestAncestors(a.parent, func(p int) bool { return a.groupOf[p] != nil })
	groupAt := func(i int) *group {
		if g := a.groupOf[i]; g != nil {
			return g
		}
		if e := enclosing[i]; e >= 0 {
			return a.groupOf[e]
		}
		return nil
	}
	for i, s := range a.spans {
		a.checkURLs(s, groupAt(i))
	}
	a.checkConflicts(pos, groupAt)
	a.nameDependencies()

	report.Operations = make([]Operation, 0, len(a.groups))
	for _, g := range a.groups {
		if g.op.Attempts == nil {
			g.op.Attempts = []Attempt{}
		}
		report.Operations = append(report.Operations, g.op)
	}
	report.Summary = summarize(report.Operations)
	report.Findings = sortFindings(a.findings)
	report.Dependencies = dependencies(report)
	notes := make([]Finding, 0, len(a.notes))
	for _, n := range a.notes {
		notes = append(notes, *n)
	}
	report.Notes = sortFindings(notes)
	showIDs(report)
	return report
}

// showIDs sanitizes the ids of a report once the analysis, which compared
// them as recorded, is done: a producer may put anything in an id.
func showIDs(r *Report) {
	for i := range r.Operations {
		op := &r.Operations[i]
		op.ID = redacted(op.ID)
		for j := range op.Attempts {
			op.Attempts[j].OperationID = redacted(op.Attempts[j].OperationID)
			op.Attempts[j].RequestID = redacted(op.Attempts[j].RequestID)
		}
		for j := range op.StateChecks {
			op.StateChecks[j].OperationID = redacted(op.StateChecks[j].OperationID)
		}
	}
	for _, fs := range [][]Finding{r.Findings, r.Notes} {
		for i := range fs {
			fs[i].OperationID = redacted(fs[i].OperationID)
		}
	}
}

func sortFindings(fs []Finding) []Finding {
	slices.SortStableFunc(fs, func(x, y Finding) int {
		return cmp.Or(cmp.Compare(findingOrder(x), findingOrder(y)), cmp.Compare(x.Code.rank(), y.Code.rank()),
			cmp.Compare(x.TraceID, y.TraceID), cmp.Compare(x.SpanID, y.SpanID))
	})
	return append([]Finding{}, fs...)
}

func findingOrder(f Finding) int {
	if f.group == nil {
		return math.MaxInt
	}
	return f.group.index
}

// dedup keeps the first delivery of every span id: identical later copies
// are counted as duplicate deliveries, differing ones as conflicts. It
// returns the map of span keys it built, for the caller to reuse.
func (a *analyzer) dedup(spans []model.Span) map[spanKey]int {
	first := make(map[spanKey]int, len(spans))
	a.spans = make([]*model.Span, 0, len(spans))
	for i := range spans {
		s := &spans[i]
		k := keyOf(s)
		if j, seen := first[k]; seen {
			kept := &spans[j]
			if diff := differences(kept, s); len(diff) > 0 {
				a.conflicts = append(a.conflicts, conflict{kept: kept, other: s, diff: diff})
			} else {
				a.dups[kept]++
			}
			continue
		}
		first[k] = i
		a.spans = append(a.spans, s)
	}
	return first
}

// dedupRecords keeps every distinct log record and counts identical
// copies as duplicate deliveries. Records are told apart by their whole
// content, not by their span id: a record carries the id of the span it
// was emitted in, which several records may share (an attempt emitted
// without a span of its own carries the caller's). It returns a map of
// span keys, which no record uses: records have no parent.
func (a *analyzer) dedupRecords(spans []model.Span) map[spanKey]int {
	first := make(map[string]*model.Span, len(spans))
	a.spans = make([]*model.Span, 0, len(spans))
	var b strings.Builder
	for i := range spans {
		s := &spans[i]
		b.Reset()
		fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%d\x00%d", s.TraceID, s.SpanID, s.Name, s.Start.UnixNano(), s.End.UnixNano())
		for _, kv := range sortedAttributes(s.Attributes) {
			fmt.Fprintf(&b, "\x00%s\x00%d\x00%q\x00%d\x00%x\x00%t", kv.Key, kv.Value.Type, kv.Value.Str,
				kv.Value.Int, math.Float64bits(kv.Value.Float), kv.Value.Bool)
		}
		if kept, seen := first[b.String()]; seen {
			a.dups[kept]++
			continue
		}
		first[b.String()] = s
		a.spans = append(a.spans, s)
	}
	return make(map[spanKey]int, len(a.spans))
}

// differences names the fields in which two deliveries of one span id
// differ. Attributes are compared as sets of key-value pairs (a backend may
// reorder them), floats bit for bit (so NaN equals NaN).
func differences(x, y *model.Span) []string {
	var diff []string
	if x.ParentID != y.ParentID {
		diff = append(diff, "parent")
	}
	if x.Name != y.Name {
		diff = append(diff, "name")
	}
	if x.Kind != y.Kind {
		diff = append(diff, "kind")
	}
	if !x.Start.Equal(y.Start) {
		diff = append(diff, "start")
	}
	if !x.End.Equal(y.End) {
		diff = append(diff, "end")
	}
	if !sameAttributes(x.Attributes, y.Attributes) {
		diff = append(diff, "attributes")
	}
	if !slices.EqualFunc(x.Events, y.Events, func(a, b model.Event) bool {
		return a.Name == b.Name && a.Time.Equal(b.Time) && sameAttributes(a.Attributes, b.Attributes)
	}) {
		diff = append(diff, "events")
	}
	return diff
}

func sameAttributes(x, y []model.Attribute) bool {
	if len(x) != len(y) {
		return false
	}
	if slices.EqualFunc(x, y, sameAttribute) {
		return true
	}
	return slices.EqualFunc(sortedAttributes(x), sortedAttributes(y), sameAttribute)
}

// sortedAttributes returns a sorted copy of kvs: a backend may reorder
// attributes.
func sortedAttributes(kvs []model.Attribute) []model.Attribute {
	return slices.SortedFunc(slices.Values(kvs), func(a, b model.Attribute) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), cmp.Compare(a.Value.Type, b.Value.Type),
			strings.Compare(a.Value.Str, b.Value.Str), cmp.Compare(a.Value.Int, b.Value.Int),
			cmp.Compare(math.Float64bits(a.Value.Float), math.Float64bits(b.Value.Float)),
			cmp.Compare(boolInt(a.Value.Bool), boolInt(b.Value.Bool)))
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sameAttribute(a, b model.Attribute) bool {
	return a.Key == b.Key && a.Value.Type == b.Value.Type && a.Value.Str == b.Value.Str &&
		a.Value.Int == b.Value.Int && a.Value.Bool == b.Value.Bool &&
		math.Float64bits(a.Value.Float) == math.Float64bits(b.Value.Float)
}

func (a *analyzer) countSpans() SpanCounts {
	c := SpanCounts{Total: len(a.spans), Duplicates: len(a.conflicts)}
	for _, n := range a.dups {
		c.Duplicates += n
	}
	for _, r := range a.roles {
		switch r {
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

// relate adds gs to the operations the last finding names besides its
// own (see Finding.Operations).
func (a *analyzer) relate(gs ...*group) {
	f := &a.findings[len(a.findings)-1]
	f.related = append(f.related, gs...)
}

// note records an absence the contract allows. Notes of one kind (same
// code and key) are counted into the first one, so that a trace set from
// another implementation gives a few lines, not one per span.
func (a *analyzer) note(g *group, code Code, key, spanID, format string, args ...any) {
	if n := a.notes[string(code)+"\x00"+key]; n != nil {
		n.Count++
		return
	}
	n := &Note{Code: code, SpanID: spanID, Seen: fmt.Sprintf(format, args...), Check: code.Check(), Count: 1, group: g}
	if g != nil {
		n.OperationID, n.TraceID = g.op.ID, g.op.TraceID
	}
	a.notes[string(code)+"\x00"+key] = n
}

// addFields reports the missing and malformed attributes read from span
// s, and the absent optional ones as notes.
func (a *analyzer) addFields(g *group, s *model.Span, f fields) {
	if len(f.missing) > 0 {
		a.add(g, CodeMissingAttribute, s.SpanID, "%s lacks %s", describeSpan(s), strings.Join(f.missing, ", "))
	}
	if len(f.invalid) > 0 {
		a.add(g, CodeInvalidAttribute, s.SpanID, "%s: %s", describeSpan(s), strings.Join(f.invalid, "; "))
	}
	if len(f.optional) > 0 {
		keys := strings.Join(f.optional, ", ")
		a.note(g, CodeMissingOptionalAttribute, fmt.Sprint(roleOf(s))+"\x00"+keys, s.SpanID,
			"%s lacks %s", describeSpan(s), keys)
	}
}

// ambiguous marks an operation id carried by several operation spans of
// one trace: an attempt cannot be attached to one of them by id.
var ambiguous = &group{}

// group builds the operations: operation spans first, then attempts and
// state checks attached to the operation span above them.
func (a *analyzer) group() {
	byID, allByID := a.operationSpans()
	held := map[spanKey]*holders{}
	for k, ops := range allByID {
		markTogether(ops)
		if a.logs {
			held[k] = numberHops(ops)
		} else {
			slices.SortStableFunc(ops, func(x, y *group) int { return x.op.Start.Compare(y.op.Start) })
		}
	}
	opAbove := nearestAncestors(a.parent, func(p int) bool { return a.roles[p] == roleOperation })
	for i, p := range opAbove {
		if a.roles[i] == roleAttempt && p >= 0 {
			a.groupOf[p].underSpan++
		}
	}
	orphans := map[spanKey]*group{}
	for i, s := range a.spans {
		r := a.roles[i]
		if r != roleAttempt && r != roleStateCheck {
			continue
		}
		k := spanKey{s.TraceID, stringAttr(s, keyOperationID)}
		lostParent := s.ParentID != "" && a.parent[i] < 0 && !s.ParentRemote
		g := a.attachTo(i, opAbove[i], lostParent, byID[k], allByID[k], held[k])
		if g == nil {
			g = orphanOf(k, orphans, &a.groups)
		}
		if lostParent {
			g.lost = true // a remote parent (upstream's) is not expected here
		}
		a.groupOf[i] = g
		if r == roleAttempt {
			g.attempts = append(g.attempts, s)
		} else {
			g.checks = append(g.checks, s)
		}
	}
	a.byID, a.orphans = allByID, orphans
	for _, g := range a.groups {
		a.finishGroup(g)
	}
	sortAsSent(a.groups)
	for i, g := range a.groups {
		g.index = i
	}
}

// operationSpans makes a group of each operation span: by trace and
// operation id, the one (ambiguous when several share it) and, for log
// records, every operation of the id.
func (a *analyzer) operationSpans() (byID map[spanKey]*group, allByID map[spanKey][]*group) {
	byID, allByID = map[spanKey]*group{}, map[spanKey][]*group{}
	for i, s := range a.spans {
		if a.roles[i] != roleOperation {
			continue
		}
		op, f := readOperation(s)
		g := &group{op: op, span: s, at: i}
		a.groups = append(a.groups, g)
		a.groupOf[i] = g
		a.addFields(g, s, f)
		k := spanKey{s.TraceID, op.ID}
		allByID[k] = append(allByID[k], g)
		if byID[k] == nil {
			byID[k] = g
		} else {
			byID[k] = ambiguous
		}
	}
	return byID, allByID
}

// attachTo is the operation of attempt or state-check span i: the one
// whose span is above it (above, or -1), else the one operationOf finds;
// nil when none has room for it.
func (a *analyzer) attachTo(i, above int, lostParent bool, only *group, all []*group, held *holders) *group {
	s := a.spans[i]
	var g *group
	if above >= 0 {
		g = a.groupOf[above]
	} else {
		g = a.operationOf(s, lostParent, only, all, held)
	}
	if g != nil && a.roles[i] == roleAttempt && !a.room(g) {
		return nil
	}
	return g
}

// orphanOf is the group of the spans of key k that no operation holds,
// made (and added to groups) on first need.
func orphanOf(k spanKey, orphans map[spanKey]*group, groups *[]*group) *group {
	g := orphans[k]
	if g == nil {
		g = &group{op: Operation{ID: k.span, TraceID: k.trace}}
		orphans[k] = g
		*groups = append(*groups, g)
	}
	return g
}

// operationOf is the operation of attempt or state-check span s, which
// hangs under no operation span, among those of its trace and id (only,
// the one when it is not ambiguous; all, in time order; held, their
// numbers): nil when none is its.
func (a *analyzer) operationOf(s *model.Span, lostParent bool, only *group, all []*group, held *holders) *group {
	switch {
	case lostParent && !a.logs:
		// A span above it was lost: its operation's, or one between
		// them (the operation then holds it: its method, host and time).
		g := choose(holding(all, s), s)
		if g == nil || !sameTarget(g, s) && !g.adopts() {
			return nil
		}
		return g
	case only != nil && only != ambiguous:
		if a.logs && startedAfter(s, only) {
			return nil // a record of a later operation of its id, whose own record was lost
		}
		return only
	}
	return a.byRecord(all, held, s)
}

// sortAsSent sorts operations by their start, and those that started at
// one instant (a clock that did not tick between them: virtual time) in
// the order they were sent, as the transport numbered them: operation ids
// by the retry.operation.repeat of the first of theirs (a loop's calls,
// each under an id of its own), and an id's operations as chains (see
// chainOf), each chain's hops by retry.redirects. The key is one tuple,
// so the order is total and does not depend on the input's.
func sortAsSent(groups []*group) {
	firstRepeat := map[string]int64{} // by operation id: the repeat of its first operation
	firstNumber := map[string]int64{}
	tied := map[tieKey][]*group{}
	for _, g := range groups {
		if n, ok := firstNumber[g.op.ID]; !ok || g.sentNumber() < n {
			firstNumber[g.op.ID], firstRepeat[g.op.ID] = g.sentNumber(), valueOr0(g.op.Repeat)
		}
		k := tieKey{g.op.ID, g.op.Start.UnixNano()}
		tied[k] = append(tied[k], g)
	}
	chain := map[*group]int64{}
	for _, run := range tied {
		chainOf(run, chain)
	}
	slices.SortStableFunc(groups, func(x, y *group) int {
		return cmp.Or(x.op.Start.Compare(y.op.Start),
			cmp.Compare(firstRepeat[x.op.ID], firstRepeat[y.op.ID]), cmp.Compare(x.op.ID, y.op.ID),
			cmp.Compare(chain[x], chain[y]), cmp.Compare(valueOr0(x.op.Redirects), valueOr0(y.op.Redirects)),
			cmp.Compare(x.sentNumber(), y.sentNumber()), cmp.Compare(valueOr0(x.op.Repeat), valueOr0(y.op.Repeat)),
			x.op.End.Compare(y.op.End), cmp.Compare(x.op.TraceID, y.op.TraceID), cmp.Compare(x.op.SpanID, y.op.SpanID))
	})
}

// tieKey names the operations of one id that started at one instant.
type tieKey struct {
	id    string
	start int64
}

// chainOf puts in chain, for each of run (operations of one id that
// started at one instant), the chain it belongs to, as the transport
// counted them: a first hop's retry.operation.repeat, and for a later hop
// (retry.redirects) that of the first hop sent before it, by their first
// attempts' numbers; a hop whose number is unknown goes with the last.
func chainOf(run []*group, chain map[*group]int64) {
	if len(run) < 2 {
		return
	}
	var firsts []*group
	last := int64(0)
	for _, g := range run {
		if valueOr0(g.op.Redirects) == 0 {
			firsts = append(firsts, g)
			chain[g] = valueOr0(g.op.Repeat)
			last = max(last, chain[g])
		}
	}
	slices.SortFunc(firsts, func(x, y *group) int { return cmp.Compare(x.sentNumber(), y.sentNumber()) })
	for _, g := range run {
		if valueOr0(g.op.Redirects) == 0 {
			continue
		}
		chain[g] = last
		n := g.sentNumber()
		if i, _ := slices.BinarySearchFunc(firsts, n, func(f *group, n int64) int { return cmp.Compare(f.sentNumber(), n) }); i > 0 && n != math.MaxInt64 {
			chain[g] = chain[firsts[i-1]]
		}
	}
}

// sentNumber is the number of g's first attempt: the least of those it
// holds, or for log records without one the number numberHops gave it;
// math.MaxInt64 when unknown.
func (g *group) sentNumber() int64 {
	if g.sent != 0 { // read once: a sort asks it of each group at every comparison
		return g.sent
	}
	n := int64(math.MaxInt64)
	for _, at := range g.op.Attempts {
		if at.Number > 0 {
			n = min(n, at.Number)
		}
	}
	if n == math.MaxInt64 && g.firstAttempt > 0 {
		n = g.firstAttempt
	}
	g.sent = n
	return n
}

func valueOr0(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// numberHops sorts the operations of one id (log records, which have no
// parent: a redirect chain's hops, repeats under one WithOperationID, a
// job's calls that reuse an id) by their start, those that started at one
// instant as chains (chainsAtOneInstant), and gives each the number of
// its first attempt where the records say it: 1 for one that is neither
// a later hop nor a repeat (its context counts from 1), else the number
// after the attempts of the one before it in the same context (the
// transport goes on counting across hops and repeats), 0 when unknown (a
// count missing, a record lost: its repeat or hop is not the next).
func numberHops(ops []*group) *holders {
	sortHops(ops)
	var prev *group
	repeat := int64(0) // the repeat of prev's chain
	for _, g := range ops {
		g.firstAttempt, repeat = firstNumber(g, prev, repeat)
		prev = g
	}
	return holdersOf(ops)
}

// sortHops sorts the operations of one id by their start, those that
// started at one instant as chains (chainsAtOneInstant).
func sortHops(ops []*group) {
	slices.SortStableFunc(ops, func(x, y *group) int {
		return cmp.Or(x.op.Start.Compare(y.op.Start), cmp.Compare(valueOr0(x.op.Redirects), valueOr0(y.op.Redirects)),
			cmp.Compare(valueOr0(x.op.Repeat), valueOr0(y.op.Repeat)),
			x.op.End.Compare(y.op.End)) // of calls at one instant, the one that ended first was sent first
	})
	for i := 0; i < len(ops); {
		j := i + 1
		for j < len(ops) && ops[j].op.Start.Equal(ops[i].op.Start) {
			j++
		}
		chainsAtOneInstant(ops[i:j])
		i = j
	}
}

// firstNumber is the number of g's first attempt, prev the operation of
// its id sent before it (nil for the first) and repeat the repeat of
// prev's chain, and the repeat of g's chain.
func firstNumber(g, prev *group, repeat int64) (first, chainRepeat int64) {
	red, rep := valueOr0(g.op.Redirects), valueOr0(g.op.Repeat)
	switch {
	case prev == nil || red == 0 && rep == 0: // the id's first, or a context of its own
		return 1, rep
	case prev.firstAttempt == 0 || prev.op.RecordedAttempts == nil || *prev.op.RecordedAttempts < 0 ||
		*prev.op.RecordedAttempts > math.MaxInt64-prev.firstAttempt:
		return 0, repeat
	case red == 0 && rep == repeat+1:
		return prev.firstAttempt + *prev.op.RecordedAttempts, rep
	case red > 0 && red == valueOr0(prev.op.Redirects)+1:
		return prev.firstAttempt + *prev.op.RecordedAttempts, repeat
	}
	return 0, repeat
}

// holdersOf lists, for each attempt number, the operations of ops whose
// attempts hold it.
func holdersOf(ops []*group) *holders {
	h := &holders{of: map[int64][]*group{}, next: map[int64]int{}}
	for _, g := range ops {
		if g.firstAttempt == 0 || g.op.RecordedAttempts == nil {
			continue
		}
		for n := g.firstAttempt; n-g.firstAttempt < min(*g.op.RecordedAttempts, maxHeld); n++ {
			h.of[n] = append(h.of[n], g)
		}
	}
	return h
}

// maxHeld bounds the attempt numbers an operation is looked up by, so
// that a hostile retry.attempts costs no more than that.
const maxHeld = 64

// holders are, for each attempt number, the operations of one id whose
// attempts' numbers hold it, in the order they were sent, and how many
// of them have been given theirs (byTime).
type holders struct {
	of   map[int64][]*group
	next map[int64]int
}

// take gives attempt record s, numbered n, to the first operation that
// holds n, has not been given one of n yet, started at or before s and had
// not ended before it did (see byTime); nil when none.
func (h *holders) take(n int64, s *model.Span) *group {
	list := h.of[n]
	i := h.next[n]
	for i < len(list) && list[i].took[n] {
		i++ // given theirs: never again
	}
	h.next[n] = i
	for _, g := range list[i:min(len(list), i+maxTied)] {
		if g.op.Start.After(s.Start) {
			break
		}
		// The operation's end is read to the millisecond below it: an
		// attempt that ended a whole millisecond past it was not its.
		if !g.took[n] && (g.op.End.IsZero() || s.End.Before(g.op.End.Add(time.Millisecond))) {
			if g.took == nil {
				g.took = map[int64]bool{}
			}
			g.took[n] = true
			return g
		}
	}
	return nil
}

// chainsAtOneInstant orders run, operations of one id that started at one
// instant sorted by retry.redirects then retry.operation.repeat, as
// chains: each first hop by its repeat, followed by one later hop of each
// retry.redirects in turn, for want of anything else that tells two
// chains' hops apart.
func chainsAtOneInstant(run []*group) {
	if len(run) < 2 {
		return
	}
	byHop := map[int64][]*group{} // later hops by retry.redirects, in order
	var firsts []*group
	for _, g := range run {
		if r := valueOr0(g.op.Redirects); r > 0 {
			byHop[r] = append(byHop[r], g)
		} else {
			firsts = append(firsts, g)
		}
	}
	ordered := make([]*group, 0, len(run))
	take := func(r int64) bool {
		if len(byHop[r]) == 0 {
			return false
		}
		ordered = append(ordered, byHop[r][0])
		byHop[r] = byHop[r][1:]
		return true
	}
	for _, f := range firsts {
		ordered = append(ordered, f)
		for r := int64(1); take(r); r++ {
		}
	}
	for _, g := range run { // hops whose first hop began earlier, as sorted
		if r := valueOr0(g.op.Redirects); r > 0 && len(byHop[r]) > 0 && byHop[r][0] == g {
			take(r)
		}
	}
	copy(run, ordered)
}

// maxTied bounds how many operations byTime looks past for an attempt,
// so that a hostile input (every record at one instant) stays linear.
const maxTied = 16

// byTime picks, among the operations of one id in the order numberHops
// gave them, the one an attempt record belongs to: of those whose
// attempts' numbers hold the attempt's (h), the first in the order they
// were sent that has not been given one of that number yet (a job that
// reuses an id counts from 1 again), that started at or before the
// attempt and had not ended before it did; else the last one started at
// or before it (an attempt record's start, its end less its whole
// milliseconds, is never before its true start, but may be at the next
// operation's where they follow within the clock's tick). It returns nil
// when none started before it, or when the last one's numbers, known, do
// not hold the attempt's (its own operation's record was lost).
func byTime(ops []*group, h *holders, s *model.Span) *group {
	n, _ := slices.BinarySearchFunc(ops, s.Start, func(g *group, t time.Time) int {
		if g.op.Start.After(t) {
			return 1
		}
		return -1 // at or before: the search lands after the last of them
	})
	if n == 0 {
		return nil
	}
	if v, _ := s.Attr(keyAttempt); v.Type == model.TypeInt && h != nil {
		if g := h.take(v.Int, s); g != nil {
			return g
		}
		if g := ops[n-1]; g.firstAttempt > 0 && g.op.RecordedAttempts != nil &&
			(v.Int < g.firstAttempt || v.Int-g.firstAttempt >= *g.op.RecordedAttempts) {
			// Not among its numbers: of an operation whose record was
			// lost, whose numbers g's may have taken (which of the
			// records are g's is not known).
			markUnsure(g)
			return nil
		}
	}
	if startedAfter(s, ops[n-1]) {
		return nil // of an operation whose record was lost
	}
	return ops[n-1]
}

// nearestAncestors returns, for every span index, the index of the nearest
// span strictly above it (following parent) for which match holds, or -1.
// Each span is visited once, so the cost is linear whatever the depth; a
// parent cycle ends the walk (a span is never its own ancestor).
func nearestAncestors(parent []int, match func(int) bool) []int {
	const (
		unknown = -2
		walking = -3 // on the path being walked: meeting it again is a cycle
	)
	memo := make([]int, len(parent))
	for i := range memo {
		memo[i] = unknown
	}
	var path []int
	for i := range parent {
		if memo[i] != unknown {
			continue
		}
		path = append(path[:0], i)
		memo[i] = walking
		answer := -1 // the nearest match above the last span of path
		for {
			p := parent[path[len(path)-1]]
			if p < 0 {
				break
			}
			if match(p) {
				answer = p
				break
			}
			if memo[p] == walking {
				break // a cycle without a match
			}
			if memo[p] != unknown {
				answer = memo[p]
				break
			}
			memo[p] = walking
			path = append(path, p)
		}
		// Every span pushed after the first failed match, so the answer
		// is the same all the way down.
		for _, x := range slices.Backward(path) {
			if answer == x {
				answer = -1 // a cycle through a matching span
			}
			memo[x] = answer
		}
	}
	return memo
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
		a.addFields(g, s, f)
	}
	for _, s := range g.attempts {
		at, f := readAttempt(s, g.op.Panicked)
		at.OffsetMs = offsetMs(g.op, s)
		at.span = s
		g.op.Attempts = append(g.op.Attempts, at)
		a.addFields(g, s, f)
	}
	slices.SortStableFunc(g.op.Attempts, func(x, y Attempt) int {
		return cmp.Or(cmp.Compare(x.Number, y.Number), x.Start.Compare(y.Start), cmp.Compare(x.SpanID, y.SpanID))
	})
	if !g.unsure { // attempts of others may be among them: no hedge is inferred
		markOverlaps(g.op.Attempts)
	}
	var inFlight []bool
	if slices.ContainsFunc(g.op.Attempts, func(at Attempt) bool { return at.Decision == string(attrs.DecisionRetry) }) {
		inFlight = inFlightAtEnd(g.op.Attempts)
	}
	g.op.ending = ending(g.op.Attempts, inFlight) + 1
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

// Plural writes n and noun, pluralized unless n is 1 (a noun in y takes
// ies: "2 retries").
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// stringAttr is a string attribute as recorded: for ids, which are
// compared as recorded and sanitized where shown (showIDs).
func stringAttr(s *model.Span, key string) string {
	v, _ := s.Attr(key)
	return v.Text()
}

// maxListed bounds the items a message lists, so that a hostile input
// (a million attempts sharing one request id) cannot make one finding
// huge.
const maxListed = 10

// listed joins items, at most maxListed of them, saying how many more
// there are.
func listed(items []string, sep string) string {
	if len(items) <= maxListed {
		return strings.Join(items, sep)
	}
	return strings.Join(items[:maxListed], sep) + fmt.Sprintf("%s and %d more", sep, len(items)-maxListed)
}
