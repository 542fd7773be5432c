// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// deadlineTolerance absorbs the rounding of retry.deadline_ms to whole
// milliseconds and the microsecond timestamps of some backends.
const deadlineTolerance = time.Millisecond

// checkOperation runs the checks that concern one operation.
func (a *analyzer) checkOperation(g *group) {
	a.checkStatusXorErrorClass(g)
	if g.unsure {
		// Which attempt was whose is not known: what depends on it is
		// left to the spans.
		a.note(g, CodeNeedsSpans, "in-flight-together", g.op.SpanID,
			"operations under id %s ran at once with the same method and URL, or beside one whose record was lost: the log records do not tell their attempts apart", redacted(g.op.ID))
		return
	}
	if a.logs && g.span == nil && len(a.byID[spanKey{g.op.TraceID, g.op.ID}]) > 0 {
		// Records of an id whose operation record was lost, beside
		// operations of the id: of one lost operation or of several,
		// the records do not tell (its needs-spans note says so).
		return
	}
	a.checkRemainingGrows(g)
	a.checkRetryWithoutNext(g)
	a.checkOperationIDs(g)
	a.checkUnsafeResend(g)
	a.checkUnsafeHedge(g)
	a.checkDeadline(g)
	a.checkNumbering(g)
	a.checkCount(g)
}

// checkMissingOperationSpans looks at the operations known from their
// attempts only. The operation span is lost (a finding) when a member's
// parent span is absent from the input, or when an operation span with
// the same id is in another trace. Otherwise the attempts hang under spans
// that are present, or are roots: the implementation records no operation
// span, which the contract allows (a note).
func (a *analyzer) checkMissingOperationSpans() {
	// The traces of the operation spans of every operation id, at most
	// maxListed+1 of them: enough to name them without listing a hostile
	// input's millions.
	traces := map[string][]string{}
	for _, g := range a.groups {
		if g.span == nil || g.op.ID == "" {
			continue
		}
		if ts := traces[g.op.ID]; len(ts) <= maxListed && !slices.Contains(ts, g.op.TraceID) {
			traces[g.op.ID] = append(ts, g.op.TraceID)
		}
	}
	for _, g := range a.groups {
		if g.span != nil {
			continue
		}
		if a.logs {
			a.noteNoOperationRecord(g)
			continue
		}
		what := Plural(len(g.attempts), "attempt span")
		if len(g.checks) > 0 {
			what += " and " + Plural(len(g.checks), "state-check span")
		}
		first := ""
		if len(g.op.Attempts) > 0 {
			first = g.op.Attempts[0].SpanID
		} else if len(g.op.StateChecks) > 0 {
			first = g.op.StateChecks[0].SpanID
		}
		seen := fmt.Sprintf("%s of operation %s in trace %s without an operation span above", what, fmtID(g.op.ID), g.op.TraceID)
		other := slices.DeleteFunc(slices.Clone(traces[g.op.ID]), func(t string) bool { return t == g.op.TraceID })
		switch {
		case len(other) > 0:
			a.add(g, CodeMissingOperationSpan, first, "%s; the operation span is in trace %s (trace context not passed to the attempts)",
				seen, listed(other, ", "))
		case g.lost:
			a.add(g, CodeMissingOperationSpan, first, "%s; their parent span is not in the input (lost: unsampled, unended or unflushed)", seen)
		default:
			a.note(g, CodeNoOperationSpan, "", first, "%s; their parents are present, so none was recorded", seen)
		}
	}
}

// noteNoOperationRecord notes attempt records without a retry.operation
// record: with the spans, the inspector would tell a lost operation span
// (a finding) from one never recorded (a note); the records cannot. The
// operation may also have ended in a panic, which emits no operation
// record, or the Logger may have filtered the event out.
func (a *analyzer) noteNoOperationRecord(g *group) {
	first := ""
	if len(g.op.Attempts) > 0 {
		first = g.op.Attempts[0].SpanID
	}
	a.note(g, CodeNeedsSpans, "no-operation-record", first,
		"%s of operation %s in trace %s without a %s record: whether its operation span was lost or never recorded, only the spans tell",
		Plural(len(g.attempts), attrs.LogEventAttempt+" record"), fmtID(g.op.ID), orNone(g.op.TraceID), attrs.LogEventOperation)
}

func orNone(id string) string {
	if id == "" {
		return "(none)"
	}
	return id
}

func (a *analyzer) checkStatusXorErrorClass(g *group) {
	for _, at := range g.op.Attempts {
		switch {
		case at.hasStatus && at.hasErrorClass:
			a.add(g, CodeStatusAndErrorClass, at.SpanID, "attempt %d (%s) records %s and %s %s",
				at.Number, redacted(at.RequestID), statusText(at), keyErrorClass, quote(at.ErrorClass))
		case !at.hasStatus && !at.hasErrorClass && !at.Panicked:
			a.add(g, CodeNoStatusOrErrorClass, at.SpanID, "attempt %d (%s) records neither %s nor %s",
				at.Number, redacted(at.RequestID), keyStatusCode, keyErrorClass)
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
// ended between attempts: the time ran out during the backoff, the caller
// canceled, or the retry budget refused the next call.
var endsBetweenAttempts = []attrs.Outcome{attrs.OutcomeDeadlineExceeded, attrs.OutcomeCanceled, attrs.OutcomeBudgetExhausted}

// checkRetryWithoutNext looks at the attempt the operation ended on
// (Ending): in a hedged operation, a superseded attempt or a retry that
// another attempt in flight carried on (in_flight) ends nothing.
func (a *analyzer) checkRetryWithoutNext(g *group) {
	atts := g.op.Attempts
	end := g.op.Ending()
	if end < 0 {
		return
	}
	last := atts[end]
	if last.Decision != string(attrs.DecisionRetry) || g.op.Panicked {
		return // a panic ended the operation before the retry
	}
	outcome := attrs.Outcome(g.op.Outcome)
	if slices.Contains(endsBetweenAttempts, outcome) {
		return
	}
	if g.span != nil && g.span.Has(string(attrs.AbandonedAttemptKey)) {
		// The operation (its span, or its retry.operation record) says
		// which call was not made, and why (attempt_abandoned).
		return
	}
	if a.logs && g.span == nil {
		return // noted as an attempt without its operation record
	}
	var why string
	switch {
	case g.span == nil:
		why = "no operation span records a terminal reason"
	case outcome == "":
		why = fmt.Sprintf("the operation records no %s", keyOutcome)
	default:
		why = fmt.Sprintf("the operation outcome %s does not explain why no attempt followed", quote(string(outcome)))
	}
	next := "no later attempt exists"
	if end < len(atts)-1 {
		next = "no attempt carried it on (the later ones ran alongside it)"
	}
	if last.Reason == string(attrs.ReasonInFlight) {
		next = fmt.Sprintf("no other attempt was in flight when it ended (reason %s), %s", attrs.ReasonInFlight, next)
	}
	a.add(g, CodeRetryWithoutNext, last.SpanID, "attempt %d (%s) decided retry, %s and %s",
		last.Number, redacted(last.RequestID), next, why)
}

// checkOperationIDs reports attempts and state checks whose operation id
// differs from the operation span above them.
func (a *analyzer) checkOperationIDs(g *group) {
	if g.span == nil || g.op.ID == "" {
		return
	}
	for _, at := range g.op.Attempts {
		if at.OperationID != "" && at.OperationID != g.op.ID {
			a.add(g, CodeOperationIDSplit, at.SpanID, "attempt %d (%s) carries operation id %s under the operation span of %s",
				at.Number, redacted(at.RequestID), fmtID(at.OperationID), fmtID(g.op.ID))
		}
	}
	for _, c := range g.op.StateChecks {
		if c.OperationID != "" && c.OperationID != g.op.ID {
			a.add(g, CodeOperationIDSplit, c.SpanID, "state check carries operation id %s under the operation span of %s",
				fmtID(c.OperationID), fmtID(g.op.ID))
		}
	}
}

// safeMethods may be repeated without an idempotency proof (RFC 9110 §9.2.1).
var safeMethods = attrs.SafeMethods()

// unrepeatable reports whether the request of attempts of g with method
// may not be sent twice without proof: a method other than GET, HEAD,
// OPTIONS and TRACE, and no idempotency contract on the operation (which
// Intent.Repeatable, WithIdempotentMethods and an idempotency key under a
// contract all record) and no idempotency key (a generated one, or the
// caller's: retry.idempotency_key.source). An unknown method is given the
// benefit of the doubt.
func unrepeatable(g *group, method string) bool {
	return method != "" && !slices.Contains(safeMethods, method) && !keyed(g)
}

// unhedgeable reports whether attempts of g with method may not be in
// flight together: a method other than the safe ones, with no idempotency
// contract. A key alone does not make a hedge safe as it does a resend:
// two copies under one key at once are what servers handle worst
// (docs/hedging.md), and otelretry never hedges a write that has one.
func unhedgeable(g *group, method string) bool {
	return method != "" && !slices.Contains(safeMethods, method) && !g.op.IdempotencyContract
}

// keyed reports whether g's request is repeatable by the user's word: an
// idempotency contract, or an idempotency key it carries.
func keyed(g *group) bool { return g.op.IdempotencyContract || g.op.IdempotencyKey != "" }

// keyedWrite reports whether the request of g with method is a write made
// repeatable by its idempotency key: a repeat of it is safe only under the
// same key (sameKey). A key under WithIdempotencyKeys records a contract
// too; a PUT or DELETE with one may have been declared idempotent
// (WithIdempotentMethods, which the contract also records), as RFC 9110
// defines them, and its key is then not what makes it repeatable.
func keyedWrite(g *group, method string) bool {
	declarable := method == "PUT" || method == "DELETE"
	return method != "" && !slices.Contains(safeMethods, method) && g.op.IdempotencyKey != "" &&
		!(g.op.IdempotencyContract && declarable)
}

// sameKey reports whether later went out under earlier's idempotency key:
// their recorded values agree (WithIdempotencyKeyValues), or, without
// them, a caller's key (which travels with the request a layer above
// sends again) or a generated one under the operation id both share (the
// transport takes it from the earlier operation; docs/layers.md). Without
// a shared id, each operation generates its own.
func sameKey(earlier, later *group) bool {
	if earlier.op.IdempotencyKey == "" {
		return false
	}
	a, b := keyValueOf(earlier), keyValueOf(later)
	if a != "" && b != "" {
		return a == b
	}
	return later.op.IdempotencyKey == string(attrs.KeySourceCaller) || earlier.op.ID != "" && earlier.op.ID == later.op.ID
}

// keyValueOf is the idempotency key's value g's operation span recorded,
// "" when it recorded none.
func keyValueOf(g *group) string {
	if g.span == nil {
		return ""
	}
	v, _ := g.span.Attr(keyIdempotencyValue)
	return v.Text()
}

// checkAnswerUnknown reports whether, from log records (no state check),
// an operation that ended with its last attempt's check_state leaves its
// check's answer untold: the caller gave up, or its deadline passed,
// during or after the check, which ends canceled or deadline_exceeded
// whether it found the write not applied (known) or not (unknown).
func checkAnswerUnknown(g *group) bool {
	end := g.op.Ending()
	return len(g.op.StateChecks) == 0 && end >= 0 && g.op.Attempts[end].Decision == string(attrs.DecisionCheckState) &&
		(g.op.Outcome == string(attrs.OutcomeCanceled) || g.op.Outcome == string(attrs.OutcomeDeadlineExceeded))
}

// foundNotApplied reports whether g's last state check found its write not
// applied and no attempt followed it: the operation failed with its
// outcome known, so a layer above that sends it again repeats nothing.
// From log records, which have no state check, that is an operation that
// ended max_attempts, stop, budget_exhausted or throttled after its last
// attempt decided check_state (the resend a not_applied allows, refused
// by the attempt limit, the intent or the admission; an unknown answer
// ends check_state).
func foundNotApplied(g *group) bool {
	if checkAnswerUnknown(g) {
		return false // may be: see checkRepeat
	}
	n := len(g.op.StateChecks)
	if n == 0 {
		end := g.op.Ending()
		return end >= 0 && g.op.Attempts[end].Decision == string(attrs.DecisionCheckState) &&
			slices.Contains([]string{string(attrs.OutcomeMaxAttempts), string(attrs.OutcomeStop),
				string(attrs.OutcomeBudgetExhausted), string(attrs.OutcomeThrottled)}, g.op.Outcome)
	}
	if g.op.StateChecks[n-1].Result != string(attrs.StateNotApplied) {
		return false
	}
	last := g.op.StateChecks[n-1].Start
	return !slices.ContainsFunc(g.op.Attempts, func(a Attempt) bool { return a.Start.After(last) })
}

func (a *analyzer) checkUnsafeResend(g *group) {
	if keyed(g) {
		return
	}
	// The starts of the state checks that answered not_applied, in order.
	var notApplied []time.Time
	for _, c := range g.op.StateChecks {
		if c.Result == string(attrs.StateNotApplied) {
			notApplied = append(notApplied, c.Start)
		}
	}
	slices.SortFunc(notApplied, time.Time.Compare)
	atts := g.op.Attempts
	for i := 1; i < len(atts); i++ {
		prev, cur := atts[i-1], atts[i]
		method := cmp.Or(cur.Method, g.op.Method)
		if !unrepeatable(g, method) || cur.IsHedge() {
			continue // a hedge is checked by checkUnsafeHedge
		}
		if provedResendable(prev) {
			continue
		}
		// A state check answering not_applied between the two calls.
		j := sort.Search(len(notApplied), func(k int) bool { return !notApplied[k].Before(prev.Start) })
		if j < len(notApplied) && !notApplied[j].After(cur.Start) {
			continue
		}
		if a.logs && prev.Decision == string(attrs.DecisionCheckState) {
			// A state check ran between the calls; its answer is on
			// its span only.
			a.note(g, CodeNeedsSpans, "state-check", cur.SpanID,
				"%s attempt %d (%s) was sent after attempt %d decided %s: whether a state check answered %s in between, only its span tells",
				redacted(method), cur.Number, redacted(cur.RequestID), prev.Number, attrs.DecisionCheckState, attrs.StateNotApplied)
			continue
		}
		a.add(g, CodeUnsafeResend, cur.SpanID,
			"%s attempt %d (%s) was sent after attempt %d ended with %s, with no %s=true and no state check answering %s",
			redacted(method), cur.Number, redacted(cur.RequestID), prev.Number, resultText(prev), keyIdempotencyContract, attrs.StateNotApplied)
	}
}

// provedResendable reports whether attempt prev proves that sending its
// write again is safe: its error class says the request was not processed,
// or the transport retried it on a proof it recorded (decisions.md, rows
// 17, 18, 23 and 26): not_processed (a cut before the base reported a
// connection, a failed first write on a reused connection), server_retry
// (a should-retry header of true under WithShouldRetryWrites), or
// classifier: a Classifier never makes a write repeatable, so the
// transport retries one on its word only when it says NotProcessed, or
// says Retryable of a request the transport proved unsent.
func provedResendable(prev Attempt) bool {
	if !prev.hasStatus && attrs.ErrorClass(prev.ErrorClass).NotProcessed() {
		return true
	}
	if prev.Decision != string(attrs.DecisionRetry) {
		return false
	}
	switch attrs.Reason(prev.Reason) {
	case attrs.ReasonNotProcessed, attrs.ReasonServerRetry, attrs.ReasonClassifier:
		return true
	}
	return false
}

// checkUnsafeHedge reports the hedges of a request that may not be sent
// twice: an attempt sent while another attempt of its operation was in
// flight, whose outcome nothing could know yet.
func (a *analyzer) checkUnsafeHedge(g *group) {
	for _, at := range g.op.Attempts {
		method := cmp.Or(at.Method, g.op.Method)
		if !at.IsHedge() || !unhedgeable(g, method) {
			continue
		}
		var how string
		switch {
		case at.HedgeOf != nil && at.Overlaps != nil:
			how = fmt.Sprintf("is a hedge of attempt %d (%s), sent while attempt %d was in flight", *at.HedgeOf, keyHedgeOf, *at.Overlaps)
		case at.HedgeOf != nil:
			how = fmt.Sprintf("is a hedge of attempt %d (%s)", *at.HedgeOf, keyHedgeOf)
		default:
			how = fmt.Sprintf("was sent while attempt %d was in flight", *at.Overlaps)
		}
		a.add(g, CodeUnsafeHedge, at.SpanID, "%s attempt %d (%s) %s, with no %s=true",
			redacted(method), at.Number, redacted(at.RequestID), how, keyIdempotencyContract)
	}
}

// deadlineOf returns the operation's deadline, or false when the span does
// not record one. A time limit beyond what a time.Duration holds (about
// 292 years) is clamped, never wrapped: no attempt can start after it.
func deadlineOf(g *group) (time.Time, bool) {
	if g.span == nil || g.op.DeadlineMs == nil || *g.op.DeadlineMs < 0 || g.op.Start.IsZero() {
		return time.Time{}, false
	}
	ms := *g.op.DeadlineMs
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return g.op.Start.Add(math.MaxInt64), true
	}
	return g.op.Start.Add(time.Duration(ms) * time.Millisecond), true
}

func (a *analyzer) checkDeadline(g *group) {
	deadline, ok := deadlineOf(g)
	for _, at := range g.op.Attempts {
		var seen []string
		if ok && !at.Start.IsZero() && at.Start.After(deadline.Add(deadlineTolerance)) {
			seen = append(seen, fmt.Sprintf("started at +%dms, after the deadline at +%dms (%s %d)",
				at.Start.Sub(g.op.Start).Milliseconds(), *g.op.DeadlineMs, keyDeadlineMs, *g.op.DeadlineMs))
		}
		// retry.remaining_ms is whole milliseconds, cut: 0 is under 1 ms
		// left, which the transport starts a call with.
		if at.RemainingMs != nil && *at.RemainingMs < 0 {
			seen = append(seen, fmt.Sprintf("started with %s %d", keyRemainingMs, *at.RemainingMs))
		}
		if len(seen) > 0 {
			a.add(g, CodeAttemptAfterDeadline, at.SpanID, "attempt %d (%s) %s", at.Number, redacted(at.RequestID), strings.Join(seen, " and "))
		}
	}
}

// checkNumbering wants 1, 2, ... n. A later hop of a redirect chain
// (retry.redirects) goes on counting from the hops before it, and so may a
// repeat the transport counted (retry.operation.repeat), so there only
// consecutive numbers are wanted; operations of one id in flight together
// interleave theirs (checkNumberingTogether).
func (a *analyzer) checkNumbering(g *group) {
	atts := g.op.Attempts
	if len(atts) == 0 {
		return
	}
	for _, at := range atts {
		if at.Number < 1 {
			return // reported as an invalid attribute
		}
	}
	if a.besideLost(g) {
		// Attempts of the id in flight with it lost their operation
		// span or record (see checkMissingOperationSpans): their numbers
		// may have interleaved with its own.
		return
	}
	if a.checkStartOrder(g) {
		return
	}
	if g.together != nil {
		a.checkNumberingTogether(g)
		return
	}
	first := int64(1)
	if marked(g) {
		first = atts[0].Number
	}
	bad := false
	for i, at := range atts {
		if at.Number != first+int64(i) {
			bad = true
			break
		}
	}
	if !bad {
		return
	}
	got, want := make([]string, len(atts)), make([]string, len(atts))
	for i, at := range atts {
		got[i] = strconv.FormatInt(at.Number, 10)
		want[i] = strconv.FormatInt(first+int64(i), 10)
	}
	a.add(g, CodeAttemptNumbering, "", "%s values are %s; want %s", keyAttempt, listed(got, ", "), listed(want, ", "))
}

// checkStartOrder reports attempts whose numbers do not follow the order
// they started in (g's attempts are sorted by number): an attempt is
// numbered when it starts, a hedge too. A start read from a log record is
// its end less its elapsed milliseconds, so one millisecond is given to
// it. It reports whether it found one.
func (a *analyzer) checkStartOrder(g *group) bool {
	atts := g.op.Attempts
	for i := 1; i < len(atts); i++ {
		prev, at := atts[i-1], atts[i]
		slack := time.Duration(0)
		if (prev.span != nil && prev.span.Log) || (at.span != nil && at.span.Log) {
			slack = time.Millisecond
		}
		if prev.Start.IsZero() || at.Start.IsZero() || !at.Start.Add(slack).Before(prev.Start) {
			continue
		}
		a.add(g, CodeAttemptNumbering, "", "%s %d started %s before %s %d; want the numbers in the order the attempts started",
			keyAttempt, at.Number, prev.Start.Sub(at.Start), keyAttempt, prev.Number)
		return true
	}
	return false
}

func (a *analyzer) checkCount(g *group) {
	if g.span == nil || g.op.RecordedAttempts == nil {
		return
	}
	if n := *g.op.RecordedAttempts; n != int64(len(g.op.Attempts)) {
		a.add(g, CodeAttemptCountMismatch, g.op.SpanID, "%s is %d but the input holds %s", keyAttempts, n, Plural(len(g.op.Attempts), a.attemptNoun()))
	}
}

// checkAcrossOperations runs the checks that compare operations.
func (a *analyzer) checkAcrossOperations() {
	a.checkReusedIDs()
	a.checkOrphanSplit()
	a.checkRequestIDs()
	a.checkOuterLayerResend()
}

// marked reports an operation span that says it continues another
// operation: a later hop of a redirect chain, or an operation the transport
// counted as a repeat. Several operation spans may share an id that way.
func marked(g *group) bool {
	return g.op.Redirects != nil && *g.op.Redirects > 0 || g.op.Repeat != nil && *g.op.Repeat > 0
}

// checkReusedIDs reports an operation id carried by several operation
// spans that do not say why (see marked).
func (a *analyzer) checkReusedIDs() {
	byID := map[string][]*group{}
	var ids []string
	for _, g := range a.groups {
		if g.span == nil || g.op.ID == "" || marked(g) {
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
		a.add(gs[0], CodeOperationIDReused, gs[0].op.SpanID, "operation id %s is carried by %d operation spans: %s",
			fmtID(id), len(gs), listed(where, "; "))
		a.relate(gs[1:min(len(gs), maxListed)]...)
	}
}

// checkOrphanSplit reports one trace whose attempts, lacking an operation
// span, carry several operation ids although they count on from each
// other: an id whose first attempt is not attempt 1 continues another id's
// attempts. (Several operations in one trace, each counting from 1, are
// legitimate, with or without operation spans.)
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
		continues := slices.ContainsFunc(gs, func(g *group) bool {
			return len(g.op.Attempts) > 0 && g.op.Attempts[0].Number > 1
		})
		if !continues {
			continue
		}
		ids := make([]string, len(gs))
		for i, g := range gs {
			ids[i] = fmtID(g.op.ID)
		}
		a.add(gs[0], CodeOperationIDSplit, "", "trace %s holds attempts without an operation span under %d operation ids that count on from each other: %s",
			t, len(gs), listed(ids, ", "))
		a.relate(gs[1:min(len(gs), maxListed)]...)
	}
}

// checkRequestIDs reports request ids seen more than once: one attempt
// span delivered several times, or several attempt spans sharing an id.
func (a *analyzer) checkRequestIDs() {
	count := map[string]int{}
	for _, g := range a.groups {
		for _, at := range g.op.Attempts {
			if n := a.dups[at.span]; n > 0 {
				how := "same trace and span id"
				if a.logs {
					how = "identical records"
				}
				a.add(g, CodeDuplicateRequestID, at.SpanID, "attempt %d (%s) was delivered %d times (%s)",
					at.Number, redacted(at.RequestID), n+1, how)
			}
			if at.RequestID != "" {
				count[at.RequestID]++
			}
		}
	}
	// Only ids seen twice or more are listed, in the order of their
	// first use.
	type use struct {
		g  *group
		at Attempt
	}
	byID := map[string][]use{}
	var ids []string
	for _, g := range a.groups {
		for _, at := range g.op.Attempts {
			if count[at.RequestID] < 2 {
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
		// Spans of several traces may share a span id: each is named by
		// its trace then, else two spans read as one delivered twice.
		manyTraces := slices.ContainsFunc(uses, func(u use) bool { return u.g.op.TraceID != uses[0].g.op.TraceID })
		where := make([]string, 0, min(len(uses), maxListed+1))
		for _, u := range uses[:min(len(uses), maxListed)] {
			span := "span " + u.at.SpanID
			if manyTraces {
				span = "trace " + orNone(u.g.op.TraceID) + " span " + u.at.SpanID
			}
			where = append(where, fmt.Sprintf("attempt %d of %s (%s)", u.at.Number, fmtID(u.g.op.ID), span))
		}
		if len(uses) > maxListed {
			where = append(where, fmt.Sprintf("and %d more", len(uses)-maxListed))
		}
		a.add(uses[1].g, CodeDuplicateRequestID, uses[1].at.SpanID, "request id %s is carried by %d %ss: %s",
			fmtID(id), len(uses), a.attemptNoun(), strings.Join(where, "; "))
		for _, u := range uses[:min(len(uses), maxListed)] {
			a.relate(u.g)
		}
	}
}

// checkOuterLayerResend reports an operation that repeats an earlier one
// of the same non-idempotent request: the same method (not GET, HEAD,
// OPTIONS or TRACE) and sanitized URL, with no idempotency contract, under
// the same operation context (the same parent span, or the same operation
// id, in whatever trace: a loop without a span of its own starts a trace
// per call), after the earlier one did not succeed and sent something (one
// the client-side throttle refused, or that ended before its first call,
// was not applied: trying it again is no resend). A layer above the retry
// transport sent it again (go-retryablehttp stacked over it, an
// application loop), which the transport's own unsafe-resend rules cannot
// prevent. An operation marked retry.operation.repeat > 0 whose earlier
// operations are not in the input is reported on the marker alone. A
// later hop of a redirect chain (retry.redirects) is never a repeat: a 307
// or 308 resends a POST by design.
func (a *analyzer) checkOuterLayerResend() {
	s := resendScan{failed: map[resendRequest]*group{}, seen: map[resendContext]bool{}, chains: redirectChains[resendContext]{}}
	for _, g := range a.groups { // in start order
		if g.span == nil {
			continue
		}
		contexts := a.resendContextsOf(g)
		method := methodOf(g)
		redirect := g.op.Redirects != nil && *g.op.Redirects > 0
		if (unrepeatable(g, method) || keyedWrite(g, method)) && !redirect {
			a.checkRepeat(&s, g, method, contexts)
		}
		s.record(g, method, redirect, contexts)
	}
}

// resendContext is where the transport counts an operation's repeats: a
// parent span (in its trace) or an operation id (trace empty).
type resendContext struct {
	trace, kind, id string
	// marked: a later operation is compared here only when it carries
	// retry.operation.repeat (see callSpansOf).
	marked bool
}

// resendRequest is a request in a context.
type resendRequest struct {
	resendContext
	method, url string
}

// resendScan is checkOuterLayerResend's state, in start order.
type resendScan struct {
	// failed: the earlier operation that did not succeed and ended first;
	// a later one repeats it only if it began after that end (a layer
	// above sends its next try once the one before returned: calls made at
	// once, a fan-out of creates, are calls of their own).
	failed map[resendRequest]*group
	seen   map[resendContext]bool // a context with an earlier operation in the input
	// chains: the redirect chains of each context; a later hop that fails
	// is its chain's first hop's request's failure (a layer above sends
	// that request again).
	chains redirectChains[resendContext]
}

// resendContextsOf lists the contexts g's repeats are counted in.
func (a *analyzer) resendContextsOf(g *group) []resendContext {
	var contexts []resendContext
	call, above := a.callSpansOf(g)
	if call != "" {
		contexts = append(contexts, resendContext{g.op.TraceID, "parent span", call, false})
	}
	if above != "" {
		contexts = append(contexts, resendContext{g.op.TraceID, "parent span", above, true})
	}
	if g.op.ID != "" {
		contexts = append(contexts, resendContext{"", "operation id", g.op.ID, false})
	}
	return contexts
}

// checkRepeat reports g, a write, when it repeats an earlier failed
// operation in one of its contexts: without a contract or key, or, keyed,
// under another key (sameKey).
func (a *analyzer) checkRepeat(s *resendScan, g *group, method string, contexts []resendContext) {
	marked := g.op.Repeat != nil && *g.op.Repeat > 0
	anyEarlier := false
	var within *group // from records: an earlier failure that may have ended first, by less than their resolution
	for _, c := range contexts {
		if c.marked && !marked {
			continue
		}
		anyEarlier = anyEarlier || s.seen[c]
		if g.op.URL == "" {
			continue
		}
		earlier := s.failed[resendRequest{c, method, g.op.URL}]
		if earlier != nil && keyedWrite(g, method) && sameKey(earlier, g) {
			return // the server tells the repeat by its key, whenever it began
		}
		ended := earlier != nil && endedBefore(earlier, g, a.endResolution())
		if earlier != nil && !ended && endedBefore(earlier, g, 0) {
			within = earlier // began within the records' resolution of its end
		}
		if ended {
			a.reportRepeat(g, earlier, method, c)
			return
		}
	}
	if !keyedWrite(g, method) || within != nil {
		// A keyed write whose earlier operation is not in the input may
		// have gone under its key: not counted against it.
		a.unmatchedRepeat(g, method, within, anyEarlier)
	}
}

// reportRepeat reports g, a write, repeating earlier, a failed operation
// that ended before it began, in context c: an outer layer's resend, or,
// from records, a note when earlier's state check may have found it not
// applied.
func (a *analyzer) reportRepeat(g, earlier *group, method string, c resendContext) {
	where := "span " + earlier.op.SpanID
	if earlier.op.TraceID != g.op.TraceID {
		where = "trace " + earlier.op.TraceID + ", " + where
	}
	if a.logs && checkAnswerUnknown(earlier) {
		a.note(g, CodeNeedsSpans, "state-check-end", g.op.SpanID,
			"%s %s (operation %s) repeats operation %s (%s, which ended with %s after its state check): whether the check found the write not applied, so that nothing is repeated, only its span tells",
			redacted(method), g.op.URL, fmtID(g.op.ID), fmtID(earlier.op.ID), where, opResult(earlier))
		return
	}
	without := "with no " + keyIdempotencyContract + "=true"
	if keyedWrite(g, method) {
		without = "under another idempotency key than its"
	}
	a.add(g, CodeOuterLayerResend, g.op.SpanID,
		"%s %s (operation %s) repeats operation %s (%s, which ended with %s) under the same %s, %s",
		redacted(method), g.op.URL, fmtID(g.op.ID), fmtID(earlier.op.ID), where, opResult(earlier), c.kind, without)
	a.relate(earlier)
}

// record notes g in its contexts: seen, its redirect chain, and, when it
// failed having sent something, as the failure a later operation may
// repeat (a later hop's failure is its chain's first hop's too).
func (s *resendScan) record(g *group, method string, redirect bool, contexts []resendContext) {
	for _, c := range contexts {
		s.seen[c] = true
		var head *group
		if redirect {
			head = s.chains.follow(c, g)
		} else {
			s.chains.begin(c, g)
		}
		if g.op.URL == "" || method == "" || succeeded(g) || sentNothing(g) || foundNotApplied(g) {
			continue
		}
		failedAs := []resendRequest{{c, method, g.op.URL}}
		if head != nil && head.op.URL != "" {
			failedAs = append(failedAs, resendRequest{c, methodOf(head), head.op.URL})
		}
		for _, r := range failedAs {
			if s.failed[r] == nil || endsFirst(g, s.failed[r]) {
				s.failed[r] = g
			}
		}
	}
}

// methodOf is g's method: its operation's, else its first attempt's.
func methodOf(g *group) string {
	if g.op.Method == "" && len(g.op.Attempts) > 0 {
		return g.op.Attempts[0].Method
	}
	return g.op.Method
}

// unmatchedRepeat reports a write that repeats no earlier operation found
// ended before it (see checkOuterLayerResend): from records, one that began
// within their resolution of an earlier failure's end (within), or whose
// repeat marker counts operations that may share its parent span, is a
// needs-spans note; from spans, a marker with no earlier operation of its
// context in the input (anyEarlier) is reported on the marker alone.
func (a *analyzer) unmatchedRepeat(g *group, method string, within *group, anyEarlier bool) {
	switch {
	case within != nil:
		a.note(g, CodeNeedsSpans, "repeat-within", g.op.SpanID,
			"%s %s (operation %s) began within a millisecond of the end of operation %s (which ended with %s), as the records give it in whole milliseconds: whether it repeats it, only the spans tell",
			redacted(method), g.op.URL, fmtID(g.op.ID), fmtID(within.op.ID), opResult(within))
	case anyEarlier || g.op.Repeat == nil || *g.op.Repeat == 0:
	case a.logs:
		// The earlier operations the marker counts may share its parent
		// span, which a log record does not carry: they may be in the
		// input under ids of their own.
		a.note(g, CodeNeedsSpans, "repeat-marker", g.op.SpanID,
			"%s %s (operation %s) carries %s=%d: whether the earlier operation(s) it counts under the same parent span are in the input, only the spans tell",
			redacted(method), g.op.URL, fmtID(g.op.ID), keyRepeat, *g.op.Repeat)
	default:
		a.add(g, CodeOuterLayerResend, g.op.SpanID,
			"%s %s (operation %s) carries %s=%d: the transport counted %d earlier operation(s) under the same context, not in the input, with no %s=true",
			redacted(method), g.op.URL, fmtID(g.op.ID), keyRepeat, *g.op.Repeat, *g.op.Repeat, keyIdempotencyContract)
	}
}

// endedBefore reports whether earlier ended before later began, its end
// known to within resolution (the time it was read at may be up to that
// much before the true end); when the input does not say (no end, no
// start), it is taken to have.
func endedBefore(earlier, later *group, resolution time.Duration) bool {
	return earlier.op.End.IsZero() || later.op.Start.IsZero() || !earlier.op.End.Add(resolution).After(later.op.Start)
}

// endResolution is how well the input gives an operation's end: to the
// nanosecond from a span, to the millisecond from a log record, whose end
// is its start plus retry.operation.duration_ms, in whole milliseconds
// (cut, not rounded).
func (a *analyzer) endResolution() time.Duration {
	if a.logs {
		return time.Millisecond
	}
	return 0
}

// endsFirst reports whether g ends before other, an end the input does
// not give counting as the earliest (endedBefore takes it as ended).
func endsFirst(g, other *group) bool {
	return !other.op.End.IsZero() && (g.op.End.IsZero() || g.op.End.Before(other.op.End))
}

// callSpansOf gives the ids of the spans the transport may count g's
// repeats under (retry.operation.repeat): call, the operation span's
// parent, and, when that one is a CLIENT span in the input with a parent,
// above, that parent. The transport counts there for the first operation
// under a CLIENT span the request carried on its headers (a client
// instrumentation above, such as otelhttp's, starts and injects one per
// try), which a trace does not show: an operation is compared with those
// under above only when it carries the marker (the transport saw that
// span on the wire), so that two calls under CLIENT spans of a caller's
// own are no repeat. An attempt span of a transport above is no such
// span: the operations below it are each its own call.
func (a *analyzer) callSpansOf(g *group) (call, above string) {
	call = g.span.ParentID
	if p := a.parent[g.at]; p >= 0 && a.roles[p] != roleAttempt && a.spans[p].Kind == model.KindClient && a.spans[p].ParentID != "" {
		above = a.spans[p].ParentID
	}
	return call, above
}

// succeeded reports an operation whose last attempt (the one it ended
// on) received a 1xx-3xx status, or whose last state check found its
// write applied (the caller got the stored answer; from log records, which
// have no state check, an operation that returned after its last attempt
// decided check_state): a layer above has no reason to send it again, so
// a later equal request is taken as deliberate.
func succeeded(g *group) bool {
	if n := len(g.op.StateChecks); n > 0 && g.op.StateChecks[n-1].Result == string(attrs.StateApplied) {
		return true
	}
	end := g.op.Ending()
	if end < 0 {
		return false
	}
	last := g.op.Attempts[end]
	if g.op.Outcome == string(attrs.OutcomeReturn) && last.Decision == string(attrs.DecisionCheckState) {
		return true
	}
	return last.StatusCode != nil && *last.StatusCode >= 100 && *last.StatusCode < 400 && !last.hasErrorClass
}

// sentNothing reports whether g sent nothing: each of the attempts it
// recorded is in the input and records that it never left (neverLeft),
// or it made none: none is in
// the input, and it recorded none (retry.attempts 0), or, without that
// record, the throttle refused it (outcome throttled; a refused retry
// ends so too, after attempts it made).
func sentNothing(g *group) bool {
	if len(g.op.Attempts) > 0 {
		// Each attempt it made is in the input (a lost one may have
		// left: the count the operation recorded says so), and each
		// never left.
		r := g.op.RecordedAttempts
		return r != nil && *r == int64(len(g.op.Attempts)) &&
			!slices.ContainsFunc(g.op.Attempts, func(at Attempt) bool { return !neverLeft(at) })
	}
	if r := g.op.RecordedAttempts; r != nil {
		return *r == 0
	}
	return g.op.Outcome == "throttled"
}

// neverLeft reports whether attempt at records that its request never
// left: no answer, and an error class that says so (a refused
// connection, DNS, a failed handshake), or a reason that does
// (not_processed, invalid_request: net/http refused it, certificate: the
// client rejected the server's).
func neverLeft(at Attempt) bool {
	if at.hasStatus || at.Decision == string(attrs.DecisionCheckState) {
		return false // answered, or the transport itself took the write for possibly applied
	}
	switch attrs.Reason(at.Reason) {
	case attrs.ReasonNotProcessed, attrs.ReasonInvalidRequest, attrs.ReasonCertificate:
		return true
	}
	return attrs.ErrorClass(at.ErrorClass).NotProcessed()
}

// opResult describes how an operation ended: its outcome and what its
// last attempt (the one it ended on) observed.
func opResult(g *group) string {
	res := "no attempt"
	if end := g.op.Ending(); end >= 0 {
		res = resultText(g.op.Attempts[end])
	}
	if g.op.Outcome != "" {
		return fmt.Sprintf("%s, outcome %s", res, quote(g.op.Outcome))
	}
	return res
}

// checkConflicts reports span ids delivered with differing content.
func (a *analyzer) checkConflicts(pos map[spanKey]int, groupAt func(int) *group) {
	for _, c := range a.conflicts {
		var g *group
		if i, ok := pos[keyOf(c.kept)]; ok {
			g = groupAt(i)
		}
		a.add(g, CodeSpanIDReused, c.kept.SpanID, "%s in trace %s is delivered again with different content (%s); the first copy is analyzed",
			describeSpan(c.kept), c.kept.TraceID, strings.Join(c.diff, ", "))
	}
}

// attemptNoun names what the input holds for an attempt.
func (a *analyzer) attemptNoun() string {
	if a.logs {
		return attrs.LogEventAttempt + " record"
	}
	return "attempt span"
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
		return statusText(at) + " and " + redacted(at.ErrorClass)
	case at.hasStatus:
		return statusText(at)
	case at.hasErrorClass:
		return redacted(at.ErrorClass)
	default:
		return "no recorded result"
	}
}
