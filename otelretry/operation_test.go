// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// countingRoundTripper counts the RoundTrip calls a layer above makes.
type countingRoundTripper struct {
	rt    http.RoundTripper
	calls atomic.Int32
}

func (c *countingRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	c.calls.Add(1)
	return c.rt.RoundTrip(r)
}

// untilContextDone is the loop many SDKs run above the transport (stripe-go's
// among them): it calls again, after any error, until its context is done.
func untilContextDone(ctx context.Context, client *http.Client, newReq func(context.Context) *http.Request) error {
	for {
		resp, err := client.Do(newReq(ctx))
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
	}
}

// When the caller's deadline is the one that ends an operation, RoundTrip
// returns only once the caller's context is done: a loop above that stops
// only on ctx.Err() then makes no second call in that context, whose error
// would replace the first, and the caller's error keeps the write's
// unknown outcome. Over hundreds of runs on loopback, where the caller's
// timer and the operation's race for the same instant. A create the
// deadline cut before it had a connection was never sent, and its error
// says so (it does not match ErrOutcomeUnknown); every create the server
// executed ends with its outcome unknown.
func TestCallerDeadlineLeavesNoRoomForAnotherCall(t *testing.T) {
	var mu sync.Mutex
	executed := map[string]bool{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		executed[r.Header.Get("X-Run")] = true
		mu.Unlock()
		select { // the write is applied; its answer never comes in time
		case <-r.Context().Done():
		case <-release:
		}
	}))
	base := srv.Client().Transport.(*http.Transport).Clone()
	above := &countingRoundTripper{rt: otelretry.NewTransport(base, otelretry.WithoutBudget())}
	client := &http.Client{Transport: above}

	runs := 200 / raceScale
	unknown := make([]bool, runs)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 20)
	for i := range runs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
			defer cancel()
			err := untilContextDone(ctx, client, func(ctx context.Context) *http.Request {
				r := post(t, ctx, srv.URL+"/orders", "order")
				r.Header.Set("X-Run", fmt.Sprint(i))
				return r
			})
			var oe *otelretry.Error
			if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &oe) ||
				oe.Outcome != attrs.OutcomeDeadlineExceeded || oe.Reason != attrs.ReasonCaller {
				t.Errorf("err = %v; want deadline_exceeded (caller), matching context.DeadlineExceeded", err)
			}
			unknown[i] = errors.Is(err, otelretry.ErrOutcomeUnknown)
		})
	}
	wg.Wait()
	close(release)
	base.CloseIdleConnections()
	srv.Close() // waits for the handlers: every create that reached the server is counted
	if got := above.calls.Load(); got != int32(runs) {
		t.Errorf("the loop above made %d RoundTrip calls for %d creates: %d extra", got, runs, int(got)-runs)
	}
	unsent := 0
	for i, u := range unknown {
		if executed[fmt.Sprint(i)] && !u {
			t.Errorf("run %d: the server executed the create, but the caller's error does not match ErrOutcomeUnknown", i)
		}
		if !u {
			unsent++
		}
	}
	t.Logf("%d of %d creates executed; %d cut before they had a connection", len(executed), runs, unsent)
}

// In virtual time: the operation ends at the caller's deadline with the
// caller's context done, for a write in flight (unknown) and for a read;
// an operation that ends because a pause cannot fit before the caller's
// deadline returns at once, with the caller's context still alive.
func TestCallerDeadlineTiming(t *testing.T) {
	cases := []struct {
		name        string
		steps       []scripted.Step
		method      string
		wantAt      time.Duration
		wantDone    bool
		wantUnknown bool
		wantReason  attrs.Reason
	}{
		{"a write in flight", []scripted.Step{{Hang: true}}, http.MethodPost, 50 * time.Millisecond, true, true, attrs.ReasonCaller},
		{"a read in flight", []scripted.Step{{Hang: true}}, http.MethodGet, 50 * time.Millisecond, true, false, attrs.ReasonCaller},
		{"a pause that cannot fit", []scripted.Step{{Status: 503, Header: http.Header{"Retry-After": {"10"}}}}, http.MethodGet, 0, false, false, attrs.ReasonDeadline},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tc.steps, otelretry.WithoutBudget())
				ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
				defer cancel()
				var results otelretry.Results
				req, _ := http.NewRequestWithContext(otelretry.WithResults(ctx, &results), tc.method, "http://api.test/orders", nil)
				start := time.Now()
				resp, err := h.transprt.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				if got := time.Since(start); got != tc.wantAt {
					t.Errorf("RoundTrip returned after %v, want %v", got, tc.wantAt)
				}
				if done := ctx.Err() != nil; done != tc.wantDone {
					t.Errorf("caller's context done when RoundTrip returned: %v, want %v", done, tc.wantDone)
				}
				last, _ := results.Last()
				if last.Outcome != attrs.OutcomeDeadlineExceeded || last.Reason != tc.wantReason || last.OutcomeUnknown != tc.wantUnknown {
					t.Errorf("result = %+v; want deadline_exceeded (%s), unknown %v", last, tc.wantReason, tc.wantUnknown)
				}
				if tc.wantUnknown != errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("err = %v; ErrOutcomeUnknown want %v", err, tc.wantUnknown)
				}
			})
		})
	}
}

// A PrepareAttemptFunc that panics on the first attempt, with the caller's body
// kept or replaced: the caller's body is closed exactly once, by the
// attempt that holds it, not again by the operation.
func TestPrepareFuncPanicOnTheFirstAttemptClosesTheCallersBodyOnce(t *testing.T) {
	for _, replaceFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "body kept", true: "body replaced, then panic"}[replaceFirst], func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				if replaceFirst {
					r.Body = io.NopCloser(strings.NewReader("signed payload"))
				}
				panic("prepare bug")
			}))
			bodies := &countedBodies{getBodyOK: -1}
			func() {
				defer func() { recover() }()
				h.transprt.RoundTrip(bodies.request(t, t.Context(), http.MethodPut, true))
			}()
			bodies.check(t)
		})
	}
}

// A PrepareAttemptFunc that panics on a retry: the fresh body GetBody gave that
// attempt is closed, as every other body, exactly once.
func TestPrepareFuncPanicOnARetryClosesItsBody(t *testing.T) {
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

// A Classifier, a Backoff or a Budget's Key that panics after the base
// answered: the answer's body is closed before the panic goes on, and the
// spans that were started end (with client spans or without).
func TestHookPanicClosesTheResponseBody(t *testing.T) {
	hooks := map[string]otelretry.Option{
		"classifier": otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification { panic("classifier bug") }),
		"backoff":    otelretry.WithBackoff(otelretry.Backoff(func(int, otelretry.Answer) time.Duration { panic("backoff bug") })),
		"budget key": otelretry.WithBudget(&otelretry.Budget{Key: func(*http.Request) string { panic("key bug") }}),
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

// A Backoff that panics is not hidden and leaves nothing open: the panic
// reaches the caller, the failed answer's body is closed, and the
// operation and attempt spans are ended.
func TestBackoffPanicReachesTheCallerAndLeavesNothingOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := otelretry.Backoff(func(int, otelretry.Answer) time.Duration { panic("backoff boom") })
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

// A Classifier that panics (on a response, or on a transport error, which
// is classified inside otelhttp's call) is not hidden, closes the answer's
// body and ends every span; one that blocks past the deadline gets no
// retry; NotProcessed given for a response (a 503 to a POST) neither
// makes the write repeatable nor records evidence.
func TestClassifierThatPanicsBlocksOrLiesIsContained(t *testing.T) {
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
			start := time.Now()
			resp, _ := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
			if resp != nil {
				resp.Body.Close()
			}
			if n := len(h.base.Calls()); n != 1 {
				t.Errorf("step %+v: %d calls after a classifier that blocked past the deadline, want 1", step, n)
			}
			// The Classifier's godoc: user code is not cut, and RoundTrip
			// waits for it past the deadline.
			if took := time.Since(start); took != 3*time.Second {
				t.Errorf("step %+v: RoundTrip returned after %s, want the Classifier's 3s", step, took)
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

// The decision is taken on the time left after the Classifier: one that
// runs past the deadline (it looks something up) never gets a retry
// recorded that the operation does not make.
func TestSlowClassifierDecidesOnTheTimeLeftAfterIt(t *testing.T) {
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

type panicCloser struct{}

func (panicCloser) Read([]byte) (int, error) { return 0, io.EOF }

func (panicCloser) Close() error { panic("close exploded") }

// A response body whose Close panics, on the retry path: the panic goes
// on, and every span is ended.
func TestResponseBodyCloseThatPanicsEndsEverySpan(t *testing.T) {
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

// A base that panics: the attempt and operation spans end, with an event
// naming the panic and status Error; the panic goes on, and nothing is left
// running (goleak checks the timers and goroutines at the end).
func TestPanickingBaseEndsSpansAndPanicsAgain(t *testing.T) {
	for _, clientSpans := range []bool{true, false} {
		t.Run(fmt.Sprintf("clientSpans=%v", clientSpans), func(t *testing.T) {
			opts := []otelretry.Option{}
			if !clientSpans {
				opts = append(opts, otelretry.WithoutClientSpans())
			}
			h := newHarness(t, []scripted.Step{{Panic: "base exploded"}}, opts...)
			func() {
				defer func() {
					if r := recover(); r != "base exploded" {
						t.Fatalf("recovered %v, want the base's panic", r)
					}
				}()
				h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
				t.Fatal("RoundTrip returned")
			}()
			spans := h.ended()
			if len(spans) != 2 {
				t.Fatalf("ended spans = %d, want the operation and the attempt", len(spans))
			}
			for _, s := range spans {
				var named bool
				for _, e := range s.Events() {
					named = named || e.Name == attrs.EventPanic
				}
				if !named || s.Status().Code != codes.Error {
					t.Errorf("span %q: panic event %v, status %v; want both", s.Name(), named, s.Status().Code)
				}
			}
		})
	}
}

// Goexit in the base (t.FailNow in a test double): both spans end, nothing
// stays open.
func TestGoexitInTheBaseEndsBothSpans(t *testing.T) {
	for _, clientSpans := range []bool{true, false} {
		t.Run(fmt.Sprintf("clientSpans=%v", clientSpans), func(t *testing.T) {
			base := roundTripFunc(func(*http.Request) (*http.Response, error) { runtime.Goexit(); return nil, nil })
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			opts := []otelretry.Option{otelretry.WithTracerProvider(tp)}
			if !clientSpans {
				opts = append(opts, otelretry.WithoutClientSpans())
			}
			tr := otelretry.NewTransport(base, opts...)
			done := make(chan struct{})
			go func() {
				defer close(done)
				tr.RoundTrip(get(t, context.Background(), "http://api.test/"))
			}()
			<-done
			if s, e := len(rec.Started()), len(rec.Ended()); s != 2 || e != 2 {
				t.Errorf("started %d, ended %d; want 2 and 2", s, e)
			}
		})
	}
}

// A retry that is not made leaves an attempt_abandoned event naming why:
// the caller canceled during the pause (canceled/caller); GetBody failed
// for the retry (stop/not_replayable); the next PrepareAttemptFunc set the URL to
// nil (stop/prepare_failed, no panic, no call). Every body is closed once.
func TestRetryNotMadeIsExplainedByAnAttemptAbandonedEvent(t *testing.T) {
	cases := map[string]struct {
		getBodyOK int
		prepare   otelretry.PrepareAttemptFunc
		cancelIn  time.Duration
		want      string
	}{
		"cancel in the pause": {getBodyOK: -1, cancelIn: 50 * time.Millisecond, want: "canceled/caller"},
		"GetBody fails":       {getBodyOK: 0, want: "stop/not_replayable"},
		"URL set to nil": {getBodyOK: -1, want: "stop/prepare_failed", prepare: func(r *http.Request, n int) error {
			if n > 1 {
				r.URL = nil
			}
			return nil
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := []otelretry.Option{otelretry.WithIdempotentMethods("PUT"),
					otelretry.WithBackoff(otelretry.ConstantBackoff(200 * time.Millisecond))}
				if tc.prepare != nil {
					opts = append(opts, otelretry.WithPrepareAttempt(tc.prepare))
				}
				h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, opts...)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancelIn > 0 {
					time.AfterFunc(tc.cancelIn, cancel)
				}
				bodies := &countedBodies{getBodyOK: tc.getBodyOK}
				resp, err := h.transprt.RoundTrip(bodies.request(t, ctx, http.MethodPut, true))
				if resp != nil {
					resp.Body.Close()
				}
				if got := abandoned(t, h); len(got) != 1 || got[0] != tc.want {
					t.Errorf("attempt_abandoned = %v, want [%s] (err %v)", got, tc.want, err)
				}
				if n := len(h.base.Calls()); n != 1 {
					t.Errorf("%d calls, want 1", n)
				}
				bodies.check(t)
			})
		})
	}
}

// Every request body, the caller's and each copy GetBody made, is closed
// exactly once, whatever path the operation takes.
func TestRequestBodiesClosedExactlyOnce(t *testing.T) {
	hang := scripted.Step{Hang: true}
	cases := []struct {
		name       string
		steps      []scripted.Step
		method     string
		replayable bool
		getBodyOK  int
		ctx        func(context.Context) (context.Context, context.CancelFunc)
		opts       []otelretry.Option
		wantCalls  int
	}{
		{name: "success", steps: []scripted.Step{{Status: 200}}, method: "PUT", replayable: true, getBodyOK: -1, wantCalls: 1},
		{name: "retry", steps: []scripted.Step{{Status: 503}, {Status: 200}}, method: "PUT", replayable: true, getBodyOK: -1, wantCalls: 2},
		{name: "stop", steps: []scripted.Step{{Status: 404}}, method: "PUT", replayable: true, getBodyOK: -1, wantCalls: 1},
		{name: "check_state", steps: []scripted.Step{hang}, method: "POST", replayable: true, getBodyOK: -1, wantCalls: 1},
		{name: "deadline before the call", steps: []scripted.Step{{Status: 200}}, method: "PUT", replayable: true, getBodyOK: -1,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithDeadline(ctx, time.Now().Add(-time.Second))
			}},
		{name: "canceled in flight", steps: []scripted.Step{hang}, method: "PUT", replayable: true, getBodyOK: -1, wantCalls: 1,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(10*time.Millisecond, cancel)
				return ctx, cancel
			}},
		{name: "GetBody fails", steps: []scripted.Step{{Status: 503}, {Status: 200}}, method: "PUT", replayable: true, getBodyOK: 0, wantCalls: 1},
		{name: "not replayable", steps: []scripted.Step{{Status: 503}, {Status: 200}}, method: "PUT", replayable: false, wantCalls: 1,
			opts: []otelretry.Option{otelretry.WithBodyBuffer(0, 0)}},
		{name: "no GetBody, buffered", steps: []scripted.Step{{Status: 503}, {Status: 200}}, method: "PUT", replayable: false, wantCalls: 2},
		{name: "stalled drain", steps: []scripted.Step{{Status: 503, Body: "x", Stall: true}, {Status: 200}}, method: "PUT", replayable: true, getBodyOK: -1, wantCalls: 2},
		{name: "stalled drain, then the deadline", steps: []scripted.Step{{Status: 503, Body: "x", Stall: true}}, method: "PUT", replayable: true, getBodyOK: -1,
			opts: []otelretry.Option{otelretry.WithDeadline(time.Second), otelretry.WithAttemptTimeout(10 * time.Second),
				otelretry.WithBackoff(otelretry.ConstantBackoff(900 * time.Millisecond))}, wantCalls: 2},
		{name: "Retry-After past the deadline", steps: []scripted.Step{{Status: 503, Header: http.Header{"Retry-After": {"1"}}}},
			method: "PUT", replayable: true, getBodyOK: -1, wantCalls: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := append([]otelretry.Option{otelretry.WithIdempotentMethods("PUT"), otelretry.WithDeadline(500 * time.Millisecond),
					otelretry.WithAttemptTimeout(100 * time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(20 * time.Millisecond))},
					tc.opts...)
				h := newHarness(t, tc.steps, opts...)
				bodies := &countedBodies{getBodyOK: tc.getBodyOK}
				ctx, cancel := t.Context(), context.CancelFunc(func() {})
				if tc.ctx != nil {
					ctx, cancel = tc.ctx(ctx)
				}
				defer cancel()
				resp, err := h.transprt.RoundTrip(bodies.request(t, ctx, tc.method, tc.replayable))
				if resp != nil {
					resp.Body.Close() // unread: a stalled body is the caller's to bound
				} else if e := checkError(err); e != nil {
					t.Fatal(e)
				}
				if n := len(h.base.Calls()); n != tc.wantCalls {
					t.Errorf("calls = %d, want %d", n, tc.wantCalls)
				}
				bodies.check(t)
				if n := h.base.OpenBodies(); n != 0 {
					t.Errorf("%d response bodies left open", n)
				}
			})
		})
	}
}

// The caller's context canceled at any stage (before the call, in the
// PrepareAttemptFunc, in the base, during the pause, during the drain of a
// discarded body, during the state check) ends the operation canceled at
// once, with no further call, every body closed, every span ended, and a
// write in flight reported unknown.
func TestCallerCancelingAtAnyStageEndsTheOperationCanceled(t *testing.T) {
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

// http.Client's Timeout over a RoundTripper that is not *http.Transport
// closes the legacy Request.Cancel channel before its context notices.
// Every run must still record a timeout, and a write that was sent must
// end with its outcome unknown, never stop: the caller's deadline passed
// (deadline_exceeded, reason caller), and the Results slot keeps the
// unknown outcome, which http.Client flattens out of the error whenever
// its own timer fires before its context's.
func TestClientTimeoutIsATimeout(t *testing.T) {
	var executed sync.Map // run -> true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		executed.Store(r.Header.Get("X-Run"), true)
		select {
		case <-time.After(500 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	client := &http.Client{Timeout: 200 * time.Millisecond, Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
	const runs = 40
	var wg sync.WaitGroup
	unknown := make([]bool, runs)
	for i := range runs {
		wg.Go(func() {
			var results otelretry.Results
			ctx := otelretry.WithResults(context.Background(), &results)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", strings.NewReader("x"))
			req.Header.Set("X-Run", fmt.Sprint(i))
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Error("a 500ms answer beat a 200ms timeout")
				return
			}
			last, ok := results.Last()
			if !ok || last.Outcome != attrs.OutcomeDeadlineExceeded || last.Reason != attrs.ReasonCaller {
				t.Errorf("results = %+v; want deadline_exceeded (caller)", results.Operations())
			}
			unknown[i] = results.OutcomeUnknown()
		})
	}
	wg.Wait()
	srv.Close() // waits for the handlers
	for i, u := range unknown {
		// A loaded machine may cut a run before it had a connection: it was
		// not sent, and says so. Every run the server executed is unknown.
		if _, ok := executed.Load(fmt.Sprint(i)); ok && !u {
			t.Errorf("run %d: the server executed the write, but the results do not say its outcome is unknown", i)
		}
	}
	attempts := spantest.Attempts(rec.Ended())
	if len(attempts) > runs {
		t.Fatalf("attempts = %d, want at most %d", len(attempts), runs)
	}
	for _, a := range attempts {
		class, decision, reason := attrOf(a, attrs.ErrorClassKey).AsString(), attrOf(a, attrs.DecisionKey).AsString(), attrOf(a, attrs.ReasonKey).AsString()
		if class != "timeout" || decision != "deadline_exceeded" || reason != "caller" {
			t.Errorf("%s: error class %q, decision %q (%s); want timeout, deadline_exceeded (caller)",
				attrOf(a, attrs.RequestIDKey).AsString(), class, decision, reason)
		}
	}
}

// Cancellation at every virtual millisecond of an operation that goes
// through every stage: a 503 whose body stalls (drain), a pause, a hung
// attempt (attempt timeout), a state check for the write, a 200 whose body
// the caller reads slowly. The caller's cancellation must end RoundTrip
// (or the body read) at that very instant, with outcome canceled.
func TestCancelAtEveryMillisecondEndsTheOperationThen(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		for c := time.Duration(0); c <= 130*time.Millisecond; c += time.Millisecond {
			t.Run(fmt.Sprintf("%s/cancel@%v", method, c), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					steps := []scripted.Step{
						{Status: 503, Body: "x", Stall: true, Delay: 10 * time.Millisecond},
						{Hang: true},
						{Status: 200, Body: "payload", Stall: true, Delay: 5 * time.Millisecond},
					}
					if method == http.MethodPost {
						steps = []scripted.Step{{Hang: true}, {Status: 200, Body: "payload", Stall: true, Delay: 5 * time.Millisecond}}
					}
					checkHook := func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
						select {
						case <-ctx.Done():
							return otelretry.StateResult{}, ctx.Err()
						case <-time.After(20 * time.Millisecond):
							return otelretry.StateResult{State: attrs.StateNotApplied}, nil
						}
					}
					h := newHarness(t, steps, otelretry.WithDeadline(200*time.Millisecond),
						otelretry.WithAttemptTimeout(30*time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(7*time.Millisecond)),
						otelretry.WithStateCheck(checkHook), otelretry.WithMaxAttempts(4), otelretry.WithoutBudget())
					ctx, cancel := context.WithCancel(t.Context())
					defer cancel()
					start := time.Now()
					time.AfterFunc(c, cancel)
					var req *http.Request
					if method == http.MethodGet {
						req = get(t, ctx, "http://api.test/")
					} else {
						req = post(t, ctx, "http://api.test/", "x")
					}
					resp, err := h.transprt.RoundTrip(req)
					if resp != nil {
						buf := make([]byte, 64)
						for {
							if _, rerr := resp.Body.Read(buf); rerr != nil {
								break
							}
						}
						resp.Body.Close()
					} else if e := checkError(err); e != nil {
						t.Fatal(e)
					}
					took := time.Since(start)
					if took > c {
						t.Errorf("returned (or the body read ended) at %v, canceled at %v (err %v)", took, c, err)
					}
					if err != nil && took == c {
						var re *otelretry.Error
						if errors.As(err, &re) && re.Outcome != attrs.OutcomeCanceled && re.Outcome != attrs.OutcomeCheckState {
							t.Errorf("outcome %s after a cancellation", re.Outcome)
						}
					}
					synctest.Wait()
					if n := h.base.OpenBodies(); n != 0 {
						t.Errorf("%d bodies open", n)
					}
				})
			})
		}
	}
}

// Every deadline from 1ms to 130ms, given by WithDeadline, by the caller's
// context, or by both, over the same stages: no call starts at or after
// the deadline, and RoundTrip returns by it.
func TestDeadlineAtEveryMillisecondIsKept(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		for _, source := range []string{"option", "context", "both"} {
			for d := time.Millisecond; d <= 130*time.Millisecond; d += time.Millisecond {
				t.Run(fmt.Sprintf("%s/%s/%v", method, source, d), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						steps := []scripted.Step{
							{Status: 503, Body: "x", Stall: true, Delay: 10 * time.Millisecond},
							{Hang: true},
							{Status: 503, Header: http.Header{"Retry-After": {"0"}}, Delay: 3 * time.Millisecond},
							{Status: 200, Body: "payload", Stall: true, Delay: 5 * time.Millisecond},
						}
						if method == http.MethodPost {
							steps = []scripted.Step{{Hang: true}, {Hang: true}, {Status: 200, Body: "payload", Delay: 5 * time.Millisecond}}
						}
						checkHook := func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
							select {
							case <-ctx.Done():
								return otelretry.StateResult{}, ctx.Err()
							case <-time.After(20 * time.Millisecond):
								return otelretry.StateResult{State: attrs.StateNotApplied}, nil
							}
						}
						opts := []otelretry.Option{otelretry.WithAttemptTimeout(30 * time.Millisecond),
							otelretry.WithBackoff(otelretry.ConstantBackoff(7 * time.Millisecond)),
							otelretry.WithStateCheck(checkHook), otelretry.WithMaxAttempts(5), otelretry.WithoutBudget()}
						ctx := t.Context()
						switch source {
						case "option":
							opts = append(opts, otelretry.WithDeadline(d))
						case "context":
							var cancel context.CancelFunc
							ctx, cancel = context.WithTimeout(ctx, d)
							defer cancel()
						case "both":
							opts = append(opts, otelretry.WithDeadline(d+3*time.Millisecond))
							var cancel context.CancelFunc
							ctx, cancel = context.WithTimeout(ctx, d)
							defer cancel()
						}
						h := newHarness(t, steps, opts...)
						start := time.Now()
						var req *http.Request
						if method == http.MethodGet {
							req = get(t, ctx, "http://api.test/")
						} else {
							req = post(t, ctx, "http://api.test/", "x")
						}
						resp, err := h.transprt.RoundTrip(req)
						took := time.Since(start)
						if resp != nil {
							resp.Body.Close()
						} else if e := checkError(err); e != nil {
							t.Fatal(e)
						}
						if took > d {
							t.Errorf("RoundTrip returned at %v, deadline %v (err %v)", took, d, err)
						}
						for i, c := range h.base.Calls() {
							if at := c.At.Sub(start); at >= d {
								t.Errorf("call %d started at %v, deadline %v", i+1, at, d)
							}
						}
					})
				})
			}
		}
	}
}

// stressRuns is how many operations the race stress tests run: a short
// run by default, a long one with OTELRETRY_STRESS_RUNS (CONTRIBUTING.md
// gives the command and what it measured).
func stressRuns(t *testing.T, short int) int {
	if v := os.Getenv("OTELRETRY_STRESS_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("OTELRETRY_STRESS_RUNS=%q: want a positive number", v)
		}
		return n
	}
	return short
}

// Tiny caller deadlines, cancellations at random points and concurrent
// operations, on loopback through net/http, which waits on the attempt's
// context in every way it can (Done first, AfterFunc through
// WithCancelCause). Nothing may panic, and every error keeps its contract.
func TestCancellationRacesOnLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, _ := strconv.Atoi(r.URL.Query().Get("sleep_us")); n > 0 {
			time.Sleep(time.Duration(n) * time.Microsecond)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithAttemptTimeout(2*time.Millisecond),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget())

	runs := stressRuns(t, 1500/raceScale)
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	sem := make(chan struct{}, 64)
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			switch i % 3 {
			case 0: // a caller deadline of 0–49µs
				ctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(50))*time.Microsecond)
				defer cancel()
			case 1: // a cancellation at a random point
				time.AfterFunc(time.Duration(rand.IntN(3000))*time.Microsecond, cancel)
			}
			u := srv.URL + "/?sleep_us=" + strconv.Itoa(rand.IntN(3000))
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				if e := checkError(err); e != nil {
					errs <- e
				}
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, s := range rec.Ended() {
		if s.EndTime().Before(s.StartTime()) {
			t.Fatalf("span %s ended before it started", s.Name())
		}
	}
}

// 500 concurrent operations, a third of them canceled at random points, on
// virtual time: every one ends, with a valid result, and no body stays
// open.
func TestConcurrentOperationsWithCancellations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := scripted.New(scripted.Step{Delay: 3 * time.Millisecond, Status: 503}, scripted.Step{Delay: 2 * time.Millisecond, Status: 200})
		tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget())
		var wg sync.WaitGroup
		var failures atomic.Int64
		for i := range 500 / raceScale {
			wg.Go(func() {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if i%3 == 0 {
					time.AfterFunc(time.Duration(i%7)*time.Millisecond, cancel)
				}
				resp, err := tr.RoundTrip(get(t, ctx, "http://api.test/"))
				if err != nil {
					if e := checkError(err); e != nil {
						t.Error(e)
					}
					failures.Add(1)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		wg.Wait()
		if n := base.OpenBodies(); n != 0 {
			t.Fatalf("%d response bodies left open", n)
		}
		if failures.Load() == 0 {
			t.Fatalf("no operation was canceled: the test exercised nothing")
		}
	})
}

// A cancellation is the caller's only when the caller canceled: a base
// that fails a GET with its own context.Canceled (a pool shutting down, a
// layer with a context of its own) while the caller's context lives made
// the attempt canceled/caller, matching context.Canceled, and the GET was
// not retried, so a caller that skips its own cancellations dropped a real
// failure. It is a failure of class other (docs/decisions.md row 27).
func TestACancellationOfTheBasesOwnIsNotTheCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		own := &url.Error{Op: "Get", URL: "http://api.test/x", Err: context.Canceled}
		h := newHarness(t, []scripted.Step{{Err: own}, {Status: 200}}, otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/x"))
		if err != nil {
			t.Fatalf("RoundTrip: %v; want the GET retried and its 200", err)
		}
		resp.Body.Close()
		events := h.events(t)
		if len(events) != 2 || events[0].ErrorClass != string(attrs.ErrorClassOther) || events[0].Decision != string(attrs.DecisionRetry) {
			t.Errorf("attempts %+v; want the first of class other, retried", events)
		}
	})
}

// A write in flight when its caller cancels may have been applied, keyed
// or not: a key makes a resend safe, not the outcome known (docs/decisions.md
// row 10). Over a base that reports no writes, a keyed write's error did
// not match ErrOutcomeUnknown, where an unkeyed one's did.
func TestAKeyedWriteInFlightWhenTheCallerCancelsIsUnknown(t *testing.T) {
	for name, c := range map[string]struct {
		opt    otelretry.Option
		header string
	}{
		"no key":                       {},
		"a generated key":              {opt: otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())},
		"the caller's key, a contract": {opt: otelretry.WithIdempotencyKeyContract(), header: "k-1"},
		"a method declared idempotent": {opt: otelretry.WithIdempotentMethods(http.MethodPost)},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Delay: time.Second, Status: 201}}, c.opt)
				ctx, cancel := context.WithCancel(t.Context())
				time.AfterFunc(100*time.Millisecond, cancel) // the write on its way
				req := postReq(t, ctx)
				if c.header != "" {
					req.Header.Set("Idempotency-Key", c.header)
				}
				_, err := h.transprt.RoundTrip(req)
				var e *otelretry.Error
				if !errors.As(err, &e) || e.Outcome != attrs.OutcomeCanceled || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("err = %v; want canceled, matching ErrOutcomeUnknown", err)
				}
			})
		})
	}
}

// A write a layer below cut in flight with its own cancellation may have
// been applied, as one its own deadline cut: it ends check_state, matching
// ErrOutcomeUnknown (docs/decisions.md row 15). Read as a failure like any
// other, it ended stop (not_idempotent), its outcome unsaid.
func TestAWriteALayerBelowCanceledInFlightIsUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		own := &url.Error{Op: "Post", URL: "http://api.test/orders", Err: context.Canceled}
		h := newHarness(t, []scripted.Step{{Delay: 100 * time.Millisecond, Err: own}})
		_, err := h.transprt.RoundTrip(postReq(t, t.Context()))
		var e *otelretry.Error
		if !errors.As(err, &e) || e.Outcome != attrs.OutcomeCheckState || !errors.Is(err, otelretry.ErrOutcomeUnknown) || len(h.base.Calls()) != 1 {
			t.Errorf("err = %v after %d calls; want check_state, matching ErrOutcomeUnknown, after 1", err, len(h.base.Calls()))
		}
	})
}

// An unknown write's error says whether otelretry resent it: a keyed
// write answered 503, resent under its key, then cut by its caller, was
// sent twice, and its error said "not resent by otelretry".
func TestAKeyedWriteResentThenCutByItsCallerSaysItWasResent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Delay: time.Second, Status: 201}},
			otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(500*time.Millisecond, cancel) // the resend in flight
		_, err := h.transprt.RoundTrip(postReq(t, ctx))
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) || len(h.base.Calls()) != 2 ||
			!strings.Contains(err.Error(), "outcome of the write unknown, resent by otelretry under its idempotency contract") {
			t.Errorf("err = %v after %d calls; want the outcome unknown, the write said resent", err, len(h.base.Calls()))
		}
	})
}

// docs/decisions.md, "What RoundTrip returns": the response's Request is
// the caller's request; for a 3xx, a shallow copy of it (same URL, method
// and header map) whose context carries the redirect chain to the next
// hop. The docs said the caller's request for every status.
func TestAResponsesRequestIsTheCallersOrForARedirectItsCopy(t *testing.T) {
	for _, status := range []int{200, 503, 302, 307} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/next")
			w.WriteHeader(status)
		}))
		base := &http.Transport{}
		req := get(t, t.Context(), srv.URL+"/a")
		resp, err := otelretry.NewTransport(base, otelretry.WithMaxAttempts(1)).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Request
		if status/100 != 3 && got != req {
			t.Errorf("status %d: resp.Request is %p, not the caller's request %p", status, got, req)
		}
		if status/100 == 3 && (got == req || got.URL != req.URL || got.Method != req.Method || got.Header == nil != (req.Header == nil)) {
			t.Errorf("status %d: resp.Request %p is not a shallow copy of the caller's %p", status, got, req)
		}
		base.CloseIdleConnections()
		srv.Close()
	}
}
