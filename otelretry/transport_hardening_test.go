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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// stressRuns is how many operations the race stress tests run: a short
// run by default, a long one with OTELRETRY_STRESS_RUNS (the README gives
// the command and what it measured).
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

// checkError holds any error RoundTrip returns to its contract: an *Error
// with an outcome from the closed set.
func checkError(err error) error {
	var e *otelretry.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("error %v is not an *otelretry.Error", err)
	}
	if !e.Outcome.Valid() || e.Outcome == attrs.OutcomeReturn {
		return fmt.Errorf("error with outcome %q", e.Outcome)
	}
	return nil
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

// A base that waits on the request context only after the attempt timed
// out, and one whose caller cancels while it runs: the attempt's context
// is the standard library's, so Done, Err and cancellation agree in every
// order.
func TestBaseWaitingOnTheContextAfterTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			time.Sleep(5 * time.Millisecond) // past the 1ms attempt timeout
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		tr := otelretry.NewTransport(late, otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithAttemptTimeout(time.Millisecond), otelretry.WithMaxAttempts(2), otelretry.WithoutBudget(),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
		_, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
		var e *otelretry.Error
		if !errors.As(err, &e) || e.Outcome != attrs.OutcomeMaxAttempts || e.Attempts != 2 {
			t.Fatalf("err = %v, want max_attempts after 2 timed-out attempts", err)
		}

		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Millisecond, cancel)
		tr = otelretry.NewTransport(late, otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithAttemptTimeout(time.Hour), otelretry.WithoutBudget())
		_, err = tr.RoundTrip(get(t, ctx, "http://api.test/"))
		if !errors.As(err, &e) || e.Outcome != attrs.OutcomeCanceled || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want canceled", err)
		}
	})
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

// A retried response whose body stalls: draining it never outlives the
// pause the decision chose, so the next attempt starts on time and the
// operation keeps its deadline.
func TestStalledRetriedBodyKeepsTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503, Body: "abc", Stall: true}},
			otelretry.WithDeadline(time.Second), otelretry.WithBackoff(otelretry.ConstantBackoff(900*time.Millisecond)),
			otelretry.WithoutBudget())
		start := time.Now()
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
		if err != nil || resp.StatusCode != 503 {
			t.Fatalf("got %v, %v; want the last 503", resp, err)
		}
		if took := time.Since(start); took != 900*time.Millisecond {
			t.Errorf("RoundTrip returned after %v, want 900ms (the pause, then a 503 with no time left)", took)
		}
		resp.Body.Close()
		calls := h.base.Calls()
		if len(calls) != 2 || calls[1].At.Sub(start) != 900*time.Millisecond {
			t.Fatalf("calls = %d (second at %v), want 2, the second at +900ms", len(calls), calls[len(calls)-1].At.Sub(start))
		}
		ev := h.events(t)
		if ev[0].Decision != "retry" || ev[1].Decision != "deadline_exceeded" {
			t.Errorf("decisions = %s, %s; want retry, deadline_exceeded", ev[0].Decision, ev[1].Decision)
		}
		if n := h.base.OpenBodies(); n != 0 {
			t.Errorf("%d response bodies left open", n)
		}
	})
}

// countedBodies hands out request bodies and counts how often each is
// closed: the caller's body and every copy GetBody makes must be closed
// exactly once, whatever path the operation takes.
type countedBodies struct {
	mu        sync.Mutex
	closes    []int
	getBodyOK int // GetBody copies allowed before it fails; -1: always
}

type countedBody struct {
	io.Reader
	c *countedBodies
	i int
}

func (b *countedBody) Close() error {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	b.c.closes[b.i]++
	return nil
}

func (c *countedBodies) next() *countedBody {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closes = append(c.closes, 0)
	return &countedBody{Reader: strings.NewReader("payload"), c: c, i: len(c.closes) - 1}
}

func (c *countedBodies) request(t *testing.T, ctx context.Context, method string, replayable bool) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, "http://api.test/things", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Body, req.ContentLength = c.next(), int64(len("payload"))
	if replayable {
		req.GetBody = func() (io.ReadCloser, error) {
			c.mu.Lock()
			fail := c.getBodyOK == 0
			if c.getBodyOK > 0 {
				c.getBodyOK--
			}
			c.mu.Unlock()
			if fail {
				return nil, errors.New("body source gone")
			}
			return c.next(), nil
		}
	}
	return req
}

func (c *countedBodies) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, n := range c.closes {
		if n != 1 {
			t.Errorf("body %d (of %d) closed %d times, want exactly once", i, len(c.closes), n)
		}
	}
}

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

// A base that returns a response and an error: the response is closed and
// the attempt fails with the error, as http.Client treats it; one that
// returns neither: the attempt fails with an error saying so.
func TestMisbehavingBaseResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 200, AlsoErr: errors.New("both at once")}, {NilResponse: true}},
			otelretry.WithMaxAttempts(2), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
		if resp != nil || err == nil {
			t.Fatalf("got %v, %v; want an error", resp, err)
		}
		if n := h.base.OpenBodies(); n != 0 {
			t.Fatalf("the response returned with an error was left open")
		}
		if !strings.Contains(err.Error(), "nil *Response with a nil error") {
			t.Errorf("err = %v, want the (nil, nil) base named", err)
		}
		for _, e := range h.events(t) {
			if e.Status != 0 || e.ErrorClass != "other" {
				t.Errorf("attempt %d: status %d, class %q; want no status, class other", e.Attempt, e.Status, e.ErrorClass)
			}
		}
	})
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

// A request built by hand with no header is legal for RoundTrip: the
// attempt copies get a header of their own (otelhttp and the propagators
// write into it) and the caller's request stays as it was.
func TestRequestWithoutHeader(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithPropagators(propagation.TraceContext{}))
	req := &http.Request{Method: http.MethodGet, URL: mustURL(t, "http://api.test/")}
	resp, err := h.transprt.RoundTrip(req.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if req.Header != nil {
		t.Errorf("the caller's request got a header: %v", req.Header)
	}
	if got := h.base.Calls()[0].Header.Get("Traceparent"); got == "" {
		t.Errorf("the attempt carries no traceparent")
	}
}

type idleCloser struct {
	http.RoundTripper
	closed atomic.Int32
}

func (c *idleCloser) CloseIdleConnections() { c.closed.Add(1) }

func TestCloseIdleConnectionsReachesTheBase(t *testing.T) {
	base := &idleCloser{RoundTripper: scripted.New(scripted.Step{Status: 200})}
	client := &http.Client{Transport: otelretry.NewTransport(base)}
	client.CloseIdleConnections()
	if base.closed.Load() != 1 {
		t.Fatalf("CloseIdleConnections reached the base %d times, want 1", base.closed.Load())
	}
	otelretry.NewTransport(scripted.New()).CloseIdleConnections() // a base without it: nothing to do
}

// A base's *url.Error carries the raw URL; neither the returned error nor
// the attempt span's status description may repeat its userinfo or query.
func TestBaseURLErrorsAreSanitized(t *testing.T) {
	raw := "http://alice:s3cret@api.test/v1/items?token=tok-123&page=2"
	h := newHarness(t, []scripted.Step{{Err: &url.Error{Op: "Get", URL: raw, Err: errors.New("connection lost")}}},
		otelretry.WithMaxAttempts(1))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, raw, strings.NewReader("x"))
	_, err := h.transprt.RoundTrip(req)
	if err == nil {
		t.Fatal("want an error")
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Errorf("the base's *url.Error is not reachable with errors.As: %v", err)
	}
	texts := []string{err.Error()}
	for _, s := range h.ended() {
		texts = append(texts, s.Status().Description)
		for _, e := range s.Events() {
			for _, kv := range e.Attributes {
				texts = append(texts, kv.Value.Emit())
			}
		}
		for _, kv := range s.Attributes() {
			texts = append(texts, kv.Value.Emit())
		}
	}
	for _, text := range texts {
		for _, secret := range []string{"s3cret", "tok-123", "alice"} {
			if strings.Contains(text, secret) {
				t.Errorf("%q leaks %q", text, secret)
			}
		}
	}
	if !strings.Contains(err.Error(), "connection lost") {
		t.Errorf("err = %q, lost the cause", err)
	}
}
