// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Claim attacked: "each attempt re-copies the caller's request", so a hook
// that mutates Answer.Request cannot reach the next attempt's wire, and
// RoundTrip "does not modify req". Without a PrepareFunc the attempt's copy
// shares the caller's *url.URL: a Classifier that writes into
// Answer.Request.URL (documented as forbidden, but the copy is supposed to
// contain it) changes the caller's request and retargets the next attempt.
func TestReview2ClassifierURLMutationReachesNextAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				a.Request.Header.Set("X-Hook", "mutated")
				a.Request.URL.Path = "/mutated"
				a.Request.URL.RawQuery = "hook=1"
				return otelretry.Classification{}
			}))
		req := get(t, t.Context(), "http://api.test/orig")
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		calls := h.base.Calls()
		if len(calls) != 2 {
			t.Fatalf("%d calls, want 2", len(calls))
		}
		if calls[1].Header.Get("X-Hook") != "" {
			t.Errorf("second attempt carried the header the classifier set on the first attempt's copy")
		}
		if calls[1].URL != "http://api.test/orig" {
			t.Errorf("second attempt went to %q, want http://api.test/orig: the classifier's write into the first attempt's copy reached it", calls[1].URL)
		}
		if req.URL.String() != "http://api.test/orig" {
			t.Errorf("the caller's request URL is now %q: RoundTrip modified req", req.URL)
		}
	})
}

// Claim attacked: "a POST that timed out or lost its connection after being
// sent is never resent blindly"; the base's httptrace reports are the wire
// evidence (reachedWire). A base that reports the request written (headers
// and the whole request, as a failover base does for its first host) and
// then returns a dial error (its second host refused) is taken as "never
// sent": the error's class overrides the written evidence, and the POST is
// sent again although the first host may have applied it.
func TestReview2WrittenThenDialErrorResendsWrite(t *testing.T) {
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
		rec, opts := reviewProviders()
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

// Claim attacked: NotProcessed "applies only when the attempt got no
// response". Given for a 404 (an answer the defaults neither retry nor
// count), it still charges the retry budget a failure: a classifier's word
// that is documented as ignored drains the host's budget for every other
// operation.
func TestReview2NotProcessedOnResponseChargesBudget(t *testing.T) {
	run := func(c otelretry.Classifier) int {
		budget := otelretry.NewBudget()
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 404, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		_, opts := reviewProviders()
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

// Claim guarded: a NotProcessed lie on a timed-out POST is honoured as the
// user's word: the write is resent, the attempt keeps its observed class
// (timeout), records reason classifier, and carries no retry.evidence.*.
func TestReview2NotProcessedLieRecordedAsUsersWord(t *testing.T) {
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

// Claim guarded: a Classifier's Retryable pause is capped by the deadline
// and clamped at 0: a huge pause (math.MaxInt64) ends the operation
// deadline_exceeded at once with the response in hand, a negative one is a
// retry with no pause; no overflow, no sleep.
func TestReview2ClassifierExtremePauses(t *testing.T) {
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

// Claim guarded: a Backoff that panics is not hidden and leaves nothing
// open: the panic reaches the caller, the failed answer's body is closed,
// and the operation and attempt spans are ended.
func TestReview2BackoffPanicLeavesNothingOpen(t *testing.T) {
	for _, answerBackoff := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var b otelretry.Backoff = otelretry.BackoffFunc(func(int) time.Duration { panic("backoff boom") })
			if answerBackoff {
				b = otelretry.AnswerBackoffFunc(func(int, otelretry.Answer) time.Duration { panic("backoff boom") })
			}
			h := newHarness(t, []scripted.Step{{Status: 503, Body: "busy"}}, otelretry.WithBackoff(b))
			func() {
				defer func() {
					if r := recover(); r == nil {
						t.Error("the Backoff's panic was swallowed")
					}
				}()
				h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
			}()
			if n := h.base.OpenBodies(); n != 0 {
				t.Errorf("%d response bodies left open after the Backoff panicked", n)
			}
			if started, ended := len(h.spans.Started()), len(h.spans.Ended()); started != ended || ended < 2 {
				t.Errorf("%d spans started, %d ended; want all ended (operation and attempt)", started, ended)
			}
		})
	}
}

// Claim guarded: "The Backoff is the last hook before the decision, so the
// clock is read again after it". A Backoff that blocks past the deadline
// (and one that returns a huge or negative pause, or a different value on
// every call) never carries a retry past the deadline, and the pause
// recorded is the one the decision used.
func TestReview2BackoffBlocksOrLies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}},
			otelretry.WithDeadline(time.Second),
			otelretry.WithBackoff(otelretry.BackoffFunc(func(int) time.Duration {
				time.Sleep(2 * time.Second) // ignores everything
				return time.Millisecond
			})))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := len(h.base.Calls()); n != 1 {
			t.Errorf("blocking Backoff: %d calls, want 1", n)
		}
		if d := attrOf(h.attempts()[0], attrs.DecisionKey).AsString(); d != "deadline_exceeded" {
			t.Errorf("blocking Backoff: decision %q, want deadline_exceeded", d)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		var calls int
		h := newHarness(t, []scripted.Step{{Status: 503}},
			otelretry.WithDeadline(time.Second), otelretry.WithMaxAttempts(6),
			otelretry.WithBackoff(otelretry.AnswerBackoffFunc(func(int, otelretry.Answer) time.Duration {
				calls++
				return []time.Duration{-time.Hour, math.MaxInt64, 100 * time.Millisecond, math.MinInt64, 300 * time.Millisecond}[(calls-1)%5]
			})))
		start := time.Now()
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := len(h.base.Calls()); n != 2 {
			t.Errorf("lying Backoff: %d calls, want 2 (the MaxInt64 pause ends it)", n)
		}
		if calls != 2 {
			t.Errorf("Backoff asked %d times, want once per retry decision (2)", calls)
		}
		if d := time.Since(start); d > 5*time.Millisecond {
			t.Errorf("lying Backoff: took %v", d)
		}
		evs := h.events(t)
		if len(evs) != 2 || evs[0].BackoffMs != 0 || evs[1].Decision != "deadline_exceeded" {
			t.Errorf("events %+v", evs)
		}
	})
}

// postHang is a POST whose first attempts time out (an unknown write).
func postReq(t *testing.T, ctx context.Context) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/orders", strings.NewReader("order"))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// Claims guarded (StateCheckFunc): an applied result without a response
// stays unknown (no response invented); an applied result whose Body is
// nil is returned with http.NoBody; a hook that blocks past the deadline
// and then says not_applied gets no resend (deadline_exceeded, known not
// applied); a hook that panics is not hidden and leaves no span open.
func TestReview2StateCheckMisbehaves(t *testing.T) {
	steps := []scripted.Step{{Hang: true}, {Status: 201}}
	opts := func(f otelretry.StateCheckFunc) []otelretry.Option {
		return []otelretry.Option{otelretry.WithAttemptTimeout(100 * time.Millisecond), otelretry.WithDeadline(time.Second),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithStateCheck(f)}
	}
	t.Run("applied-nil-response", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, steps, opts(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateApplied}, nil
			})...)
			resp, err := h.client.Do(postReq(t, t.Context()))
			if resp != nil || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("got %v, %v; want ErrOutcomeUnknown", resp, err)
			}
			if n := len(h.base.Calls()); n != 1 {
				t.Errorf("%d calls, want 1", n)
			}
		})
	})
	t.Run("applied-nil-body", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, steps, opts(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: 200, Header: http.Header{}}}, nil
			})...)
			resp, err := h.client.Do(postReq(t, t.Context()))
			if err != nil || resp.Body == nil {
				t.Fatalf("got %v, %v; want the stored response with a body", resp, err)
			}
			if b, err := io.ReadAll(resp.Body); err != nil || len(b) != 0 {
				t.Errorf("read %q, %v", b, err)
			}
			resp.Body.Close()
		})
	})
	t.Run("blocks-past-deadline-not-applied", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, steps, opts(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				time.Sleep(5 * time.Second) // ignores its context
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			})...)
			resp, err := h.client.Do(postReq(t, t.Context()))
			if resp != nil {
				resp.Body.Close()
			}
			if n := len(h.base.Calls()); n != 1 {
				t.Errorf("%d calls, want 1: no resend after the deadline", n)
			}
			var rerr *otelretry.Error
			if !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeDeadlineExceeded || errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("got %v; want deadline_exceeded, known not applied", err)
			}
		})
	})
	t.Run("panics", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, steps, opts(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				panic("state check boom")
			})...)
			func() {
				defer func() {
					if recover() == nil {
						t.Error("the state check's panic was swallowed")
					}
				}()
				h.transprt.RoundTrip(postReq(t, t.Context()))
			}()
			if started, ended := len(h.spans.Started()), len(h.spans.Ended()); started != ended {
				t.Errorf("%d spans started, %d ended", started, ended)
			}
		})
	})
}

// Claim guarded: "StateNotApplied: it is sent again, within the same
// deadline, attempt limit and budget as a retry". A hook that always says
// not_applied (a lie when the write was applied) gets at most the attempt
// limit of calls, and with a shared budget no more than the budget allows.
func TestReview2StateCheckNotAppliedLieIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		checks := 0
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(10*time.Second),
			otelretry.WithMaxAttempts(4), otelretry.WithoutBudget(),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				checks++
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		_, err := h.client.Do(postReq(t, t.Context()))
		var rerr *otelretry.Error
		if !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeMaxAttempts {
			t.Errorf("got %v; want max_attempts", err)
		}
		if n := len(h.base.Calls()); n != 4 || checks != 4 {
			t.Errorf("%d calls, %d checks; want 4 and 4", n, checks)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		budget := otelretry.NewBudget()
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(10*time.Second),
			otelretry.WithMaxAttempts(10), otelretry.WithBudget(budget),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		avail := budget.Available(get(t, t.Context(), "http://api.test/"))
		_, err := h.client.Do(postReq(t, t.Context()))
		var rerr *otelretry.Error
		if !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeBudgetExhausted {
			t.Errorf("got %v; want budget_exhausted", err)
		}
		if n := len(h.base.Calls()); n != avail+1 {
			t.Errorf("%d calls with a budget of %d retries", n, avail)
		}
	})
}

// Claim guarded: "A lookup it makes through the same otelretry client is an
// operation of its own (its own id, never counted as a repeat of the write,
// and the write's attempts keep their numbers)", also under
// WithOperationID and an Intent on the write's context.
func TestReview2StateCheckLookupThroughSameClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h *harness
		var lookupID string
		h = newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}, {Status: 201}},
			otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
			otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				resp, err := h.client.Do(get(t, ctx, "http://api.test/orders/by-key/"+c.OperationID))
				if err != nil {
					return otelretry.StateResult{}, err
				}
				resp.Body.Close()
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		ctx := otelretry.WithOperationID(t.Context(), "write-1")
		ctx = otelretry.WithIntent(ctx, otelretry.Intent{MaxAttempts: 2})
		resp, err := h.client.Do(postReq(t, ctx))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var writeAttempts []int64
		for _, s := range h.attempts() {
			id := attrOf(s, attrs.OperationIDKey).AsString()
			if id == "write-1" {
				writeAttempts = append(writeAttempts, attrOf(s, attrs.AttemptKey).AsInt64())
			} else {
				lookupID = id
				if n := attrOf(s, attrs.AttemptKey).AsInt64(); n != 1 {
					t.Errorf("lookup attempt numbered %d, want 1", n)
				}
			}
		}
		if lookupID == "" || len(writeAttempts) != 2 || writeAttempts[0] != 1 || writeAttempts[1] != 2 {
			t.Errorf("lookup id %q, write attempts %v; want a lookup of its own and write attempts [1 2]", lookupID, writeAttempts)
		}
		for _, s := range spantest.Operations(h.ended()) {
			if _, ok := spantest.Attr(s, attrs.RepeatKey); ok {
				t.Errorf("operation %s records a repeat", attrOf(s, attrs.OperationIDKey).Emit())
			}
		}
	})
}

// Claim guarded: "An error it returns is recorded, sanitized, on the
// state_check span and reachable from the returned error". A hook error
// naming its lookup URL (a *url.Error and free text) and a database DSN,
// each with credentials and query tokens, never shows them in the returned
// error's message or any span's status, events or attributes; errors.As
// still reaches the original.
func TestReview2StateCheckErrorSecretsSanitized(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		secrets := []string{"hunter2", "LOOKUPSECRET", "dbpass", "DBPW", "WRITESIG", "wpass", "FREETEXT"}
		lookupErr := &url.Error{Op: "Get", URL: "https://admin:hunter2@records.test/find?token=LOOKUPSECRET", Err: io.ErrUnexpectedEOF}
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithStateCheck(func(_ context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{}, fmt.Errorf("lookup of %s via 'https://svc.test/x?k=FREETEXT' failed (db postgres://dbuser:dbpass@db.test:5432/x?password=DBPW): %w",
					c.Request.URL, lookupErr)
			}))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://writer:wpass@api.test/orders?sig=WRITESIG", strings.NewReader("x"))
		_, err := h.transprt.RoundTrip(req) // http.Client would wrap it in its own unsanitized *url.Error
		var ue *url.Error
		if !errors.As(err, &ue) || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("got %v; want ErrOutcomeUnknown reaching the hook's *url.Error", err)
		}
		check := func(where, text string) {
			for _, s := range secrets {
				if strings.Contains(text, s) {
					t.Errorf("%s carries %q: %s", where, s, text)
				}
			}
		}
		check("error", err.Error())
		for _, s := range h.spans.Ended() {
			check(s.Name()+" status", s.Status().Description)
			for _, kv := range s.Attributes() {
				check(s.Name()+" "+string(kv.Key), kv.Value.Emit())
			}
			for _, e := range s.Events() {
				for _, kv := range e.Attributes {
					check(s.Name()+" event "+e.Name+" "+string(kv.Key), kv.Value.Emit())
				}
			}
		}
	})
}

// Claim guarded: the caller's context canceled at every point (before the
// call, in the PrepareFunc, in the base, during the pause, during the
// drain of a discarded body, during the state check) ends the operation
// canceled at once, with no further call, every body closed, and a write in
// flight reported unknown.
func TestReview2CallerCancelsEverywhere(t *testing.T) {
	type tc struct {
		name        string
		steps       []scripted.Step
		method      string
		opts        func(cancel context.CancelFunc) []otelretry.Option
		cancelAfter time.Duration // 0: no timer
		preCancel   bool
		wantCalls   int
		wantUnknown bool
	}
	slowBackoff := otelretry.WithBackoff(otelretry.ConstantBackoff(time.Second))
	cases := []tc{
		{name: "before", steps: []scripted.Step{{Status: 200}}, method: "GET", preCancel: true, wantCalls: 0,
			opts: func(context.CancelFunc) []otelretry.Option { return nil }},
		{name: "prepare", steps: []scripted.Step{{Status: 200}}, method: "POST", wantCalls: 0,
			opts: func(cancel context.CancelFunc) []otelretry.Option {
				return []otelretry.Option{otelretry.WithPrepareAttempt(func(*http.Request, int) error { cancel(); return nil })}
			}},
		{name: "base", steps: []scripted.Step{{Hang: true}}, method: "POST", cancelAfter: 100 * time.Millisecond, wantCalls: 1, wantUnknown: true,
			opts: func(context.CancelFunc) []otelretry.Option { return nil }},
		{name: "pause", steps: []scripted.Step{{Status: 503}}, method: "GET", cancelAfter: 100 * time.Millisecond, wantCalls: 1,
			opts: func(context.CancelFunc) []otelretry.Option { return []otelretry.Option{slowBackoff} }},
		{name: "drain", steps: []scripted.Step{{Status: 503, Body: "x", Stall: true}}, method: "GET", cancelAfter: 100 * time.Millisecond, wantCalls: 1,
			opts: func(context.CancelFunc) []otelretry.Option { return []otelretry.Option{slowBackoff} }},
		{name: "state-check", steps: []scripted.Step{{Hang: true}}, method: "POST", cancelAfter: 200 * time.Millisecond, wantCalls: 1, wantUnknown: true,
			opts: func(context.CancelFunc) []otelretry.Option {
				return []otelretry.Option{otelretry.WithAttemptTimeout(100 * time.Millisecond),
					otelretry.WithStateCheck(func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
						<-ctx.Done()
						return otelretry.StateResult{State: attrs.StateUnknown}, nil
					})}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				h := newHarness(t, c.steps, c.opts(cancel)...)
				bodies := &countedBodies{getBodyOK: -1}
				req := bodies.request(t, ctx, c.method, true)
				if c.preCancel {
					cancel()
				}
				if c.cancelAfter > 0 {
					time.AfterFunc(c.cancelAfter, cancel)
				}
				start := time.Now()
				resp, err := h.transprt.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				var rerr *otelretry.Error
				if !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeCanceled {
					t.Errorf("got %v, %v; want outcome canceled", resp, err)
				}
				if got := errors.Is(err, otelretry.ErrOutcomeUnknown); got != c.wantUnknown {
					t.Errorf("ErrOutcomeUnknown %v, want %v (%v)", got, c.wantUnknown, err)
				}
				if d := time.Since(start); d > c.cancelAfter {
					t.Errorf("ended %v after the start, canceled at %v", d, c.cancelAfter)
				}
				if n := len(h.base.Calls()); n != c.wantCalls {
					t.Errorf("%d calls, want %d", n, c.wantCalls)
				}
				if n := h.base.OpenBodies(); n != 0 {
					t.Errorf("%d response bodies open", n)
				}
				bodies.check(t)
				if started, ended := len(h.spans.Started()), len(h.spans.Ended()); started != ended {
					t.Errorf("%d spans started, %d ended", started, ended)
				}
			})
		})
	}
}

// Claim guarded: a Classifier that panics (on a response or on a
// transport error, which otelretry classifies inside otelhttp's call) is
// not hidden, closes the answer's body and ends every span; one that
// blocks past the deadline gets no retry; NotProcessed given for a
// response (a 503 to a POST) does not make the write repeatable.
func TestReview2ClassifierMisbehaves(t *testing.T) {
	for _, step := range []scripted.Step{{Status: 503, Body: "busy"}, {Err: io.ErrUnexpectedEOF}} {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{step},
				otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification { panic("classifier boom") }))
			func() {
				defer func() {
					if recover() == nil {
						t.Error("the classifier's panic was swallowed")
					}
				}()
				h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
			}()
			if n := h.base.OpenBodies(); n != 0 {
				t.Errorf("step %+v: %d bodies open", step, n)
			}
			if started, ended := len(h.spans.Started()), len(h.spans.Ended()); started != ended {
				t.Errorf("step %+v: %d spans started, %d ended", step, started, ended)
			}
		})
	}
	for _, step := range []scripted.Step{{Status: 503}, {Err: io.ErrUnexpectedEOF}} {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{step}, otelretry.WithDeadline(time.Second),
				otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification {
					time.Sleep(3 * time.Second)
					return otelretry.Retryable(0)
				}))
			resp, _ := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
			if resp != nil {
				resp.Body.Close()
			}
			if n := len(h.base.Calls()); n != 1 {
				t.Errorf("step %+v: %d calls after a classifier that blocked past the deadline, want 1", step, n)
			}
			if d := attrOf(h.attempts()[0], attrs.DecisionKey).AsString(); d != "deadline_exceeded" {
				t.Errorf("step %+v: decision %q, want deadline_exceeded", step, d)
			}
		})
	}
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 201}},
			otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification {
				return otelretry.NotProcessed(otelretry.Evidence{Protocol: "h2", Code: 7, Name: "REFUSED_STREAM"})
			}))
		resp, err := h.transprt.RoundTrip(postReq(t, t.Context()))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := len(h.base.Calls()); n != 1 || resp.StatusCode != 503 {
			t.Errorf("%d calls, status %d: NotProcessed on a response resent a POST", n, resp.StatusCode)
		}
		if _, ok := spantest.Attr(h.attempts()[0], attrs.EvidenceProtocolKey); ok {
			t.Errorf("evidence recorded for an attempt that got a response")
		}
	})
}

// Claim guarded (run with -race): hundreds of concurrent operations sharing
// one Transport and one Budget, mixing retried GETs, a classifier, and
// timed-out POSTs resolved by a state check that looks the write up
// through the same client: every POST reaches the server exactly once,
// every answer is a response or an *Error, and no goroutine is left.
func TestReview2ConcurrentSharedTransportAndBudget(t *testing.T) {
	var mu sync.Mutex
	posts := map[string]int{}
	var gets atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/post":
			mu.Lock()
			posts[r.Header.Get("X-Op")]++
			mu.Unlock()
			time.Sleep(150 * time.Millisecond) // past the attempt timeout
			w.WriteHeader(201)
		case "/lookup":
			mu.Lock()
			n := posts[r.URL.Query().Get("op")]
			mu.Unlock()
			if n == 0 {
				w.WriteHeader(404)
				return
			}
			io.WriteString(w, "stored")
		default:
			if gets.Add(1)%3 == 0 {
				w.WriteHeader(503)
				return
			}
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	before := runtime.NumGoroutine()
	base := http.DefaultTransport.(*http.Transport).Clone()
	_, opts := reviewProviders()
	var client *http.Client
	rt := otelretry.NewTransport(base, append(opts,
		otelretry.WithBudget(otelretry.NewBudget()), otelretry.WithAttemptTimeout(50*time.Millisecond),
		otelretry.WithBackoff(otelretry.ExponentialBackoff(time.Millisecond, 5*time.Millisecond)),
		otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			if a.StatusCode == 503 {
				return otelretry.Retryable(time.Millisecond)
			}
			return otelretry.Classification{}
		}),
		otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
			resp, err := client.Get(srv.URL + "/lookup?op=" + c.Request.Header.Get("X-Op"))
			if err != nil {
				return otelretry.StateResult{}, err
			}
			switch resp.StatusCode {
			case 200:
				return otelretry.StateResult{State: attrs.StateApplied, Response: resp}, nil
			}
			// A 404 is not proof: the write may still be in flight to the
			// server (the lookup can overtake it), so it stays unknown and
			// any second POST would be otelretry's own resend.
			resp.Body.Close()
			return otelretry.StateResult{State: attrs.StateUnknown}, nil
		}))...)
	client = &http.Client{Transport: rt}
	var wg sync.WaitGroup
	var applied atomic.Int64
	outcomes := map[string]int{}
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var req *http.Request
			if i%2 == 0 {
				req, _ = http.NewRequest(http.MethodPost, srv.URL+"/post", strings.NewReader("w"))
				req.Header.Set("X-Op", strconv.Itoa(i))
			} else {
				req, _ = http.NewRequest(http.MethodGet, srv.URL+"/get", nil)
			}
			resp, err := client.Do(req)
			if err != nil {
				var rerr *otelretry.Error
				if !errors.As(err, &rerr) {
					t.Errorf("op %d: %v is not an *otelretry.Error", i, err)
				} else {
					mu.Lock()
					outcomes[string(rerr.Outcome)+"/"+string(rerr.Reason)]++
					mu.Unlock()
				}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if i%2 == 0 && string(b) == "stored" {
				applied.Add(1)
			}
		}()
	}
	wg.Wait()
	time.Sleep(200 * time.Millisecond) // the server's handlers finish
	mu.Lock()
	for op, n := range posts {
		if n != 1 {
			t.Errorf("POST %s reached the server %d times", op, n)
		}
	}
	t.Logf("%d of 100 POSTs reached the server (the others ended before a connection under the 50ms attempt timeout)", len(posts))
	mu.Unlock()
	t.Logf("errors: %v", outcomes)
	t.Logf("POSTs resolved applied by the state check: %d of 100", applied.Load())
	base.CloseIdleConnections()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before+2 {
		t.Errorf("%d goroutines left, %d before", g, before)
	}
}

// Claim guarded: "The body of the response handed to the caller belongs to
// the caller's context alone": read after the operation ended, past the
// attempt timeout and the operation deadline, it arrives whole.
func TestReview2BodyReadAfterOperationEnded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "head-")
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "tail")
	}))
	defer srv.Close()
	rec, opts := reviewProviders()
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rt := otelretry.NewTransport(base, append(opts, otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(200*time.Millisecond))...)
	resp, err := rt.RoundTrip(get(t, context.Background(), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if ops := spantest.Operations(rec.Ended()); len(ops) != 1 {
		t.Errorf("%d operation spans ended when the headers came, want 1", len(ops))
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != "head-tail" {
		t.Errorf("read %q, %v; want head-tail", b, err)
	}
}
