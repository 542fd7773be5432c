// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"slices"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// with replaces (or adds) attributes of s.
func with(s model.Span, extra ...model.Attribute) model.Span {
	as := slices.Clone(s.Attributes)
	for _, e := range extra {
		as = slices.DeleteFunc(as, func(a model.Attribute) bool { return a.Key == e.Key })
	}
	s.Attributes = append(as, extra...)
	return s
}

func failedAttempt(s model.Span, d attrs.Decision, r attrs.Reason) model.Span {
	return with(s, kv(keyStatusCode, model.Int(503)), kv(keyDecision, model.String(string(d))), kv(keyReason, model.String(string(r))))
}

func findingCodes(t *testing.T, spans []model.Span) []Code {
	t.Helper()
	return codesOf(Analyze(spans))
}

// An unchanged retry.remaining_ms (under a millisecond went by) does not
// grow: only a larger value is remaining-grows (codes.go).
func TestChecksRemainingEqualIsNoGrowth(t *testing.T) {
	got := findingCodes(t, []model.Span{
		operationSpan("t", 1, 0, "op", 2, 1000),
		failedAttempt(minimalAttempt("t", 2, 1, "op", 1, 0), attrs.DecisionRetry, attrs.ReasonRetryableStatus),
		minimalAttempt("t", 3, 1, "op", 2, 2),
	})
	if len(got) != 0 {
		t.Errorf("findings %v for an equal remaining_ms, want none", got)
	}
}

// retry.deadline_ms is whole milliseconds: an attempt starting within
// deadlineTolerance after the deadline it gives is not after it.
func TestChecksDeadlineToleranceAbsorbsRounding(t *testing.T) {
	at := with(minimalAttempt("t", 2, 1, "op", 1, 0), kv(keyRemainingMs, model.Int(0)))
	at.Start = hostileBase.Add(10*time.Millisecond + 500*time.Microsecond)
	at.End = at.Start.Add(time.Millisecond)
	got := findingCodes(t, []model.Span{operationSpan("t", 1, 0, "op", 1, 10), at})
	if slices.Contains(got, CodeAttemptAfterDeadline) {
		t.Errorf("findings %v for a start 0.5ms past a rounded deadline, want no %s", got, CodeAttemptAfterDeadline)
	}
}

// A write the transport retried on the classifier's proof (reason
// classifier, decisions.md) is no unsafe resend (provedResendable).
func TestChecksClassifierProofIsNoUnsafeResend(t *testing.T) {
	post := kv(keyMethod, model.String("POST"))
	a1 := with(minimalAttempt("t", 2, 1, "op", 1, 0), post, kv(keyErrorClass, model.String(string(attrs.ErrorClassConnectionReset))),
		kv(keyDecision, model.String(string(attrs.DecisionRetry))), kv(keyReason, model.String(string(attrs.ReasonClassifier))))
	a1.Attributes = slices.DeleteFunc(a1.Attributes, func(a model.Attribute) bool { return a.Key == keyStatusCode })
	got := findingCodes(t, []model.Span{
		operationSpan("t", 1, 0, "op", 2, 1000, post),
		a1,
		with(minimalAttempt("t", 3, 1, "op", 2, 2), post),
	})
	if slices.Contains(got, CodeUnsafeResend) {
		t.Errorf("findings %v for a resend on a classifier's proof, want no %s", got, CodeUnsafeResend)
	}
}

// A retry the retry budget refused (outcome budget_exhausted) explains why
// no attempt followed: no retry-without-next.
func TestChecksBudgetExhaustedExplainsARetryWithoutNext(t *testing.T) {
	got := findingCodes(t, []model.Span{
		operationSpan("t", 1, 0, "op", 1, 1000, kv(keyOutcome, model.String(string(attrs.OutcomeBudgetExhausted)))),
		failedAttempt(minimalAttempt("t", 2, 1, "op", 1, 0), attrs.DecisionRetry, attrs.ReasonRetryableStatus),
	})
	if len(got) != 0 {
		t.Errorf("findings %v, want none", got)
	}
}

// twoWrites is an app span (1) with two operations under it: the first
// (op-1, spans 2-3) failed with a 503, the second (op-2, spans 4-5)
// started after it ended, both with method, URL and extra.
func twoWrites(method string, extra ...model.Attribute) []model.Span {
	app := model.Span{TraceID: "t", SpanID: spanID(1), Name: "app", Kind: model.KindInternal, Start: hostileBase, End: hostileBase.Add(5 * time.Second)}
	m := kv(keyMethod, model.String(method))
	op1 := with(operationSpan("t", 2, 1, "op-1", 1, 1000, append([]model.Attribute{m, kv(keyOutcome, model.String(string(attrs.OutcomeStop)))}, extra...)...))
	at1 := failedAttempt(with(minimalAttempt("t", 3, 2, "op-1", 1, 0), m), attrs.DecisionStop, attrs.ReasonStatus)
	op2 := with(operationSpan("t", 4, 1, "op-2", 1, 1000, append([]model.Attribute{m}, extra...)...))
	op2.Start, op2.End = hostileBase.Add(2*time.Second), hostileBase.Add(3*time.Second)
	at2 := with(minimalAttempt("t", 5, 4, "op-2", 1, 2000), m)
	return []model.Span{app, op1, at1, op2, at2}
}

// A PUT declared idempotent (a contract) is repeatable whatever key it
// carries (keyedWrite): a layer above sending it again is no
// outer-layer-resend, even under a fresh generated key.
func TestChecksAContractPutUnderAFreshKeyIsNoOuterResend(t *testing.T) {
	got := findingCodes(t, twoWrites("PUT", kv(keyIdempotencyContract, model.Bool(true)),
		kv(keyIdempotencyKey, model.String(string(attrs.KeySourceGenerated)))))
	if len(got) != 0 {
		t.Errorf("findings %v for a repeated PUT under a contract, want none", got)
	}
	// The same pair without the contract is one (the scene is sound).
	if got := findingCodes(t, twoWrites("PUT", kv(keyIdempotencyKey, model.String(string(attrs.KeySourceGenerated))))); !slices.Contains(got, CodeOuterLayerResend) {
		t.Errorf("findings %v for a repeated PUT under a fresh key, want %s", got, CodeOuterLayerResend)
	}
}

// A layer above that sends a POST again after its 303 chain failed at the
// GET hop repeats the POST (redirectChains): 303 is a redirect net/http
// follows, as 301, 302, 307 and 308.
func TestChecksA303ChainFailureIsItsPOSTsFailure(t *testing.T) {
	app := model.Span{TraceID: "t", SpanID: spanID(1), Name: "app", Kind: model.KindInternal, Start: hostileBase, End: hostileBase.Add(9 * time.Second)}
	post := kv(keyMethod, model.String("POST"))
	get := kv(keyMethod, model.String("GET"))
	op1 := operationSpan("t", 2, 1, "op-1", 1, 1000, post)
	at1 := with(minimalAttempt("t", 3, 2, "op-1", 1, 0), post, kv(keyStatusCode, model.Int(303)))
	hop := operationSpan("t", 4, 1, "op-1", 1, 1000, get, kv(keyURLFull, model.String("http://h.test/done")),
		kv(keyRedirects, model.Int(1)), kv(keyOutcome, model.String(string(attrs.OutcomeStop))))
	hop.Start, hop.End = hostileBase.Add(2*time.Second), hostileBase.Add(3*time.Second)
	at2 := failedAttempt(with(minimalAttempt("t", 5, 4, "op-1", 2, 2000), get), attrs.DecisionStop, attrs.ReasonStatus)
	again := operationSpan("t", 6, 1, "op-2", 1, 1000, post)
	again.Start, again.End = hostileBase.Add(4*time.Second), hostileBase.Add(5*time.Second)
	at3 := with(minimalAttempt("t", 7, 6, "op-2", 1, 4000), post)
	got := findingCodes(t, []model.Span{app, op1, at1, hop, at2, again, at3})
	if !slices.Contains(got, CodeOuterLayerResend) {
		t.Errorf("findings %v, want %s for the POST sent again after its 303 chain failed", got, CodeOuterLayerResend)
	}
}

// A POST the throttle refused before any attempt (outcome throttled, no
// attempt span and no retry.attempts, as an older recorder wrote it) sent
// nothing (sentNothing): the same POST sent again afterwards is no
// outer-layer-resend. The same scene ending stop is one (the scene is
// sound).
func TestChecksAThrottledOperationWithNoAttemptSentNothing(t *testing.T) {
	scene := func(outcome attrs.Outcome) []model.Span {
		app := model.Span{TraceID: "t", SpanID: spanID(1), Name: "app", Kind: model.KindInternal, Start: hostileBase, End: hostileBase.Add(5 * time.Second)}
		post := kv(keyMethod, model.String("POST"))
		op1 := operationSpan("t", 2, 1, "op-1", 0, 1000, post, kv(keyOutcome, model.String(string(outcome))))
		op1.Attributes = slices.DeleteFunc(op1.Attributes, func(a model.Attribute) bool { return a.Key == keyAttempts })
		op2 := operationSpan("t", 4, 1, "op-2", 1, 1000, post)
		op2.Start, op2.End = hostileBase.Add(2*time.Second), hostileBase.Add(3*time.Second)
		at2 := with(minimalAttempt("t", 5, 4, "op-2", 1, 2000), post)
		return []model.Span{app, op1, op2, at2}
	}
	if got := findingCodes(t, scene(attrs.OutcomeThrottled)); slices.Contains(got, CodeOuterLayerResend) {
		t.Errorf("findings %v after a POST the throttle refused unsent, want no %s", got, CodeOuterLayerResend)
	}
	if got := findingCodes(t, scene(attrs.OutcomeStop)); !slices.Contains(got, CodeOuterLayerResend) {
		t.Errorf("findings %v after a POST that ended stop, want %s", got, CodeOuterLayerResend)
	}
}
