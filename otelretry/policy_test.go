// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A classifier's Retryable widens what is retried; it never turns an
// error that proves the request was not processed into a stop: a refused
// POST, which never left and which the defaults retry, is still retried.
func TestClassifierRetryableNeverNarrowsNotProcessed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		h := newHarness(t, []scripted.Step{{Err: refused}, {Status: 201}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				if a.Err != nil {
					return otelretry.Retryable(0)
				}
				return otelretry.Classification{}
			}))
		resp, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
		if err != nil {
			t.Fatalf("err = %v: a refused POST that never left was not retried", err)
		}
		resp.Body.Close()
		if n := len(h.base.Calls()); n != 2 {
			t.Errorf("calls = %d, want 2", n)
		}
	})
}

// Every failed attempt counts against the retry budget alike, whatever
// made it retryable: answers a classifier retries cost a token as the
// statuses of WithRetryableStatuses do.
func TestClassifierRetriesCostTheBudget(t *testing.T) {
	const operations = 100
	calls := func(opts ...otelretry.Option) int {
		var n int
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Status: 500}}, append([]otelretry.Option{
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, opts...)...)
			for range operations {
				resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
				if err == nil {
					resp.Body.Close()
				}
			}
			n = len(h.base.Calls())
		})
		return n
	}
	byStatus := calls(otelretry.WithRetryableStatuses(500))
	byClassifier := calls(otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
		if a.StatusCode == 500 {
			return otelretry.Retryable(0)
		}
		return otelretry.Classification{}
	}))
	if byClassifier != byStatus {
		t.Errorf("an outage of %d operations made %d calls when a classifier retried 500 and %d when WithRetryableStatuses did: the budget must count both alike",
			operations, byClassifier, byStatus)
	}
}

// NotProcessed without protocol evidence is the user's word: it is
// honoured, but the observed class (timeout) stays on spans and metrics,
// the reason is classifier, and no retry.evidence.* is invented. With
// evidence, the class is the evidence's.
func TestClassifierNotProcessedKeepsTheObservedClass(t *testing.T) {
	cases := map[string]struct {
		evidence     otelretry.Evidence
		wantClass    attrs.ErrorClass
		wantEvidence bool
	}{
		"without evidence": {otelretry.Evidence{}, attrs.ErrorClassTimeout, false},
		"with evidence": {otelretry.Evidence{Protocol: "h2", Code: 7, Name: "REFUSED_STREAM"},
			attrs.ErrorClassRefusedStream, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Err: errBaseTimeout}, {Status: 201}},
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
					otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						if a.Err != nil {
							return otelretry.NotProcessed(tc.evidence)
						}
						return otelretry.Classification{}
					}))
				resp, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				first := h.attempts()[0]
				if got := attrOf(first, attrs.ErrorClassKey).AsString(); got != string(tc.wantClass) {
					t.Errorf("error class = %s, want %s", got, tc.wantClass)
				}
				if got := attrOf(first, attrs.ReasonKey).AsString(); got != string(attrs.ReasonClassifier) {
					t.Errorf("reason = %s, want classifier", got)
				}
				if _, has := spantestAttr(first, attrs.EvidenceProtocolKey); has != tc.wantEvidence {
					t.Errorf("retry.evidence.protocol present = %v, want %v", has, tc.wantEvidence)
				}
			})
		})
	}
}

// Evidence is recorded only on the attempt whose decision rests on it: a
// retry, the resend the proof allowed. A POST whose stream was refused (the
// classifier's proof) and that its Intent keeps from being resent
// (stop/intent), or whose body cannot be sent again (stop/not_replayable),
// keeps its class, refused_stream, but records no retry.evidence.*; the
// same POST resent records it on the attempt that was resent.
func TestEvidenceOnlyWhereADecisionRestsOnIt(t *testing.T) {
	h2 := otelretry.Evidence{Protocol: "h2", Code: 7, Name: "REFUSED_STREAM"}
	cases := []struct {
		name         string
		intent       otelretry.Intent
		replayable   bool
		wantDecision string
		wantEvidence bool
	}{
		{"resent", otelretry.Intent{}, true, "retry/classifier", true},
		{"its intent forbids retries", otelretry.Intent{NoRetry: true}, true, "stop/intent", false},
		{"its body cannot be sent again", otelretry.Intent{}, false, "stop/not_replayable", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Err: errors.New("stream reset")}, {Status: 201}},
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithBodyBuffer(0, 0),
					otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						if a.Err != nil {
							return otelretry.NotProcessed(h2)
						}
						return otelretry.Classification{}
					}))
				req := post(t, otelretry.WithIntent(t.Context(), tc.intent), "http://api.test/orders", "order")
				if !tc.replayable {
					req.GetBody = nil
				}
				if resp, err := h.transprt.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
				first := h.attempts()[0]
				if got := attrOf(first, attrs.DecisionKey).AsString() + "/" + attrOf(first, attrs.ReasonKey).AsString(); got != tc.wantDecision {
					t.Fatalf("first attempt: %s, want %s", got, tc.wantDecision)
				}
				if got := attrOf(first, attrs.ErrorClassKey).AsString(); got != string(attrs.ErrorClassRefusedStream) {
					t.Errorf("error class = %s, want refused_stream", got)
				}
				for _, k := range []attribute.Key{attrs.EvidenceProtocolKey, attrs.EvidenceCodeKey, attrs.EvidenceNameKey} {
					if _, has := spantest.Attr(first, k); has != tc.wantEvidence {
						t.Errorf("%s present = %v, want %v", k, has, tc.wantEvidence)
					}
				}
			})
		})
	}
}

// NotProcessed without evidence on a timed-out POST is honoured as the
// user's word: the write is resent, and the attempt keeps its observed
// class (timeout), records reason classifier, and carries no
// retry.evidence.*.
func TestNotProcessedWithoutEvidenceIsTheUsersWord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Err: errBaseTimeout}, {Status: 201}},
			otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				if a.Err != nil {
					return otelretry.NotProcessed(otelretry.Evidence{})
				}
				return otelretry.Classification{}
			}))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/orders", strings.NewReader("order"))
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := len(h.base.Calls()); n != 2 {
			t.Fatalf("%d calls, want 2", n)
		}
		first := h.attempts()[0]
		if c := attrOf(first, attrs.ErrorClassKey).AsString(); c != "timeout" {
			t.Errorf("first attempt class %q, want timeout", c)
		}
		if r := attrOf(first, attrs.ReasonKey).AsString(); r != "classifier" {
			t.Errorf("first attempt reason %q, want classifier", r)
		}
		for _, k := range []attribute.Key{attrs.EvidenceProtocolKey, attrs.EvidenceCodeKey, attrs.EvidenceNameKey} {
			if _, ok := spantest.Attr(first, k); ok {
				t.Errorf("first attempt records %s: evidence invented", k)
			}
		}
	})
}

// NotProcessed applies only to an attempt that got no response: given for
// a 404 (an answer the defaults neither retry nor count), it leaves the
// retry budget as it is without the classifier.
func TestNotProcessedForAnAnswerDoesNotChargeTheBudget(t *testing.T) {
	run := func(c otelretry.Classifier) int {
		budget := &otelretry.Budget{}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 404, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		_, opts := tracingProviders()
		opts = append(opts, otelretry.WithBudget(budget))
		if c != nil {
			opts = append(opts, otelretry.WithClassifier(c))
		}
		rt := otelretry.NewTransport(base, opts...)
		for range 3 {
			resp, err := rt.RoundTrip(get(t, t.Context(), "http://api.test/missing"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		return budget.Available(get(t, t.Context(), "http://api.test/"))
	}
	without := run(nil)
	with := run(func(otelretry.Answer) otelretry.Classification { return otelretry.NotProcessed(otelretry.Evidence{}) })
	if with != without {
		t.Errorf("after three 404s the budget allows %d retries with a NotProcessed classifier, %d without: a classification that does not apply to a response was charged", with, without)
	}
}

// A Classifier's Evidence.Class outside the closed set is never recorded:
// retry.error_class and error.type stay in the vocabulary.
func TestClassifierEvidenceOutsideTheVocabularyIsNotRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Err: errors.New("weird")}, {Status: 200}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
			otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				if a.Err != nil {
					return otelretry.NotProcessed(otelretry.Evidence{Class: "made_up", Protocol: "h9"})
				}
				return otelretry.Classification{}
			}))
		resp, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "x"))
		if err == nil {
			resp.Body.Close()
		}
		for _, s := range h.attempts() {
			if v, ok := spantest.Attr(s, attrs.ErrorClassKey); ok && !attrs.ErrorClass(v.AsString()).Valid() {
				t.Errorf("attempt %d: retry.error_class %q is outside the closed set", attrOf(s, attrs.AttemptKey).AsInt64(), v.AsString())
			}
			if v, ok := spantest.Attr(s, attrs.ErrorTypeKey); ok && !attrs.ErrorClass(v.AsString()).Valid() {
				t.Errorf("attempt %d: error.type %q is outside the closed set", attrOf(s, attrs.AttemptKey).AsInt64(), v.AsString())
			}
		}
	})
}

// A Classifier's Retryable pause is capped by the deadline and clamped at
// 0: a huge pause (math.MaxInt64) ends the operation deadline_exceeded at
// once with the response in hand, a negative one is a retry with no
// pause; no overflow, no sleep.
func TestClassifierPauseIsClampedAndCappedByTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tc := range []struct {
			pause     time.Duration
			wantCalls int
			outcome   string
		}{{math.MaxInt64, 1, "deadline_exceeded"}, {-time.Hour, 3, "max_attempts"}, {math.MinInt64, 3, "max_attempts"}} {
			h := newHarness(t, []scripted.Step{{Status: 503}},
				otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
				otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification { return otelretry.Retryable(tc.pause) }))
			start := time.Now()
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if n := len(h.base.Calls()); n != tc.wantCalls {
				t.Errorf("pause %v: %d calls, want %d", tc.pause, n, tc.wantCalls)
			}
			if o := attrOf(h.operation(t), attrs.OutcomeKey).AsString(); o != tc.outcome {
				t.Errorf("pause %v: outcome %q, want %q", tc.pause, o, tc.outcome)
			}
			if d := time.Since(start); d > 10*time.Millisecond {
				t.Errorf("pause %v: took %v", tc.pause, d)
			}
		}
	})
}

// A request the base reported written is not proven unsent by the error
// that follows: a POST reported written (as a failover base does for its
// first host) and then failed with a dial error (its second host refused)
// reaches the base once, and its outcome is unknown.
func TestWriteReportedWrittenIsNotResentAfterADialError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls++
			if r.Body != nil {
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
			if calls > 1 {
				return &http.Response{StatusCode: 201, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			if tr := httptrace.ContextClientTrace(r.Context()); tr != nil {
				if tr.GotConn != nil {
					tr.GotConn(httptrace.GotConnInfo{})
				}
				if tr.WroteHeaders != nil {
					tr.WroteHeaders()
				}
				if tr.WroteRequest != nil {
					tr.WroteRequest(httptrace.WroteRequestInfo{})
				}
			}
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		})
		rec, opts := tracingProviders()
		rt := otelretry.NewTransport(base, append(opts, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))...)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/orders", strings.NewReader("order"))
		resp, err := rt.RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
		if calls != 1 {
			t.Errorf("the POST reached the base %d times after the base reported it written; want 1 (check_state)", calls)
		}
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Errorf("got err %v, want ErrOutcomeUnknown", err)
		}
		for _, s := range spantest.Attempts(rec.Ended()) {
			t.Logf("attempt: class=%s decision=%s reason=%s writes=%s", attrOf(s, attrs.ErrorClassKey).Emit(),
				attrOf(s, attrs.DecisionKey).Emit(), attrOf(s, attrs.ReasonKey).Emit(), attrOf(s, attrs.WireWritesKey).Emit())
		}
	})
}

// An answer that arrives after the caller canceled (a 503 that raced the
// cancellation) is not recorded as a retry that the operation does not
// make: the last attempt's decision agrees with the operation's outcome.
func TestAnswerAfterTheCallerCanceledIsNoRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			cancel() // the caller gives up as the 503 arrives
			return &http.Response{StatusCode: 503, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
		resp, err := tr.RoundTrip(get(t, ctx, "http://api.test/"))
		if resp != nil {
			resp.Body.Close()
		}
		attempts := spantest.Attempts(rec.Ended())
		op := spantest.Operations(rec.Ended())[0]
		last := attempts[len(attempts)-1]
		if d, o := attrOf(last, attrs.DecisionKey).AsString(), attrOf(op, attrs.OutcomeKey).AsString(); d == "retry" && o != "retry" {
			t.Errorf("last attempt recorded decision %q (backoff %dms), but the operation ended %q after %d attempt(s) (err %v)",
				d, attrOf(last, attrs.BackoffMsKey).AsInt64(), o, len(attempts), err)
		}
	})
}
