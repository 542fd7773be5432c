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

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// closeCounter is a request body that counts its closes.
type closeCounter struct {
	io.Reader
	closes *atomic.Int32
}

func (b closeCounter) Close() error { b.closes.Add(1); return nil }

// hostileServer answers by the "mode" query parameter.
func hostileServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		sleep, _ := strconv.Atoi(r.URL.Query().Get("us"))
		time.Sleep(time.Duration(sleep) * time.Microsecond)
		switch r.URL.Query().Get("mode") {
		case "503":
			w.Header().Set("Retry-After", r.URL.Query().Get("ra"))
			w.WriteHeader(503)
			io.WriteString(w, "busy")
		case "stall": // 503 whose body stalls after 3 bytes
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(503)
			io.WriteString(w, "abc")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Millisecond):
			}
		case "stream": // 200 streamed slowly
			w.WriteHeader(200)
			for range 5 {
				io.WriteString(w, "chunk")
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		case "reset":
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
		default:
			io.WriteString(w, "ok")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Hundreds of concurrent operations on loopback, under -race, with every
// kind of answer, caller deadlines, cancellations at random points
// (before the call, while the base runs, during drains and pauses, while
// the caller reads the body), checked against the invariants.
func TestAttackConcurrentChaosOnLoopback(t *testing.T) {
	srv := hostileServer(t)
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	budget := otelretry.NewBudget()
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithAttemptTimeout(15*time.Millisecond),
		otelretry.WithDeadline(60*time.Millisecond), otelretry.WithBackoff(otelretry.ExponentialBackoff(time.Millisecond, 10*time.Millisecond)),
		otelretry.WithIdempotentMethods("PUT"), otelretry.WithBudget(budget), otelretry.WithMaxAttempts(4))

	const runs = 600 / raceScale
	modes := []string{"ok", "503", "stall", "stream", "reset", "slow"}
	methods := []string{"GET", "POST", "PUT"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var problems []string
	report := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	closes := make([]atomic.Int32, runs)
	sem := make(chan struct{}, 128)
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer func() {
				if r := recover(); r != nil {
					report("run %d panicked: %v", i, r)
				}
			}()
			mode := modes[rand.IntN(len(modes))]
			method := methods[rand.IntN(len(methods))]
			q := fmt.Sprintf("/?mode=%s&us=%d&ra=%s", mode, rand.IntN(20000), []string{"", "0", "1", "-1", "junk", "99999999999999999999"}[rand.IntN(6)])
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			switch rand.IntN(4) {
			case 0:
				var c2 context.CancelFunc
				ctx, c2 = context.WithTimeout(ctx, time.Duration(rand.IntN(40000))*time.Microsecond)
				defer c2()
			case 1:
				time.AfterFunc(time.Duration(rand.IntN(40000))*time.Microsecond, cancel)
			}
			var body io.ReadCloser
			if method != "GET" {
				body = closeCounter{Reader: strings.NewReader("payload"), closes: &closes[i]}
			}
			req, _ := http.NewRequestWithContext(ctx, method, srv.URL+q, body)
			if body != nil {
				req.Body = body // NewRequest wraps non-ReadClosers; keep ours
				req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("payload")), nil }
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				if resp != nil {
					report("run %d: both a response and an error", i)
				}
				if e := checkError(err); e != nil {
					report("run %d: %v", i, e)
				}
				return
			}
			if rand.IntN(3) == 0 {
				go cancel() // cancel while the caller reads
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	wg.Wait()
	base.CloseIdleConnections()
	// net/http may close a request body after RoundTrip returns; give it
	// a moment, then count.
	deadline := time.Now().Add(2 * time.Second)
	for i := range runs {
		for closes[i].Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	for i := range runs {
		if n := closes[i].Load(); n > 1 {
			report("run %d: the caller's body was closed %d times", i, n)
		}
	}
	spans := rec.Ended()
	var late atomic.Int32
	defer func() { t.Logf("%d attempt spans began past their operation's deadline", late.Load()) }()
	if started := len(rec.Started()); started != len(spans) {
		report("%d spans started, %d ended", started, len(spans))
	}
	for _, op := range spantest.Operations(spans) {
		children := spantest.Attempts(spantest.Children(spans, op))
		if n := attrOf(op, attrs.AttemptsKey).AsInt64(); int(n) != len(children) {
			report("operation: retry.attempts=%d but %d attempt spans", n, len(children))
		}
		limit := time.Duration(attrOf(op, attrs.DeadlineMsKey).AsInt64()+1) * time.Millisecond
		for _, a := range children {
			// The transport's own account: an attempt starts with time left.
			if r := attrOf(a, attrs.RemainingMsKey).AsInt64(); r < 0 {
				report("attempt %d started with remaining_ms=%d", attrOf(a, attrs.AttemptKey).AsInt64(), r)
			}
			// Wall clock, logged only (scheduling under -race adds noise):
			// how far past the deadline the attempt span began.
			if off := a.StartTime().Sub(op.StartTime()); off > limit {
				late.Add(1)
				t.Logf("attempt %d span started %v after the operation, past its deadline %v", attrOf(a, attrs.AttemptKey).AsInt64(), off, limit)
			}
			_, st := spantest.Attr(a, attrs.HTTPResponseStatusCodeKey)
			_, cl := spantest.Attr(a, attrs.ErrorClassKey)
			if st == cl {
				report("attempt span: status %v, error class %v", st, cl)
			}
			if d := attrs.Decision(attrOf(a, attrs.DecisionKey).AsString()); !d.Valid() {
				report("attempt span: decision %q", d)
			}
		}
		if o := attrOf(op, attrs.OutcomeKey).AsString(); o != "return" && op.Status().Code != codes.Error {
			report("operation outcome %s without status Error", o)
		}
	}
	if len(problems) > 0 {
		t.Errorf("%d problems; first ones:\n%s", len(problems), strings.Join(problems[:min(20, len(problems))], "\n"))
	}
}

// The same on virtual time with scripted bases: every step kind, with the
// caller canceling at a random virtual instant, hundreds of operations at
// once; no panic, every error keeps its contract, no body left open, and
// no RoundTrip outlives its deadline.
func TestAttackConcurrentChaosOnVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		steps := []scripted.Step{
			{Status: 503, Body: "x", Delay: 3 * time.Millisecond},
			{Status: 503, Body: "x", Stall: true},
			{Hang: true},
			{Status: 200, Body: "ok", Delay: time.Millisecond},
			{Status: 200, Body: "ok", Stall: true},
			{Err: errors.New("boom"), Delay: 2 * time.Millisecond},
			{Status: 200, AlsoErr: errors.New("both")},
			{NilResponse: true},
			{Status: 429, Header: http.Header{"Retry-After": {"0"}}},
		}
		var wg sync.WaitGroup
		bases := make([]*scripted.Transport, 300/raceScale)
		for i := range 300 / raceScale {
			wg.Add(1)
			go func() {
				defer wg.Done()
				script := make([]scripted.Step, 4)
				for j := range script {
					script[j] = steps[rand.IntN(len(steps))]
				}
				base := scripted.New(script...)
				bases[i] = base
				tr := otelretry.NewTransport(base, otelretry.WithDeadline(100*time.Millisecond),
					otelretry.WithAttemptTimeout(30*time.Millisecond), otelretry.WithMaxAttempts(4),
					otelretry.WithBackoff(otelretry.ConstantBackoff(7*time.Millisecond)))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if i%2 == 0 {
					time.AfterFunc(time.Duration(rand.IntN(120))*time.Millisecond, cancel)
				}
				start := time.Now()
				resp, err := tr.RoundTrip(get(t, ctx, "http://api.test/"))
				if took := time.Since(start); took > 100*time.Millisecond {
					t.Errorf("run %d: RoundTrip took %v with a 100ms deadline", i, took)
				}
				if err != nil {
					if e := checkError(err); e != nil {
						t.Error(e)
					}
				} else {
					readCtx, stop := context.WithTimeout(context.Background(), 5*time.Millisecond)
					go func() { <-readCtx.Done(); resp.Body.Close() }() // unblock a stalled body
					io.Copy(io.Discard, resp.Body)
					stop()
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
		synctest.Wait()
		for i, base := range bases {
			if n := base.OpenBodies(); n != 0 {
				t.Errorf("run %d: %d bodies open", i, n)
			}
		}
	})
}

// Goexit in the base (t.FailNow in a test double): both spans end, nothing
// stays open.
func TestAttackGoexitInTheBase(t *testing.T) {
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

// Cancellation at every virtual millisecond of an operation that goes
// through every stage: a 503 whose body stalls (drain), a pause, a hung
// attempt (attempt timeout), a state check for the write, a 200 whose body
// the caller reads slowly. The caller's cancellation must end RoundTrip
// (or the body read) at that very instant, with outcome canceled.
func TestAttackCancelAtEveryMillisecond(t *testing.T) {
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
func TestAttackDeadlineAtEveryMillisecond(t *testing.T) {
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
