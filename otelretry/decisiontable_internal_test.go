// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// The decision table, row by row: the one source of the table that
// FuzzDecide holds decide to (reference), and of the table in doc.go and
// docs/decisions.md, which TestDecisionTableIsGenerated holds to it. The
// first row that matches decides.
type decisionRow struct {
	phases []phase
	// The table's columns: what came back, the request, the decision and
	// the reason, as the docs show them.
	what, request, decision, reason string
	match                           func(in input) bool
	verdict                         func(in input) verdict
}

var (
	before       = []phase{phaseBeforeCall, phasePrepared}
	prepared     = []phase{phasePrepared}
	afterAttempt = []phase{phaseAttempt}
	afterCheck   = []phase{phaseStateCheck}
)

func always(input) bool { return true }

func is(d attrs.Decision, r attrs.Reason) func(input) verdict {
	return func(input) verdict { return verdict{decision: d, reason: r} }
}

// unknown is a verdict that ends the operation while a write may have
// been applied.
func unknown(d attrs.Decision, r attrs.Reason) func(input) verdict {
	return func(input) verdict { return verdict{decision: d, reason: r, unknownWrite: true} }
}

// retryRow is a retry, within the limits (refLimits), unless the intent
// forbids it; why is its reason.
func retryRow(why attrs.Reason) func(input) verdict {
	return func(in input) verdict {
		if in.noRetry {
			return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonIntent}
		}
		if !in.pauseAsked {
			return verdict{decision: attrs.DecisionRetry, reason: why, needPause: true}
		}
		return refLimits(in, max(in.backoff, in.retryAfter, in.classifier.pause), why)
	}
}

// refLimits are the limits of a retry, in the table's order (footnote ²).
func refLimits(in input, pause time.Duration, why attrs.Reason) verdict {
	drain := max(pause, in.drainFloor)
	switch {
	case in.remaining <= drain:
		return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonDeadline}
	case in.attemptsLeft <= 0:
		return verdict{decision: attrs.DecisionMaxAttempts, reason: attrs.ReasonAttemptLimit}
	case !in.replayable:
		return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonNotReplayable}
	case !in.budgetAsked:
		return verdict{decision: attrs.DecisionRetry, pause: pause, drain: drain, reason: why, needBudget: true}
	case in.budget != "":
		return verdict{decision: attrs.DecisionBudgetExhausted, reason: in.budget}
	}
	return verdict{decision: attrs.DecisionRetry, pause: pause, drain: drain, reason: why}
}

func answered(in input) bool   { return in.status != 0 }
func noResponse(in input) bool { return in.status == 0 }

var decisionRows = []decisionRow{
	// Before a call, and once the attempt is prepared.
	{before, "the caller canceled", "any", "`canceled`, no call made", "`caller`",
		func(in input) bool { return in.callerCanceled }, is(attrs.DecisionCanceled, attrs.ReasonCaller)},
	{before, "the caller's deadline passed", "any", "`deadline_exceeded`, no call made", "`caller`",
		func(in input) bool { return in.callerDeadline }, is(attrs.DecisionDeadlineExceeded, attrs.ReasonCaller)},
	{before, "no time left for the call a retry planned (work after the decision took it); an `attempt_abandoned` event on the operation span", "any",
		"`deadline_exceeded`, no call made", "`overrun`",
		func(in input) bool { return in.remaining <= 0 && in.afterRetry }, is(attrs.DecisionDeadlineExceeded, attrs.ReasonOverrun)},
	{before, "no time left", "any", "`deadline_exceeded`, no call made", "`deadline`",
		func(in input) bool { return in.remaining <= 0 }, is(attrs.DecisionDeadlineExceeded, attrs.ReasonDeadline)},
	{prepared, "`GetBody` failed", "any", "`stop`, no call made", "`not_replayable`",
		func(in input) bool { return in.bodyUnavailable }, is(attrs.DecisionStop, attrs.ReasonNotReplayable)},
	{prepared, "the `PrepareFunc` failed, or changed the method, the host or (after the first attempt) the idempotency-key contract's headers", "any",
		"`stop`, no call made", "`prepare_failed`",
		func(in input) bool { return in.prepareFailed || in.prepareChanged }, is(attrs.DecisionStop, attrs.ReasonPrepareFailed)},

	// After an attempt.
	{afterAttempt, "no response, and the caller canceled", "repeatable¹ / not", "`canceled`; a write in flight matches `ErrOutcomeUnknown`", "`caller`",
		func(in input) bool {
			return noResponse(in) && (in.callerCanceled || in.class == attrs.ErrorClassCanceled)
		},
		func(in input) verdict {
			return verdict{decision: attrs.DecisionCanceled, reason: attrs.ReasonCaller, unknownWrite: !in.repeatable && !in.notProcessed}
		}},
	{afterAttempt, "no response, and the caller's deadline passed", "repeatable¹ / not",
		"`deadline_exceeded`, no state check; a write in flight matches `ErrOutcomeUnknown`", "`caller`",
		func(in input) bool { return noResponse(in) && in.callerDeadline },
		func(in input) verdict {
			return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonCaller, unknownWrite: !in.repeatable && !in.notProcessed}
		}},
	{afterAttempt, "2xx, 3xx, 101", "any", "`return`", "`response`",
		func(in input) bool { return answered(in) && success(in.status) }, is(attrs.DecisionReturn, attrs.ReasonResponse)},
	{afterAttempt, "a failed answer after the caller canceled", "any", "`canceled` (the answer is returned)", "`caller`",
		func(in input) bool { return answered(in) && in.callerCanceled }, is(attrs.DecisionCanceled, attrs.ReasonCaller)},
	{afterAttempt, "a failed answer after the caller's deadline passed", "any", "`deadline_exceeded` (the answer is returned)", "`caller`",
		func(in input) bool { return answered(in) && in.callerDeadline }, is(attrs.DecisionDeadlineExceeded, attrs.ReasonCaller)},
	{afterAttempt, "no response, and nothing proves it unsent: a timeout, a broken connection, or any failure after the headers reached the wire (httptrace)", "write, not repeatable¹",
		"`check_state`: **not resent**", "`unknown_write`",
		func(in input) bool {
			return noResponse(in) && !in.repeatable && !in.notProcessed &&
				(in.written || in.class == attrs.ErrorClassTimeout || in.class == attrs.ErrorClassConnectionReset)
		}, unknown(attrs.DecisionCheckState, attrs.ReasonUnknownWrite)},
	{afterAttempt, "the classifier says `NotRetryable`", "any", "`stop`", "`classifier`",
		func(in input) bool { return in.classifier.kind == classNotRetryable }, is(attrs.DecisionStop, attrs.ReasonClassifier)},
	{afterAttempt, "the classifier says `NotProcessed` (no response)", "any", "`retry`²", "`classifier`",
		func(in input) bool { return in.classifier.kind == classNotProcessed && noResponse(in) }, retryRow(attrs.ReasonClassifier)},
	{afterAttempt, "the classifier says `Retryable`", "repeatable¹, or proved unsent", "`retry`²", "`classifier`",
		func(in input) bool {
			return in.classifier.kind == classRetryable && (in.repeatable || (noResponse(in) && in.notProcessed))
		}, retryRow(attrs.ReasonClassifier)},
	{afterAttempt, "the classifier says `Retryable`", "not repeatable", "`stop`", "`not_idempotent`",
		func(in input) bool { return in.classifier.kind == classRetryable }, is(attrs.DecisionStop, attrs.ReasonNotIdempotent)},
	{afterAttempt, "the service says its answer must not be retried: a should-retry header (`Stripe-Should-Retry`, `X-Should-Retry`) is `false`", "any",
		"`stop` (the answer is returned)", "`server_no_retry`",
		func(in input) bool { return answered(in) && in.verdict == verdictNoRetry }, is(attrs.DecisionStop, attrs.ReasonServerNoRetry)},
	{afterAttempt, "the service says the request may be repeated: a should-retry header is `true`", "repeatable¹, or any with `WithShouldRetryWrites` (recorded as evidence)",
		"`retry`²", "`server_retry`",
		func(in input) bool {
			return answered(in) && in.verdict == verdictRetry && (in.repeatable || in.verdictWrites)
		},
		retryRow(attrs.ReasonServerRetry)},
	{afterAttempt, "an error that proves the request never left: connection refused, DNS, TLS handshake, dial; a cut before the base reported a connection; a failed first write on a reused HTTP/1 connection (httptrace)",
		"any", "`retry`²", "`not_processed`",
		func(in input) bool { return noResponse(in) && in.notProcessed }, retryRow(attrs.ReasonNotProcessed)},
	{afterAttempt, "any other transport error", "repeatable¹", "`retry`²", "`retryable_error`",
		func(in input) bool { return noResponse(in) && in.repeatable }, retryRow(attrs.ReasonRetryableError)},
	{afterAttempt, "any other transport error", "not repeatable", "`stop`", "`not_idempotent`",
		noResponse, is(attrs.DecisionStop, attrs.ReasonNotIdempotent)},
	{afterAttempt, "408, 429, 502, 503, 504 (`WithRetryableStatuses`)", "repeatable¹", "`retry`²", "`retryable_status`",
		func(in input) bool { return in.retryableStatus && in.repeatable }, retryRow(attrs.ReasonRetryableStatus)},
	{afterAttempt, "408, 429, 502, 503, 504 (`WithRetryableStatuses`)", "not repeatable", "`stop` (the answer is returned)", "`not_idempotent`",
		func(in input) bool { return in.retryableStatus }, is(attrs.DecisionStop, attrs.ReasonNotIdempotent)},
	{afterAttempt, "any other status", "any", "`stop` (the answer is returned)", "`status`", always, is(attrs.DecisionStop, attrs.ReasonStatus)},

	// After a state check of an unknown write.
	{afterCheck, "the state check says `applied`", "any", "`return` (the stored response)", "`state_applied`",
		func(in input) bool { return in.state == attrs.StateApplied }, is(attrs.DecisionReturn, attrs.ReasonStateApplied)},
	{afterCheck, "the caller gave up during the check", "any", "`canceled` / `deadline_exceeded`; unknown unless `not_applied`", "`caller`",
		func(in input) bool { return in.callerCanceled || in.callerDeadline },
		func(in input) verdict {
			d := attrs.DecisionDeadlineExceeded
			if in.callerCanceled {
				d = attrs.DecisionCanceled
			}
			return verdict{decision: d, reason: attrs.ReasonCaller, unknownWrite: in.state != attrs.StateNotApplied}
		}},
	{afterCheck, "`unknown`, an answer outside the set, or an error", "any", "`check_state`", "`state_unknown`",
		func(in input) bool { return in.state != attrs.StateNotApplied }, unknown(attrs.DecisionCheckState, attrs.ReasonStateUnknown)},
	{afterCheck, "`not_applied`, and the intent forbids retries", "any", "`stop`", "`intent`",
		func(in input) bool { return in.noRetry }, is(attrs.DecisionStop, attrs.ReasonIntent)},
	{afterCheck, "`not_applied`", "any", "`retry`², with no pause", "`state_not_applied`", always,
		func(in input) verdict { return refLimits(in, 0, attrs.ReasonStateNotApplied) }},
}

// reference is the decision table applied: the first row that matches,
// or a go-ahead before a call. A write whose outcome is unknown stays
// unknown to the end, unless a state check says it was not applied.
func reference(in input) verdict {
	var v verdict
	for _, r := range decisionRows {
		if slices.Contains(r.phases, in.phase) && r.match(in) {
			v = r.verdict(in)
			break
		}
	}
	unknownNow := in.phase == phaseAttempt && in.write && in.status == 0 && !in.notProcessed &&
		(in.written || in.class == attrs.ErrorClassTimeout || in.class == attrs.ErrorClassConnectionReset)
	v.unresolvedWrite = (in.unresolvedWrite || unknownNow) && !(in.phase == phaseStateCheck && in.state == attrs.StateNotApplied)
	switch v.decision {
	case "", attrs.DecisionRetry, attrs.DecisionReturn:
	default:
		v.unknownWrite = v.unknownWrite || v.unresolvedWrite
	}
	return v
}

// whenOf names a row's phases as the table does.
func whenOf(ps []phase) string {
	switch {
	case slices.Equal(ps, before):
		return "before a call"
	case slices.Equal(ps, prepared):
		return "once prepared"
	case slices.Equal(ps, afterAttempt):
		return "after an attempt"
	}
	return "after a state check"
}

// decisionTableMarkdown renders the table for docs/decisions.md.
func decisionTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| # | when | what came back | request | decision | reason |\n|---|---|---|---|---|---|\n")
	for i, r := range decisionRows {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i+1, whenOf(r.phases), r.what, r.request, r.decision, r.reason)
	}
	return b.String()
}

// decisionTableDoc renders the table for doc.go: a list, one row a line.
func decisionTableDoc() string {
	var b strings.Builder
	for i, r := range decisionRows {
		line := fmt.Sprintf("%d. %s, %s (%s): %s, reason %s", i+1, whenOf(r.phases), strings.ReplaceAll(r.what, "`", ""),
			strings.ReplaceAll(r.request, "`", ""), strings.ReplaceAll(r.decision, "`", ""), strings.ReplaceAll(r.reason, "`", ""))
		line = strings.NewReplacer("**", "", "¹", " [1]", "²", " [2]").Replace(line)
		b.WriteString(wrapDoc(line))
	}
	return b.String()
}

// wrapDoc wraps a list item of a doc comment at 76 columns, with its
// continuation lines indented under it.
func wrapDoc(s string) string {
	var b strings.Builder
	line := "//   - "
	for _, w := range strings.Fields(s) {
		if len(line)+len(w) > 76 && !strings.HasSuffix(line, "- ") && !strings.HasSuffix(line, "    ") {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = "//     "
		}
		line += w + " "
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}

var update = flag.Bool("update", false, "rewrite the generated decision tables")

// generated replaces what stands between the lines begin and end of file
// with body, and reports whether it changed; with -update it writes it.
func generated(t *testing.T, file, begin, end, body string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s: the generated table's markers %q and %q are missing", file, begin, end)
	}
	i += len(begin)
	if text[i:j] == body {
		return
	}
	if !*update {
		t.Errorf("%s: the decision table is not the one decisionRows gives; run go test -run TestDecisionTableIsGenerated -update", file)
		return
	}
	if err := os.WriteFile(file, []byte(text[:i]+body+text[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The decision table of doc.go and of docs/decisions.md is the one
// FuzzDecide holds decide to (decisionRows): generated from it, and held
// to it here.
func TestDecisionTableIsGenerated(t *testing.T) {
	generated(t, "../docs/decisions.md", "<!-- decision table: generated by TestDecisionTableIsGenerated; do not edit -->\n",
		"<!-- end of decision table -->", decisionTableMarkdown())
	generated(t, "doc.go", "// The rows, in order (generated from the decision table; see docs/decisions.md):\n//\n",
		"//\n// [1] Repeatable:", decisionTableDoc())
}

// Every reason and every decision of the closed sets is the verdict of
// some row, so that the table documents them all.
func TestDecisionTableCoversTheVocabulary(t *testing.T) {
	var text strings.Builder
	for _, r := range decisionRows {
		text.WriteString(r.decision + " " + r.reason + " ")
	}
	for _, d := range attrs.Decisions() {
		if d == attrs.DecisionMaxAttempts || d == attrs.DecisionBudgetExhausted {
			continue // the limits of a retry (footnote 2)
		}
		if !strings.Contains(text.String(), "`"+string(d)+"`") {
			t.Errorf("decision %s is in no row", d)
		}
	}
	for _, r := range attrs.Reasons() {
		switch r {
		case attrs.ReasonBudget, attrs.ReasonPushback, attrs.ReasonHostLimit, attrs.ReasonAttemptLimit:
			continue // the limits of a retry (footnote 2)
		}
		if !strings.Contains(text.String(), "`"+string(r)+"`") {
			t.Errorf("reason %s is in no row", r)
		}
	}
}
