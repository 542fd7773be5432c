// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

func get(t *testing.T, ctx context.Context, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func post(t *testing.T, ctx context.Context, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

var seedOptions = []otelretry.Option{
	otelretry.WithMaxAttempts(3),
	otelretry.WithDeadline(400 * time.Millisecond),
	otelretry.WithBackoff(otelretry.ConstantBackoff(40 * time.Millisecond)),
}

// The seed's read timeline: 503 (80ms), 503 (80ms), 200 (50ms) under a
// 400ms deadline with a 40ms backoff.
func TestSeedReadTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Delay: 80 * time.Millisecond, Status: 503},
			{Delay: 80 * time.Millisecond, Status: 503},
			{Delay: 50 * time.Millisecond, Status: 200, Body: "the real answer"},
		}, seedOptions...)
		ctx := otelretry.WithOperationID(t.Context(), "op-42")
		start := time.Now()
		resp, err := h.client.Do(get(t, ctx, "http://api.test/orders"))
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "the real answer" {
			t.Fatalf("got %d %q, want the real 200", resp.StatusCode, body)
		}
		if took := time.Since(start); took != 80*time.Millisecond*2+50*time.Millisecond+2*40*time.Millisecond {
			t.Errorf("operation took %v, want 290ms", took)
		}

		want := []event{
			{OperationID: "op-42", RequestID: "op-42/attempt-1", Attempt: 1, Method: "GET", Status: 503, ElapsedMs: 80, RemainingMs: 400, Decision: "retry", RetryAfterMs: -1, BackoffMs: 40},
			{OperationID: "op-42", RequestID: "op-42/attempt-2", Attempt: 2, Method: "GET", Status: 503, ElapsedMs: 80, RemainingMs: 280, Decision: "retry", RetryAfterMs: -1, BackoffMs: 40},
			{OperationID: "op-42", RequestID: "op-42/attempt-3", Attempt: 3, Method: "GET", Status: 200, ElapsedMs: 50, RemainingMs: 160, Decision: "return", RetryAfterMs: -1, BackoffMs: -1},
		}
		got := h.events(t)
		if len(got) != len(want) {
			t.Fatalf("got %d attempt events, want %d: %+v", len(got), len(want), got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("attempt %d:\n got %+v\nwant %+v", i+1, got[i], want[i])
			}
		}
		if n := len(h.base.Calls()); n != 3 {
			t.Errorf("network calls = %d, want 3", n)
		}

		op := h.operation(t)
		if op.SpanKind() != trace.SpanKindInternal {
			t.Errorf("operation span kind = %v, want internal", op.SpanKind())
		}
		// One CLIENT span per attempt, child of the operation span, and
		// nothing else: 1 + 3 spans.
		if n := len(h.ended()); n != 4 {
			t.Errorf("spans = %d, want 4 (the operation and one CLIENT span per attempt)", n)
		}
		for _, a := range h.attempts() {
			if a.Parent().SpanID() != op.SpanContext().SpanID() {
				t.Errorf("attempt %v is not a child of the operation span", a.Name())
			}
			if a.SpanKind() != trace.SpanKindClient || a.Name() != "GET" {
				t.Errorf("attempt span %q is %v, want the CLIENT span named GET", a.Name(), a.SpanKind())
			}
			if n := len(spantest.Children(h.ended(), a)); n != 0 {
				t.Errorf("attempt %s has %d child spans, want none", a.Name(), n)
			}
		}
		if got := attrOf(op, attrs.OutcomeKey).AsString(); got != "return" {
			t.Errorf("outcome = %q, want return", got)
		}
		if got := attrOf(op, attrs.AttemptsKey).AsInt64(); got != 3 {
			t.Errorf("retry.attempts = %d, want 3", got)
		}
		if got := attrOf(op, attrs.OperationIDKey).AsString(); got != "op-42" {
			t.Errorf("operation id = %q", got)
		}
		if op.Status().Code == codes.Error {
			t.Errorf("operation span status is Error for outcome return")
		}
		if got := attrOf(h.attempts()[1], attrs.HTTPRequestResendCountKey).AsInt64(); got != 1 {
			t.Errorf("second attempt resend_count = %d, want 1", got)
		}
	})
}

// The seed's write timeline: a POST that times out after 120ms (the base
// reports the timeout: otelretry's attempt timeout does not cut a write's
// wait, which it could not retry) is not sent again; its outcome is
// unknown.
func TestSeedWriteTimeoutChecksState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Delay: 120 * time.Millisecond, Err: errBaseTimeout}, {Status: 201}}, seedOptions...)
		ctx := otelretry.WithOperationID(t.Context(), "op-7")
		resp, err := h.client.Do(post(t, ctx, "http://api.test/orders", `{"sku":1}`))
		if resp != nil {
			t.Fatalf("got a response %d, want none", resp.StatusCode)
		}
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
		}
		var rerr *otelretry.Error
		if !errors.As(err, &rerr) || rerr.OperationID != "op-7" || rerr.Attempts != 1 || rerr.Outcome != attrs.OutcomeCheckState {
			t.Fatalf("err = %#v, want *Error{check_state, op-7, 1 attempt}", rerr)
		}
		if n := len(h.base.Calls()); n != 1 {
			t.Fatalf("POST was sent %d times, want exactly once", n)
		}
		want := event{OperationID: "op-7", RequestID: "op-7/attempt-1", Attempt: 1, Method: "POST", ErrorClass: "timeout",
			ElapsedMs: 120, RemainingMs: 400, Decision: "check_state", RetryAfterMs: -1, BackoffMs: -1}
		if got := h.events(t); len(got) != 1 || got[0] != want {
			t.Fatalf("events = %+v, want [%+v]", got, want)
		}
		if got := attrOf(h.operation(t), attrs.OutcomeKey).AsString(); got != "check_state" {
			t.Errorf("outcome = %q", got)
		}
	})
}

func TestDeadlineSpentBeforeTheCallMakesNoCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 200}}, seedOptions...)
		ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Millisecond))
		defer cancel()
		_, err := h.client.Do(get(t, ctx, "http://api.test/"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want deadline exceeded", err)
		}
		var rerr *otelretry.Error
		if !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeDeadlineExceeded || rerr.Attempts != 0 {
			t.Fatalf("err = %#v, want deadline_exceeded after 0 attempts", rerr)
		}
		if n := len(h.base.Calls()); n != 0 {
			t.Fatalf("network calls = %d, want 0", n)
		}
		if n := len(h.attempts()); n != 0 {
			t.Fatalf("attempt spans = %d, want 0 (no attempt started)", n)
		}
		op := h.operation(t)
		if attrOf(op, attrs.AttemptsKey).AsInt64() != 0 || attrOf(op, attrs.OutcomeKey).AsString() != "deadline_exceeded" {
			t.Fatalf("operation span: attempts=%v outcome=%v", attrOf(op, attrs.AttemptsKey).AsInt64(), attrOf(op, attrs.OutcomeKey).AsString())
		}
	})
}

func TestGETTimeoutsEndInMaxAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// No budget: a fresh host's budget allows one retry after a
		// timeout (timeouts cost double); this test is about the limit.
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithMaxAttempts(3), otelretry.WithDeadline(time.Second),
			otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)), otelretry.WithoutBudget())
		_, err := h.client.Do(get(t, t.Context(), "http://api.test/slow"))
		var rerr *otelretry.Error
		if !errors.Is(err, otelretry.ErrMaxAttempts) || !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeMaxAttempts {
			t.Fatalf("err = %v, want outcome max_attempts", err)
		}
		if n := len(h.base.Calls()); n != 3 {
			t.Fatalf("calls = %d, want 3", n)
		}
		var decisions []string
		for _, e := range h.events(t) {
			if e.ErrorClass != "timeout" || e.Status != 0 || e.ElapsedMs != 100 {
				t.Errorf("attempt %d: %+v, want a 100ms timeout with no status", e.Attempt, e)
			}
			decisions = append(decisions, e.Decision)
		}
		if got := strings.Join(decisions, ","); got != "retry,retry,max_attempts" {
			t.Fatalf("decisions = %s", got)
		}
	})
}

func TestRetryAfterLongerThanTheBudgetReturnsTheResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Delay: 10 * time.Millisecond, Status: 503, Header: http.Header{"Retry-After": {"5"}}},
			{Status: 200},
		}, otelretry.WithDeadline(time.Second))
		start := time.Now()
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 503 {
			t.Fatalf("status = %d, want the 503 the server sent", resp.StatusCode)
		}
		if took := time.Since(start); took != 10*time.Millisecond {
			t.Errorf("took %v, want 10ms: no sleep toward a pause that cannot end in time", took)
		}
		e := h.events(t)
		if len(e) != 1 || e[0].Decision != "deadline_exceeded" || e[0].RetryAfterMs != 5000 || e[0].BackoffMs != -1 {
			t.Fatalf("events = %+v", e)
		}
		if got := attrOf(h.operation(t), attrs.OutcomeKey).AsString(); got != "deadline_exceeded" {
			t.Errorf("outcome = %s", got)
		}
	})
}

func TestRetryAfterIsHonouredWithinTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Status: 429, Header: http.Header{"Retry-After": {"1"}}},
			{Status: 200},
		}, otelretry.WithDeadline(3*time.Second), otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		calls := h.base.Calls()
		if len(calls) != 2 || calls[1].At.Sub(calls[0].At) != time.Second {
			t.Fatalf("calls = %d, gap %v, want 2 calls 1s apart", len(calls), calls[1].At.Sub(calls[0].At))
		}
		if e := h.events(t); e[0].RetryAfterMs != 1000 || e[0].BackoffMs != 1000 {
			t.Fatalf("first event = %+v, want retry_after 1000 and backoff 1000", e[0])
		}
	})
}

func TestMalformedRetryAfterIsIgnoredAndRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Status: 503, Header: http.Header{"Retry-After": {"soon, maybe"}}},
			{Status: 200},
		}, otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		e := h.events(t)
		if len(e) != 2 || e[0].RetryAfterMs != -1 || e[0].BackoffMs != 20 || e[0].Decision != "retry" {
			t.Fatalf("events = %+v", e)
		}
		var found bool
		for _, ev := range h.attempts()[0].Events() {
			found = found || ev.Name == "retry_after_invalid"
		}
		if !found {
			t.Fatal("no retry_after_invalid event on the attempt span")
		}
	})
}

func TestCancelDuringBackoffStopsPromptly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Delay: 10 * time.Millisecond, Status: 503}, {Status: 200}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Second)))
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(60*time.Millisecond, cancel)
		start := time.Now()
		_, err := h.client.Do(get(t, ctx, "http://api.test/"))
		if took := time.Since(start); took != 60*time.Millisecond {
			t.Errorf("returned after %v, want 60ms (at the cancel)", took)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want canceled", err)
		}
		var rerr *otelretry.Error
		if !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeCanceled || rerr.Attempts != 1 {
			t.Fatalf("err = %#v", rerr)
		}
		if n := len(h.base.Calls()); n != 1 {
			t.Fatalf("calls = %d, want 1", n)
		}
	})
}

func TestCancelDuringAWriteLeavesItsOutcomeUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}})
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(30*time.Millisecond, cancel)
		_, err := h.client.Do(post(t, ctx, "http://api.test/orders", "x"))
		if !errors.Is(err, context.Canceled) || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v, want canceled and outcome unknown", err)
		}
		if e := h.events(t); len(e) != 1 || e[0].Decision != "canceled" || e[0].ErrorClass != "canceled" {
			t.Fatalf("events = %+v", e)
		}
	})
}

func nonReplayableGET(t *testing.T) *http.Request {
	req := get(t, t.Context(), "http://api.test/search")
	req.Body = io.NopCloser(strings.NewReader("query"))
	req.GetBody = nil
	return req
}

func TestBodyWithoutGetBodyIsNeverReplayed(t *testing.T) {
	t.Run("response", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}})
			resp, err := h.client.Do(nonReplayableGET(t))
			if err != nil || resp.StatusCode != 503 {
				t.Fatalf("got %v, %v; want the 503", resp, err)
			}
			resp.Body.Close()
			assertNotReplayed(t, h)
		})
	})
	t.Run("error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Hang: true}}, otelretry.WithAttemptTimeout(50*time.Millisecond))
			_, err := h.client.Do(nonReplayableGET(t))
			if !errors.Is(err, otelretry.ErrNotReplayable) {
				t.Fatalf("err = %v, want ErrNotReplayable", err)
			}
			assertNotReplayed(t, h)
		})
	})
}

func assertNotReplayed(t *testing.T, h *harness) {
	t.Helper()
	if n := len(h.base.Calls()); n != 1 {
		t.Fatalf("calls = %d, want 1", n)
	}
	a := h.attempts()
	if len(a) != 1 || attrOf(a[0], attrs.DecisionKey).AsString() != "stop" {
		t.Fatalf("want one attempt with decision stop")
	}
	var seen bool
	for _, ev := range a[0].Events() {
		seen = seen || ev.Name == "body_not_replayable"
	}
	if !seen {
		t.Fatal("no body_not_replayable event on the attempt span")
	}
}

func TestWritesAreNotRetriedOnStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 201}})
		resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", "x"))
		if err != nil || resp.StatusCode != 503 {
			t.Fatalf("got %v, %v; want the 503", resp, err)
		}
		resp.Body.Close()
		if e := h.events(t); len(e) != 1 || e[0].Decision != "stop" {
			t.Fatalf("events = %+v", e)
		}
	})
}

func TestWriteThatNeverLeftIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "x"}}
		refused.Err = syscall.ECONNREFUSED
		h := newHarness(t, []scripted.Step{{Err: refused}, {Status: 201}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		resp, err := h.client.Do(post(t, t.Context(), "http://api.test/orders", `{"sku":1}`))
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("got %v, %v", resp, err)
		}
		resp.Body.Close()
		calls := h.base.Calls()
		if len(calls) != 2 || string(calls[1].Body) != `{"sku":1}` {
			t.Fatalf("calls = %+v, want the same body twice", calls)
		}
		if e := h.events(t); e[0].ErrorClass != "connection_refused" || e[0].Decision != "retry" {
			t.Fatalf("first event = %+v", e[0])
		}
	})
}

func TestCallerRequestIsNotModified(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}})
		req := get(t, t.Context(), "http://api.test/")
		req.Header.Set("X-Caller", "1")
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(req.Header) != 1 || req.Header.Get("X-Caller") != "1" {
			t.Fatalf("caller's header changed: %v", req.Header)
		}
		for i, c := range h.base.Calls() {
			if c.Header.Get("Traceparent") == "" && c.Header.Get("traceparent") == "" {
				// The global propagator is a no-op unless set; the harness
				// does not set one, so absence is expected here.
				_ = i
			}
		}
	})
}

func TestBudgetExhaustionIsItsOwnDecision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}},
			otelretry.WithBudget(otelretry.NewBudget(otelretry.BudgetTokens(4))), // one retry
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil || resp.StatusCode != 503 {
			t.Fatalf("got %v %v, want the last 503", resp, err)
		}
		resp.Body.Close()
		var decisions []string
		for _, e := range h.events(t) {
			decisions = append(decisions, e.Decision)
		}
		if got := strings.Join(decisions, ","); got != "retry,budget_exhausted" {
			t.Fatalf("decisions = %s, want retry,budget_exhausted", got)
		}
		if got := attrOf(h.operation(t), attrs.OutcomeKey).AsString(); got != "budget_exhausted" {
			t.Fatalf("outcome = %s", got)
		}
	})
}

func TestCanceledBeforeTheCallMakesNoCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 200}})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := h.client.Do(get(t, ctx, "http://api.test/"))
		var rerr *otelretry.Error
		if !errors.Is(err, context.Canceled) || !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeCanceled || rerr.Attempts != 0 {
			t.Fatalf("err = %v, want canceled after 0 attempts", err)
		}
		if n := len(h.base.Calls()); n != 0 {
			t.Fatalf("calls = %d, want 0", n)
		}
	})
}

func TestRequestWithoutURLIsRefusedWithAnError(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Status: 200}})
	body := &closeRecorder{Reader: strings.NewReader("x")}
	req := &http.Request{Method: http.MethodPost, Header: http.Header{}, Body: body}
	resp, err := h.transprt.RoundTrip(req)
	if resp != nil || err == nil || !strings.Contains(err.Error(), "nil Request.URL") {
		t.Fatalf("RoundTrip = %v, %v; want a clear error", resp, err)
	}
	if !body.closed {
		t.Fatal("the request body was not closed")
	}
	if len(h.ended()) != 0 || len(h.base.Calls()) != 0 {
		t.Fatal("a request without a URL must not reach telemetry or the network")
	}
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }
