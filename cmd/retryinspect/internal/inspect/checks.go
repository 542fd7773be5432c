package inspect

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// deadlineTolerance absorbs the rounding of retry.budget_ms to whole
// milliseconds and the microsecond timestamps of some backends.
const deadlineTolerance = time.Millisecond

// checkOperation runs the checks that concern one operation.
func (a *analyzer) checkOperation(g *group) {
	if g.span == nil {
		a.checkMissingOperationSpan(g)
	}
	a.checkStatusXorErrorClass(g)
	a.checkRemainingGrows(g)
	a.checkRetryWithoutNext(g)
	a.checkOperationIDs(g)
	a.checkUnsafeResend(g)
	a.checkDeadline(g)
	a.checkNumbering(g)
	a.checkCount(g)
}

func (a *analyzer) checkMissingOperationSpan(g *group) {
	what := plural(len(g.attempts), "attempt span")
	if len(g.checks) > 0 {
		what += " and " + plural(len(g.checks), "state-check span")
	}
	seen := fmt.Sprintf("%s of operation %q in trace %s without an operation span above", what, g.op.ID, g.op.TraceID)
	var elsewhere []string
	for _, other := range a.groups {
		if other.span != nil && other.op.ID == g.op.ID && other.op.TraceID != g.op.TraceID {
			elsewhere = append(elsewhere, other.op.TraceID)
		}
	}
	if len(elsewhere) > 0 {
		seen += fmt.Sprintf("; the operation span is in trace %s (trace context not passed to the attempts)", strings.Join(elsewhere, ", "))
	}
	first := ""
	if len(g.op.Attempts) > 0 {
		first = g.op.Attempts[0].SpanID
	}
	a.add(g, CodeMissingOperationSpan, first, "%s", seen)
}

func (a *analyzer) checkStatusXorErrorClass(g *group) {
	for _, at := range g.op.Attempts {
		switch {
		case at.hasStatus && at.hasErrorClass:
			a.add(g, CodeStatusAndErrorClass, at.SpanID, "attempt %d (%s) records %s and %s %q",
				at.Number, at.RequestID, statusText(at), keyErrorClass, at.ErrorClass)
		case !at.hasStatus && !at.hasErrorClass:
			a.add(g, CodeNoStatusOrErrorClass, at.SpanID, "attempt %d (%s) records neither %s nor %s",
				at.Number, at.RequestID, keyStatusCode, keyErrorClass)
		}
	}
}

func (a *analyzer) checkRemainingGrows(g *group) {
	atts := g.op.Attempts
	for i := 1; i < len(atts); i++ {
		prev, cur := atts[i-1], atts[i]
		if prev.RemainingMs != nil && cur.RemainingMs != nil && *cur.RemainingMs > *prev.RemainingMs {
			a.add(g, CodeRemainingGrows, cur.SpanID, "%s grows from %d (attempt %d) to %d (attempt %d)",
				keyRemainingMs, *prev.RemainingMs, prev.Number, *cur.RemainingMs, cur.Number)
		}
	}
}

// A retry decision may legitimately be the last attempt when the operation
// ended between attempts: the budget ran out during the backoff, the caller
// canceled, or the retry budget refused the next call.
var endsBetweenAttempts = []attrs.Outcome{attrs.OutcomeDeadlineExceeded, attrs.OutcomeCanceled, attrs.OutcomeBudgetExhausted}

func (a *analyzer) checkRetryWithoutNext(g *group) {
	atts := g.op.Attempts
	if len(atts) == 0 {
		return
	}
	last := atts[len(atts)-1]
	if last.Decision != string(attrs.DecisionRetry) {
		return
	}
	outcome := attrs.Outcome(g.op.Outcome)
	if slices.Contains(endsBetweenAttempts, outcome) {
		return
	}
	var why string
	switch {
	case g.span == nil:
		why = "no operation span records a terminal reason"
	case outcome == "":
		why = fmt.Sprintf("the operation records no %s", keyOutcome)
	default:
		why = fmt.Sprintf("the operation outcome %q does not explain why no attempt followed", outcome)
	}
	a.add(g, CodeRetryWithoutNext, last.SpanID, "attempt %d (%s) decided retry, no later attempt exists and %s",
		last.Number, last.RequestID, why)
}

// checkOperationIDs reports attempts and state checks whose operation id
// differs from the operation span above them.
func (a *analyzer) checkOperationIDs(g *group) {
	if g.span == nil || g.op.ID == "" {
		return
	}
	for _, at := range g.op.Attempts {
		if at.OperationID != "" && at.OperationID != g.op.ID {
			a.add(g, CodeOperationIDSplit, at.SpanID, "attempt %d (%s) carries operation id %q under the operation span of %q",
				at.Number, at.RequestID, at.OperationID, g.op.ID)
		}
	}
	for _, c := range g.op.StateChecks {
		if c.OperationID != "" && c.OperationID != g.op.ID {
			a.add(g, CodeOperationIDSplit, c.SpanID, "state check carries operation id %q under the operation span of %q",
				c.OperationID, g.op.ID)
		}
	}
}

// safeMethods may be repeated without an idempotency proof (RFC 9110 §9.2.1).
var safeMethods = []string{"GET", "HEAD", "OPTIONS", "TRACE"}

func (a *analyzer) checkUnsafeResend(g *group) {
	if g.op.IdempotencyContract {
		return
	}
	atts := g.op.Attempts
	for i := 1; i < len(atts); i++ {
		prev, cur := atts[i-1], atts[i]
		method := cmp.Or(cur.Method, g.op.Method)
		if method == "" || slices.Contains(safeMethods, method) {
			continue
		}
		if !prev.hasStatus && attrs.ErrorClass(prev.ErrorClass).NotSent() {
			continue // the previous request provably never left
		}
		if a.notAppliedBetween(g, prev, cur) {
			continue
		}
		a.add(g, CodeUnsafeResend, cur.SpanID,
			"%s attempt %d (%s) was sent after attempt %d ended with %s, with no %s=true and no state check answering %s",
			method, cur.Number, cur.RequestID, prev.Number, resultText(prev), keyIdempotencyContract, attrs.StateNotApplied)
	}
}

// notAppliedBetween reports a state check answering not_applied that
// started between two attempts.
func (a *analyzer) notAppliedBetween(g *group, prev, cur Attempt) bool {
	for _, c := range g.op.StateChecks {
		if c.Result == string(attrs.StateNotApplied) && !c.Start.Before(prev.Start) && !c.Start.After(cur.Start) {
			return true
		}
	}
	return false
}

func (a *analyzer) checkDeadline(g *group) {
	var deadline time.Time
	if g.span != nil && g.op.BudgetMs != nil && !g.op.Start.IsZero() {
		deadline = g.op.Start.Add(time.Duration(*g.op.BudgetMs) * time.Millisecond)
	}
	for _, at := range g.op.Attempts {
		var seen []string
		if !deadline.IsZero() && !at.Start.IsZero() && at.Start.After(deadline.Add(deadlineTolerance)) {
			seen = append(seen, fmt.Sprintf("started at +%dms, after the deadline at +%dms (%s %d)",
				at.Start.Sub(g.op.Start).Milliseconds(), *g.op.BudgetMs, keyBudgetMs, *g.op.BudgetMs))
		}
		if at.RemainingMs != nil && *at.RemainingMs <= 0 {
			seen = append(seen, fmt.Sprintf("started with %s %d", keyRemainingMs, *at.RemainingMs))
		}
		if len(seen) > 0 {
			a.add(g, CodeAttemptAfterDeadline, at.SpanID, "attempt %d (%s) %s", at.Number, at.RequestID, strings.Join(seen, " and "))
		}
	}
}

func (a *analyzer) checkNumbering(g *group) {
	var got, want []string
	for i, at := range g.op.Attempts {
		if at.Number < 1 {
			return // reported as an invalid attribute
		}
		got = append(got, strconv.FormatInt(at.Number, 10))
		want = append(want, strconv.Itoa(i+1))
	}
	if !slices.Equal(got, want) {
		a.add(g, CodeAttemptNumbering, "", "%s values are %s; want %s", keyAttempt, strings.Join(got, ", "), strings.Join(want, ", "))
	}
}

func (a *analyzer) checkCount(g *group) {
	if g.span == nil || g.op.RecordedAttempts == nil {
		return
	}
	if n := *g.op.RecordedAttempts; n != int64(len(g.op.Attempts)) {
		a.add(g, CodeAttemptCountMismatch, g.op.SpanID, "%s is %d but the input holds %s", keyAttempts, n, plural(len(g.op.Attempts), "attempt span"))
	}
}

// checkAcrossOperations runs the checks that compare operations.
func (a *analyzer) checkAcrossOperations() {
	a.checkReusedIDs()
	a.checkOrphanSplit()
	a.checkRequestIDs()
}

// checkReusedIDs reports an operation id carried by several operation spans.
func (a *analyzer) checkReusedIDs() {
	byID := map[string][]*group{}
	var ids []string
	for _, g := range a.groups {
		if g.span == nil || g.op.ID == "" {
			continue
		}
		if byID[g.op.ID] == nil {
			ids = append(ids, g.op.ID)
		}
		byID[g.op.ID] = append(byID[g.op.ID], g)
	}
	for _, id := range ids {
		gs := byID[id]
		if len(gs) < 2 {
			continue
		}
		where := make([]string, len(gs))
		for i, g := range gs {
			where[i] = fmt.Sprintf("trace %s span %s", g.op.TraceID, g.op.SpanID)
		}
		a.add(gs[0], CodeOperationIDReused, gs[0].op.SpanID, "operation id %q is carried by %d operation spans: %s",
			id, len(gs), strings.Join(where, "; "))
	}
}

// checkOrphanSplit reports one trace whose attempts, lacking an operation
// span, carry several operation ids. (Several operations in one trace,
// each with its own operation span, are legitimate.)
func (a *analyzer) checkOrphanSplit() {
	byTrace := map[string][]*group{}
	var traces []string
	for _, g := range a.groups {
		if g.span != nil {
			continue
		}
		if byTrace[g.op.TraceID] == nil {
			traces = append(traces, g.op.TraceID)
		}
		byTrace[g.op.TraceID] = append(byTrace[g.op.TraceID], g)
	}
	for _, t := range traces {
		gs := byTrace[t]
		if len(gs) < 2 {
			continue
		}
		ids := make([]string, len(gs))
		for i, g := range gs {
			ids[i] = g.op.ID
		}
		a.add(gs[0], CodeOperationIDSplit, "", "trace %s holds attempts without an operation span under %d operation ids: %s",
			t, len(gs), quoteList(ids))
	}
}

// checkRequestIDs reports request ids seen more than once: one attempt
// span delivered several times, or several attempt spans sharing an id.
func (a *analyzer) checkRequestIDs() {
	type use struct {
		g  *group
		at Attempt
	}
	byID := map[string][]use{}
	var ids []string
	for _, g := range a.groups {
		for _, at := range g.op.Attempts {
			if n := a.dups[spanKey{g.op.TraceID, at.SpanID}]; n > 0 {
				a.add(g, CodeDuplicateRequestID, at.SpanID, "attempt %d (%s) was delivered %d times (same trace and span id)",
					at.Number, at.RequestID, n+1)
			}
			if at.RequestID == "" {
				continue
			}
			if byID[at.RequestID] == nil {
				ids = append(ids, at.RequestID)
			}
			byID[at.RequestID] = append(byID[at.RequestID], use{g, at})
		}
	}
	for _, id := range ids {
		uses := byID[id]
		if len(uses) < 2 {
			continue
		}
		where := make([]string, len(uses))
		for i, u := range uses {
			where[i] = fmt.Sprintf("attempt %d of %q (span %s)", u.at.Number, u.g.op.ID, u.at.SpanID)
		}
		a.add(uses[1].g, CodeDuplicateRequestID, uses[1].at.SpanID, "request id %q is carried by %d attempt spans: %s",
			id, len(uses), strings.Join(where, "; "))
	}
}

func statusText(at Attempt) string {
	if at.StatusCode != nil {
		return fmt.Sprintf("status %d", *at.StatusCode)
	}
	return "a status"
}

// resultText describes what an attempt observed.
func resultText(at Attempt) string {
	switch {
	case at.hasStatus && at.hasErrorClass:
		return statusText(at) + " and " + at.ErrorClass
	case at.hasStatus:
		return statusText(at)
	case at.hasErrorClass:
		return at.ErrorClass
	default:
		return "no recorded result"
	}
}
