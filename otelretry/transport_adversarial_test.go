// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

// Adversarial tests: each TestAttack* attacks one guarantee the way a
// hostile base, a careless hook or a real network would, and is named
// after the defect it found when it was written; a failure is a defect in
// the library, not in the test.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// dumpSpans renders every ended span for error messages and secret scans.
func dumpSpans(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%s kind=%v status=%v %q\n", s.Name(), s.SpanKind(), s.Status().Code, s.Status().Description)
		for _, kv := range s.Attributes() {
			fmt.Fprintf(&b, "    %s=%s\n", kv.Key, kv.Value.Emit())
		}
		for _, e := range s.Events() {
			fmt.Fprintf(&b, "    event %s %v\n", e.Name, e.Attributes)
		}
	}
	return b.String()
}

// A1. A base that returns a response with a nil Body and a positive
// ContentLength. Inside otelhttp the attempt is concluded as "return";
// otelhttp then turns the response into an error (ensureResponseBody), and
// RoundTrip returns that error with Outcome "return": the recorded
// decision is not what happened, and the attempt span carries a 200
// together with error.type.
func TestAttackNilBodyWithContentLength(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, ContentLength: 10, Request: r}, nil
	})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
	if resp != nil {
		resp.Body.Close()
	}
	var e *otelretry.Error
	if errors.As(err, &e) && e.Outcome == attrs.OutcomeReturn {
		t.Errorf("RoundTrip returned an error with outcome %q: %v", e.Outcome, err)
	}
	for _, s := range spantest.Attempts(rec.Ended()) {
		_, status := spantest.Attr(s, attrs.HTTPResponseStatusCodeKey)
		et, hasET := spantest.Attr(s, attrs.ErrorTypeKey)
		if status && hasET && attrOf(s, attrs.HTTPResponseStatusCodeKey).AsInt64() < 400 {
			t.Errorf("attempt span has status %d and error.type %q", attrOf(s, attrs.HTTPResponseStatusCodeKey).AsInt64(), et.AsString())
		}
	}
	if t.Failed() {
		t.Logf("spans:\n%s", dumpSpans(rec.Ended()))
	}
}

// A2. A slow PrepareFunc (a token refresh) runs after the before-call
// check: the attempt is started past the operation deadline, and its
// timer, computed from the time before prepare, lets it run longer still.
func TestAttackSlowPrepareStartsAnAttemptPastTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var calledAt time.Duration
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calledAt = time.Since(start)
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		tr := otelretry.NewTransport(base, otelretry.WithDeadline(time.Second),
			otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				time.Sleep(1500 * time.Millisecond)
				return nil
			}))
		_, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
		took := time.Since(start)
		if calledAt > time.Second {
			t.Errorf("the base was called %v after the start, past the 1s deadline", calledAt)
		}
		if took > 1500*time.Millisecond {
			t.Errorf("RoundTrip took %v with a 1s deadline (err %v)", took, err)
		}
	})
}

// A3. The resend guard is computed from the caller's header, before the
// PrepareFunc runs. A PrepareFunc that sets an Idempotency-Key on each
// attempt (a common per-attempt header) makes net/http deem the POST
// replayable, and nothing guards it: net/http resends the write unseen.
func TestAttackPrepareAddedIdempotencyKeyIsResentByNetHTTP(t *testing.T) {
	for _, withBody := range []bool{true, false} {
		t.Run(fmt.Sprintf("body=%v", withBody), func(t *testing.T) {
			d := newDropSecondRequest(t)
			base := d.srv.Client().Transport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			tr := otelretry.NewTransport(base, otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				r.Header.Set("Idempotency-Key", "order-1")
				return nil
			}))
			client := &http.Client{Transport: tr}
			warm, err := client.Get(d.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, warm.Body)
			warm.Body.Close()
			var body io.Reader
			if withBody {
				body = strings.NewReader(`{"order":1}`)
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, d.srv.URL+"/orders", body)
			resp, err := client.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			if n := d.count(http.MethodPost); n != 1 {
				t.Errorf("the server received %d POSTs, want 1 (err %v)", n, err)
			}
		})
	}
}

// A4. A Classifier (or Backoff, or BudgetKey) that panics after the base
// returned a response: the attempt's response body is never closed. The
// operation must release what it holds before the panic goes on.
func TestAttackPanickingHookLeaksTheResponseBody(t *testing.T) {
	hooks := map[string]otelretry.Option{
		"classifier": otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification { panic("classifier bug") }),
		"backoff":    otelretry.WithBackoff(otelretry.BackoffFunc(func(int) time.Duration { panic("backoff bug") })),
		"budget key": otelretry.WithBudget(otelretry.NewBudget(otelretry.BudgetKey(func(*http.Request) string { panic("key bug") }))),
	}
	for name, hook := range hooks {
		for _, clientSpans := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/clientSpans=%v", name, clientSpans), func(t *testing.T) {
				opts := []otelretry.Option{hook}
				if !clientSpans {
					opts = append(opts, otelretry.WithoutClientSpans())
				}
				h := newHarness(t, []scripted.Step{{Status: 503, Body: "busy"}}, opts...)
				func() {
					defer func() { recover() }()
					h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
				}()
				if n := h.base.OpenBodies(); n != 0 {
					t.Errorf("%d response bodies left open after the %s panicked", n, name)
				}
				// The budget's key is taken when the operation begins, before
				// any attempt: its panic leaves the operation span alone.
				want := map[bool]int{true: 1, false: 2}[name == "budget key"]
				if n := len(h.ended()); n != want {
					t.Errorf("ended spans = %d, want %d", n, want)
				}
			})
		}
	}
}

// A5. Error.Error is documented never to contain URL userinfo or query
// values. A PrepareFunc's error (here a token refresh that failed with the
// *url.Error net/http's Client returns) reaches it unsanitized.
func TestAttackPrepareErrorLeaksSecrets(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
		return &url.Error{Op: "Post", URL: "https://bob:PW-SECRET@auth.test/token?client_secret=CS-SECRET", Err: errors.New("connection refused")}
	}))
	req := get(t, t.Context(), "https://alice:hunter2@api.test/v1?token=TOK-SECRET")
	_, err := h.transprt.RoundTrip(req)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, s := range []string{"PW-SECRET", "CS-SECRET", "hunter2", "TOK-SECRET"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q leaks %q", err, s)
		}
	}
}

// A6. The drain of a discarded body is bounded by canceling the attempt's
// context. A base whose body ignores the context (an in-memory pipe, a
// custom RoundTripper) blocks the drain forever: RoundTrip overruns its
// deadline without bound. Closing the body when the bound passes would
// unblock it.
func TestAttackDrainOfABodyThatIgnoresTheContext(t *testing.T) {
	var writers []*io.PipeWriter
	var mu sync.Mutex
	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) > 1 {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}
		pr, pw := io.Pipe()
		mu.Lock()
		writers = append(writers, pw)
		mu.Unlock()
		return &http.Response{StatusCode: 503, Header: http.Header{}, Body: pr, ContentLength: -1, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithDeadline(time.Second),
		otelretry.WithBackoff(otelretry.ConstantBackoff(100*time.Millisecond)))
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		resp, err := tr.RoundTrip(get(t, context.Background(), "http://api.test/"))
		if resp != nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-done:
		if took := time.Since(start); took > 1100*time.Millisecond {
			t.Errorf("RoundTrip took %v with a 1s deadline", took)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("RoundTrip still blocked after 3s with a 1s deadline: the drain waits on a body that ignores the context")
		mu.Lock()
		for _, w := range writers {
			w.Close() // let it go, so the test leaks nothing
		}
		mu.Unlock()
		<-done
	}
}

// A7. A Classifier's Evidence.Class is recorded as retry.error_class as
// given: a value outside the closed set reaches the attempt span, and a
// class that proves nothing (timeout) still authorizes resending a write.
func TestAttackClassifierEvidenceOutsideTheVocabulary(t *testing.T) {
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

// A9. The StateCheck's Request is a Clone of the caller's request, so it
// shares the caller's Body. A hook that closes it (defer
// check.Request.Body.Close() is the habit of every Go programmer) closes
// the caller's body a second time.
func TestAttackStateCheckRequestSharesTheCallersBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}}, otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				if c.Request.Body != nil {
					defer c.Request.Body.Close()
				}
				return otelretry.StateResult{State: attrs.StateUnknown}, nil
			}))
		bodies := &countedBodies{getBodyOK: -1}
		_, err := h.transprt.RoundTrip(bodies.request(t, t.Context(), http.MethodPost, true))
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v, want unknown", err)
		}
		bodies.check(t)
	})
}

// A10. Wire writes are counted as "at least one more than the fresh bodies
// a lower layer asked for" (rewinds). A base that calls GetBody itself to
// hash or log the payload before sending it once (request signing) makes
// every attempt claim two writes on the wire and a wire_resend event,
// while the server received one request.
func TestAttackBaseCallingGetBodyClaimsAResend(t *testing.T) {
	var received atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		received.Add(1)
	}))
	defer srv.Close()
	inner := srv.Client().Transport.(*http.Transport).Clone()
	defer inner.CloseIdleConnections()
	signer := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.GetBody != nil { // hash the payload without consuming r.Body
			b, err := r.GetBody()
			if err != nil {
				return nil, err
			}
			io.Copy(io.Discard, b)
			b.Close()
			r = r.Clone(r.Context())
			r.Header.Set("X-Signature", "sig")
		}
		return inner.RoundTrip(r)
	})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	client := &http.Client{Transport: otelretry.NewTransport(signer, otelretry.WithTracerProvider(tp))}
	resp, err := client.Post(srv.URL, "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if received.Load() != 1 {
		t.Fatalf("server received %d requests", received.Load())
	}
	for _, s := range spantest.Attempts(rec.Ended()) {
		if w := attrOf(s, attrs.WireWritesKey).AsInt64(); w > 1 {
			t.Errorf("attempt span claims retry.wire.writes=%d; the server received 1 request", w)
		}
		for _, e := range s.Events() {
			if e.Name == attrs.EventWireResend {
				t.Errorf("attempt span has a %s event; nothing was resent", e.Name)
			}
		}
	}
}

// A11. When the base panics with client spans on, otelhttp's CLIENT span
// is ended by abandonSpanOnPanic before the attempt event overwrote
// url.full: the span is exported with otelhttp's url.full, whose query
// values are raw.
func TestAttackPanicExportsTheRawURL(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Panic: "boom"}})
	func() {
		defer func() { recover() }()
		h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/v1?token=TOK-SECRET"))
	}()
	if d := dumpSpans(h.ended()); strings.Contains(d, "TOK-SECRET") {
		t.Errorf("exported spans leak the query value:\n%s", d)
	}
}

// A12. A discarded 503 whose body breaks while it is drained (the server
// closes the connection mid-body): otelhttp records the read error on the
// attempt span, replacing error.type "503" with a Go type name outside
// the vocabulary. The library owns that read (discard); the retry's span
// must keep error.type = "503".
func TestAttackBrokenDrainRewritesErrorType(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			buf.WriteString("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\n0123456789")
			buf.Flush()
			conn.Close()
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
		otelretry.WithBackoff(otelretry.ConstantBackoff(50*time.Millisecond)))
	resp, err := tr.RoundTrip(get(t, t.Context(), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	attempts := spantest.Attempts(rec.Ended())
	if len(attempts) != 2 {
		t.Fatalf("attempts = %d, want 2", len(attempts))
	}
	if got := attrOf(attempts[0], attrs.ErrorTypeKey).AsString(); got != "503" {
		t.Errorf("first attempt: error.type = %q, want \"503\"\n%s", got, dumpSpans(attempts[:1]))
	}
}

// A13. An answer that arrives after the caller canceled (a base that
// noticed the cancellation late, or a 503 that raced it): the decision
// rules ignore callerCanceled for an answered attempt, so the span records
// "retry" with a backoff, the budget is asked, and the transport then
// does not retry: it ends canceled. Same after a state check that answers
// not_applied after the caller canceled.
func TestAttackRetryRecordedAfterTheCallerCanceled(t *testing.T) {
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

// A2b. The same with a slow GetBody (a body re-read from disk or a
// spooled upload): the second attempt is sent past the deadline.
func TestAttackSlowGetBodySendsPastTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var lastCall time.Duration
		h := newHarness(t, []scripted.Step{{Status: 503}, {Hang: true}}, otelretry.WithDeadline(time.Second),
			otelretry.WithIdempotentMethods("PUT"), otelretry.WithBackoff(otelretry.ConstantBackoff(100*time.Millisecond)))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/x", strings.NewReader("x"))
		req.GetBody = func() (io.ReadCloser, error) {
			time.Sleep(1200 * time.Millisecond)
			return io.NopCloser(strings.NewReader("x")), nil
		}
		h.transprt.RoundTrip(req)
		took := time.Since(start)
		for _, c := range h.base.Calls() {
			lastCall = c.At.Sub(start)
		}
		if lastCall > time.Second {
			t.Errorf("an attempt was sent %v after the start, past the 1s deadline", lastCall)
		}
		if took > 1300*time.Millisecond {
			t.Errorf("RoundTrip took %v", took)
		}
	})
}

// A13b. A slow Classifier (it looks something up): the verdict uses the
// time left measured before the hook ran, so it records "retry" with a
// backoff although the deadline passed while the hook ran; the transport
// then ends deadline_exceeded without retrying.
func TestAttackSlowClassifierRecordsARetryPastTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}}, otelretry.WithDeadline(time.Second),
			otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)),
			otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification {
				time.Sleep(1500 * time.Millisecond)
				return otelretry.Classification{}
			}))
		resp, _ := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
		if resp != nil {
			resp.Body.Close()
		}
		attempts := h.attempts()
		last := attempts[len(attempts)-1]
		op := h.operation(t)
		if d, o := attrOf(last, attrs.DecisionKey).AsString(), attrOf(op, attrs.OutcomeKey).AsString(); d == "retry" && len(attempts) == 1 {
			t.Errorf("attempt recorded %q after the deadline passed; the operation ended %q with no retry", d, o)
		}
	})
}

// A base that returns early and keeps reading and closes the caller's body
// later, in its own goroutine (allowed by the RoundTripper contract): the
// retry takes a fresh body, and every body is closed exactly once.
func TestAttackBaseClosingTheBodyLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		var wg sync.WaitGroup
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(50 * time.Millisecond)
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}()
			if calls.Add(1) == 1 {
				return &http.Response{StatusCode: 503, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := otelretry.NewTransport(base, otelretry.WithIdempotentMethods("PUT"), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		bodies := &countedBodies{getBodyOK: -1}
		resp, err := tr.RoundTrip(bodies.request(t, t.Context(), http.MethodPut, true))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		wg.Wait()
		bodies.check(t)
	})
}

// A response body whose Close panics, on the retry path: the panic goes
// on, and every span is ended.
func TestAttackBodyClosePanics(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 503, Header: http.Header{}, Body: panicCloser{}, Request: r}, nil
	})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	var r any
	func() {
		defer func() { r = recover() }()
		tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
	}()
	if r == nil {
		t.Fatal("the panic was swallowed")
	}
	if s, e := len(rec.Started()), len(rec.Ended()); s != e {
		t.Errorf("%d spans started, %d ended", s, e)
	}
}

type panicCloser struct{}

func (panicCloser) Read([]byte) (int, error) { return 0, io.EOF }
func (panicCloser) Close() error             { panic("close exploded") }

// A4b. A PrepareFunc that panics on a retry: the fresh body GetBody gave
// that attempt is never closed.
func TestAttackPreparePanicOnARetryLeaksItsBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, otelretry.WithIdempotentMethods("PUT"),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				if n == 2 {
					panic("prepare bug")
				}
				return nil
			}))
		bodies := &countedBodies{getBodyOK: -1}
		func() {
			defer func() { recover() }()
			h.transprt.RoundTrip(bodies.request(t, t.Context(), http.MethodPut, true))
		}()
		bodies.check(t)
	})
}

// The budget shared by two Transports, hammered by many goroutines over a
// churning set of hosts larger than its table, with 503s, 429s with and
// without Retry-After, timeouts and successes: no race, no panic, every
// refusal carries a budget reason, and once every host answers 200 again a
// new host gets its retries (the table does not stay full of recovered
// hosts).
func TestAttackBudgetChurnAcrossTransports(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := otelretry.NewBudget(otelretry.BudgetMaxHosts(40))
		var healthy atomic.Bool
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			code := 200
			h := http.Header{}
			if !healthy.Load() {
				switch len(r.URL.Host) % 4 {
				case 0:
					code = 503
				case 1:
					code, h["Retry-After"] = 429, []string{"2"}
				case 2:
					code = 429
				}
			}
			return &http.Response{StatusCode: code, Header: h, Body: http.NoBody, Request: r}, nil
		})
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		opts := []otelretry.Option{otelretry.WithBudget(budget), otelretry.WithTracerProvider(tp),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithDeadline(5 * time.Second)}
		trs := []*otelretry.Transport{otelretry.NewTransport(base, opts...), otelretry.NewTransport(base, opts...)}
		var wg sync.WaitGroup
		for g := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 30 {
					host := fmt.Sprintf("h%d.test", (g*31+i*7)%300)
					resp, err := trs[(g+i)%2].RoundTrip(get(t, t.Context(), "http://"+host+"/"))
					if err == nil {
						resp.Body.Close()
					}
					time.Sleep(time.Duration(i%5) * 100 * time.Millisecond)
				}
			}()
		}
		wg.Wait()
		for _, s := range spantest.Attempts(rec.Ended()) {
			if attrOf(s, attrs.DecisionKey).AsString() == string(attrs.DecisionBudgetExhausted) {
				switch r := attrs.Reason(attrOf(s, attrs.ReasonKey).AsString()); r {
				case attrs.ReasonBudget, attrs.ReasonPushback, attrs.ReasonHostLimit:
				default:
					t.Errorf("budget_exhausted with reason %q", r)
				}
			}
		}
		// Recovery: three successes per host refill what one failure took.
		healthy.Store(true)
		time.Sleep(2 * time.Minute) // every hold passes
		for range 6 {
			for h := range 300 {
				resp, err := trs[0].RoundTrip(get(t, t.Context(), fmt.Sprintf("http://h%d.test/", h)))
				if err == nil {
					resp.Body.Close()
				}
			}
		}
		if n := budget.Available(get(t, t.Context(), "http://brand-new.test/")); n != 2 {
			t.Errorf("a new host after recovery gets %d retries, want 2 as on a fresh budget", n)
		}
	})
}

// A16. Garbage from a base or a hook that reaches the caller or the span
// as it is: a response with StatusCode 0 is treated as "no answer" by the
// rules (answered := status != 0) yet recorded as http.response.status_code=0
// with no error class and retried as reason retryable_error; a state check
// that answers applied with a response whose Body is nil hands that nil
// Body to the caller.
func TestAttackGarbageAnswers(t *testing.T) {
	t.Run("status 0", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 0, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
			if resp != nil {
				resp.Body.Close()
			}
			for _, s := range spantest.Attempts(rec.Ended()) {
				if v, ok := spantest.Attr(s, attrs.HTTPResponseStatusCodeKey); ok && v.AsInt64() == 0 {
					t.Errorf("attempt %d: http.response.status_code=0, decision %s, reason %s (err %v)", attrOf(s, attrs.AttemptKey).AsInt64(),
						attrOf(s, attrs.DecisionKey).AsString(), attrOf(s, attrs.ReasonKey).AsString(), err)
				}
			}
		})
	})
	t.Run("applied with a nil Body", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Hang: true}}, otelretry.WithAttemptTimeout(10*time.Millisecond),
				otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
					return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: 201, Header: http.Header{}}}, nil
				}))
			resp, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/", "x"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Body == nil {
				t.Errorf("RoundTrip returned a response with a nil Body")
			} else {
				resp.Body.Close()
			}
		})
	})
}
