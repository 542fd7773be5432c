// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The operation id is made only when something reports it, and then it is
// one id: on the operation span, every attempt span, the log records and
// the error.
func TestGeneratedOperationIDIsSharedByEverySignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		h := newHarness(t, []scripted.Step{{Status: 503}, {Hang: true}},
			otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
			otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithMaxAttempts(2),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		_, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		var rerr *otelretry.Error
		if !errors.As(err, &rerr) || !strings.HasPrefix(rerr.OperationID, "op-") || len(rerr.OperationID) != len("op-")+16 {
			t.Fatalf("err = %v, want an *Error with a generated id", err)
		}
		id := rerr.OperationID
		if got := attrOf(h.operation(t), attrs.OperationIDKey).AsString(); got != id {
			t.Errorf("operation span id = %q, error id = %q", got, id)
		}
		for i, e := range h.events(t) {
			if e.OperationID != id || e.RequestID != otelretry.RequestID(id, i+1) {
				t.Errorf("attempt %d: ids %q %q, want %q", i+1, e.OperationID, e.RequestID, id)
			}
		}
		dec := json.NewDecoder(&logs)
		for n := 0; dec.More(); n++ {
			var r map[string]any
			if err := dec.Decode(&r); err != nil {
				t.Fatal(err)
			}
			if r["retry.operation.id"] != id {
				t.Errorf("log record %d has id %v, want %q", n+1, r["retry.operation.id"], id)
			}
		}
	})
}

// With no-op providers nothing records the id, but an error still has one:
// the caller's, or a generated one.
func TestErrorsCarryTheOperationIDWithNoopProviders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := otelretry.NewTransport(scripted.New(scripted.Step{Status: 503}),
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()), otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
			otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithDeadline(100*time.Millisecond))
		for _, ctx := range []context.Context{t.Context(), otelretry.WithOperationID(t.Context(), "op-given")} {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := tr.RoundTrip(get(t, ctx, "http://api.test/"))
			var rerr *otelretry.Error
			if !errors.As(err, &rerr) || rerr.Outcome != attrs.OutcomeCanceled {
				t.Fatalf("err = %v, want canceled", err)
			}
			want, given := otelretry.OperationIDFromContext(ctx)
			if given && rerr.OperationID != want || !given && !strings.HasPrefix(rerr.OperationID, "op-") {
				t.Errorf("error id = %q (given %q)", rerr.OperationID, want)
			}
		}
	})
}

// redirectSteps is a scripted chain: each hop answers 307 to the next
// after delay, the last 200.
func redirectSteps(hops int, delay time.Duration) []scripted.Step {
	var steps []scripted.Step
	for i := 1; i < hops; i++ {
		steps = append(steps, scripted.Step{Delay: delay, Status: http.StatusTemporaryRedirect,
			Header: http.Header{"Location": {"/hop-" + string(rune('0'+i))}}})
	}
	return append(steps, scripted.Step{Delay: delay, Status: 200})
}

// The hops of a redirect chain stay inside one operation's contract: one
// operation span each, the shared operation id, attempt numbers and
// request ids counting on across hops, the attempt limit per hop, and the
// deadline measured from the first hop.
func TestRedirectChainIsOneOperationContract(t *testing.T) {
	t.Run("deadline from the first hop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, redirectSteps(4, 250*time.Millisecond), otelretry.WithDeadline(400*time.Millisecond))
			start := time.Now()
			ctx := otelretry.WithOperationID(t.Context(), "op-redirect")
			resp, err := h.client.Do(get(t, ctx, "http://api.test/start"))
			if err == nil {
				resp.Body.Close()
				t.Fatal("a 4-hop chain of 250ms hops beat a 400ms deadline")
			}
			if took := time.Since(start); took != 400*time.Millisecond {
				t.Errorf("the chain took %v, want 400ms (the first hop's deadline)", took)
			}
			var ids []string
			for _, e := range h.events(t) {
				ids = append(ids, e.RequestID)
			}
			if strings.Join(ids, ",") != "op-redirect/attempt-1,op-redirect/attempt-2" {
				t.Errorf("request ids = %v, want attempt-1 then attempt-2", ids)
			}
		})
	})
	t.Run("ids count on across hops", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			steps := []scripted.Step{{Status: 503}, {Status: 503}, {Status: 307, Header: http.Header{"Location": {"/next"}}}, {Status: 200}}
			h := newHarness(t, steps, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			ctx := otelretry.WithOperationID(t.Context(), "op-42")
			resp, err := h.client.Do(get(t, ctx, "http://api.test/start"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			ev := h.events(t)
			if len(ev) != 4 || ev[3].RequestID != "op-42/attempt-4" || ev[3].Attempt != 4 {
				t.Fatalf("events = %+v, want the second hop's first call to be op-42/attempt-4", ev)
			}
			ops := spantest.Operations(h.ended())
			if len(ops) != 2 {
				t.Fatalf("operation spans = %d, want one per hop", len(ops))
			}
			for _, op := range ops {
				if attrOf(op, attrs.OperationIDKey).AsString() != "op-42" {
					t.Errorf("hop with operation id %q", attrOf(op, attrs.OperationIDKey).AsString())
				}
				_, marked := spantest.Attr(op, attrs.RedirectsKey)
				if hops := attrOf(op, attrs.AttemptsKey).AsInt64(); marked != (hops == 1) {
					t.Errorf("hop with %d attempts: redirect marker %v", hops, marked)
				}
				if _, repeat := spantest.Attr(op, attrs.RepeatKey); repeat {
					t.Errorf("a redirect hop is marked as a repeat")
				}
			}
		})
	})
	t.Run("without an operation id, the chain shares the generated one", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, redirectSteps(3, time.Millisecond))
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/start"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			ev := h.events(t)
			if len(ev) != 3 || ev[0].OperationID != ev[2].OperationID || ev[2].RequestID != ev[0].OperationID+"/attempt-3" {
				t.Fatalf("events = %+v, want one id across the chain, attempts 1 to 3", ev)
			}
		})
	})
}

// A redirect chain with retries and slow hops, on virtual time: attempt
// numbers and request ids keep counting, every hop shares the id, and no
// hop runs past the deadline taken from the first hop.
func TestRedirectChainWithRetriesAndSlowHopsKeepsCountingWithinTheFirstDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		seen := map[string]int{}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			seen[r.URL.Path]++
			n := seen[r.URL.Path]
			mu.Unlock()
			timer := time.NewTimer(120 * time.Millisecond) // every answer takes 120ms
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
			resp := &http.Response{Header: http.Header{}, Body: http.NoBody, Request: r}
			switch {
			case n == 1 && r.URL.Path == "/a":
				resp.StatusCode = 503
			case r.URL.Path == "/a":
				resp.StatusCode, resp.Header["Location"] = 302, []string{"/b"}
			case r.URL.Path == "/b":
				resp.StatusCode, resp.Header["Location"] = 302, []string{"/c"}
			case r.URL.Path == "/c":
				resp.StatusCode, resp.Header["Location"] = 302, []string{"/d"}
			default:
				resp.StatusCode = 200
			}
			return resp, nil
		})
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
			otelretry.WithDeadline(400*time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))}
		start := time.Now()
		ctx := otelretry.WithOperationID(t.Context(), "op-r")
		resp, err := client.Do(get(t, ctx, "http://api.test/a"))
		if resp != nil {
			resp.Body.Close()
		}
		took := time.Since(start)
		if took > 400*time.Millisecond {
			t.Errorf("the chain took %v under a 400ms deadline", took)
		}
		if err == nil {
			t.Errorf("a 5-call chain of 120ms calls cannot finish in 400ms, yet err is nil")
		}
		var ids []string
		for _, s := range spantest.Attempts(rec.Ended()) {
			ids = append(ids, attrOf(s, attrs.RequestIDKey).AsString())
		}
		for i, id := range ids {
			if want := fmt.Sprintf("op-r/attempt-%d", i+1); id != want {
				t.Errorf("request ids = %v; want consecutive", ids)
				break
			}
		}
	})
}

// An operation that repeats an earlier one under the same context (an
// outer retry layer, a loop) is marked, with or without WithOperationID;
// a redirect hop is not.
func TestRepeatedOperationsAreMarked(t *testing.T) {
	for _, tie := range []string{"WithOperationID", "parent span", "parent span, otelhttp above", "a caller's CLIENT span around the call"} {
		t.Run(tie, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Status: 500}}, otelretry.WithMaxAttempts(1))
				if tie == "parent span, otelhttp above" {
					// otelhttp's CLIENT span, a new one per try and on each
					// try's headers, is the span around each RoundTrip: the
					// tries' parent is above it.
					h.client.Transport = otelhttp.NewTransport(h.transprt, otelhttp.WithTracerProvider(h.tp),
						otelhttp.WithPropagators(propagation.TraceContext{}))
				}
				ctx := t.Context()
				switch tie {
				case "WithOperationID":
					ctx = otelretry.WithOperationID(ctx, "op-order")
				case "a caller's CLIENT span around the call":
					// Its tries share it (a root here): they are counted
					// under it, not under its (missing) parent.
					var call trace.Span
					ctx, call = h.tp.Tracer("caller").Start(ctx, "reserve", trace.WithSpanKind(trace.SpanKindClient))
					defer call.End()
				default:
					var parent trace.Span
					ctx, parent = h.tp.Tracer("caller").Start(ctx, "caller")
					defer parent.End()
				}
				for range 3 { // an outer layer resending the POST
					resp, err := h.client.Do(post(t, ctx, "http://api.test/orders", "x"))
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				if repeats := repeatsOf(h); len(repeats) != 3 || repeats[0] != 0 || repeats[1] != 1 || repeats[2] != 2 {
					t.Fatalf("retry.operation.repeat = %v, want absent, 1, 2", repeats)
				}
			})
		})
	}
}

// Two different calls a handler makes, each once and each under a CLIENT
// span of its own that the request does not carry (a caller's own span
// around a call), are no repeats of each other; two otelhttp CLIENT spans
// above, without a propagator to put them on the wire, cannot be told
// from them, and are not marked either (the counter may miss a repeat,
// never invent one). Before, any CLIENT span was taken for a per-try span
// of an instrumentation: its parent's operations were counted together.
func TestCallsUnderClientSpansOfTheirOwnAreNoRepeats(t *testing.T) {
	for _, via := range []string{"a caller's CLIENT span each", "otelhttp above, no propagator"} {
		t.Run(via, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Status: 201}})
			if via == "otelhttp above, no propagator" {
				h.client.Transport = otelhttp.NewTransport(h.transprt, otelhttp.WithTracerProvider(h.tp),
					otelhttp.WithPropagators(propagation.NewCompositeTextMapPropagator()))
			}
			ctx, handler := h.tp.Tracer("server").Start(t.Context(), "POST /checkout", trace.WithSpanKind(trace.SpanKindServer))
			defer handler.End()
			// The same request twice (method and path), so that only the
			// CLIENT spans tell the calls apart.
			for _, item := range []string{"sku-1", "sku-2"} {
				callCtx := ctx
				if via == "a caller's CLIENT span each" {
					var call trace.Span
					callCtx, call = h.tp.Tracer("caller").Start(ctx, "reserve "+item, trace.WithSpanKind(trace.SpanKindClient))
					defer call.End()
				}
				resp, err := h.client.Do(post(t, callCtx, "http://api.test/inventory.reserve", item))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			for _, op := range spantest.Operations(h.ended()) {
				if v, ok := spantest.Attr(op, attrs.RepeatKey); ok {
					t.Errorf("%s: retry.operation.repeat = %d, want none: each call was sent once", op.Name(), v.AsInt64())
				}
			}
		})
	}
}

// Calls a handler makes at once under its span, each sent once (a
// fan-out of creates: the same method and URL, different bodies), are no
// repeats of each other: an outer layer sends its next try once the one
// before returned. Nor is a call of another request under the same span,
// made after the first ended. Before, every operation under the span
// counted: 8 concurrent creates carried repeat 1 to 7.
func TestCallsAtOnceUnderOneSpanAreNoRepeats(t *testing.T) {
	h := newHarness(t, nil)
	var inFlight sync.WaitGroup
	inFlight.Add(8)
	h.client.Transport = otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/vector_stores" {
			inFlight.Done()
			inFlight.Wait() // all 8 are in flight together
		}
		return &http.Response{StatusCode: 201, Body: http.NoBody, Request: r}, nil
	}), otelretry.WithTracerProvider(h.tp))
	ctx, handler := h.tp.Tracer("server").Start(t.Context(), "POST /ingest", trace.WithSpanKind(trace.SpanKindServer))
	defer handler.End()
	var calls sync.WaitGroup
	for i := range 8 {
		calls.Go(func() {
			resp, err := h.client.Do(post(t, ctx, "http://api.test/vector_stores", fmt.Sprintf("store-%d", i)))
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	calls.Wait()
	resp, err := h.client.Do(post(t, ctx, "http://api.test/files", "file"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, op := range spantest.Operations(h.ended()) {
		if v, ok := spantest.Attr(op, attrs.RepeatKey); ok {
			t.Errorf("%s %s: retry.operation.repeat = %d, want none: each call was sent once", op.Name(), attrOf(op, "url.full").AsString(), v.AsInt64())
		}
	}
}

// Operations made at once under one WithOperationID context are each
// counted once (run it under -race): their repeat counts
// (retry.operation.repeat) are 0 to 199, each once.
func TestConcurrentOperationsUnderOneOperationIDAreCountedOnceEach(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Status: 200}})
	ctx := otelretry.WithOperationID(context.Background(), "op-shared")
	var wg sync.WaitGroup
	var fails atomic.Int32
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := h.transprt.RoundTrip(get(t, ctx, "http://api.test/"))
			if err != nil {
				fails.Add(1)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, op := range spantest.Operations(h.ended()) {
		v, ok := spantest.Attr(op, attrs.RepeatKey)
		n := int64(0)
		if ok {
			n = v.AsInt64()
		}
		if seen[n] {
			t.Errorf("retry.operation.repeat=%d twice", n)
		}
		seen[n] = true
	}
	if len(seen) != 200 || fails.Load() != 0 {
		t.Errorf("%d distinct repeat counts, %d failures", len(seen), fails.Load())
	}
}

// A call made from a PrepareAttemptFunc with an Intent of its own honours it: a
// token fetch under Intent{MaxAttempts: 1}, answered 503, is executed once,
// and the operation it prepared ends prepare_failed with the fetch's
// answer unsent to its own server.
func TestCallFromAPrepareFuncHonoursItsOwnIntent(t *testing.T) {
	var tokens, orders atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			tokens.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		orders.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	errNoToken := errors.New("no token")
	var client *http.Client
	fetchToken := func(r *http.Request, n int) error {
		if r.URL.Path == "/token" {
			return nil
		}
		ctx := otelretry.WithIntent(r.Context(), otelretry.Intent{MaxAttempts: 1})
		resp, err := client.Do(get(t, ctx, srv.URL+"/token"))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errNoToken
		}
		return nil
	}
	client = &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithPrepareAttempt(fetchToken), otelretry.WithoutBudget(),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
	_, err := client.Do(get(t, t.Context(), srv.URL+"/items"))
	var oe *otelretry.Error
	if !errors.As(err, &oe) || oe.Reason != attrs.ReasonPrepareFailed || !errors.Is(err, errNoToken) {
		t.Fatalf("err = %v, want prepare_failed with the token fetch's error", err)
	}
	if n, m := tokens.Load(), orders.Load(); n != 1 || m != 0 {
		t.Errorf("token fetched %d times, items %d; want 1 (its MaxAttempts) and 0", n, m)
	}
}

// Every hook that is handed a context of the operation makes calls of
// their own with it: a Classifier and a Backoff through
// Answer.Request's context, a base below through its request's. Each call,
// under its own Intent{NoRetry: true}, WithOperationID and result slot,
// is sent once (its server answers 503), under that id, reported to its
// slot alone; the calling operation's slot gets the calling operation
// alone.
func TestCallFromEveryHookHonoursWhatTheHookGaveIt(t *testing.T) {
	type hookCall func(ctx context.Context)
	cases := []struct {
		name string
		opts func(call hookCall) []otelretry.Option
		base func(h *harness, call hookCall) http.RoundTripper // nil: the harness's
	}{
		{name: "a Classifier", opts: func(call hookCall) []otelretry.Option {
			return []otelretry.Option{otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				call(a.Request.Context())
				return otelretry.Classification{}
			})}
		}},
		{name: "a Backoff", opts: func(call hookCall) []otelretry.Option {
			return []otelretry.Option{otelretry.WithBackoff(otelretry.Backoff(func(_ int, a otelretry.Answer) time.Duration {
				call(a.Request.Context())
				return time.Millisecond
			}))}
		}},
		{name: "a base below", opts: func(hookCall) []otelretry.Option { return nil }, base: func(h *harness, call hookCall) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				call(r.Context())
				return h.base.RoundTrip(r)
			})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				side := newHarness(t, []scripted.Step{{Status: 503}})
				var slot otelretry.Results
				calls := 0
				call := func(ctx context.Context) {
					calls++
					ctx = otelretry.WithIntent(ctx, otelretry.Intent{NoRetry: true})
					ctx = otelretry.WithResults(otelretry.WithOperationID(ctx, fmt.Sprintf("side-%d", calls)), &slot)
					resp, err := side.client.Do(get(t, ctx, "http://side.test/lookup"))
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				}
				h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
					append([]otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, tc.opts(call)...)...)
				rt := http.RoundTripper(h.transprt)
				if tc.base != nil {
					rt = otelretry.NewTransport(tc.base(h, call), otelretry.WithTracerProvider(h.tp),
						otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
				}
				var caller otelretry.Results
				ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "op-outer"), &caller)
				ctx = otelretry.WithIntent(ctx, otelretry.Intent{MaxAttempts: 2})
				resp, err := rt.RoundTrip(get(t, ctx, "http://api.test/items"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				ops := slot.Operations()
				if calls == 0 || len(side.base.Calls()) != calls || len(ops) != calls {
					t.Fatalf("%d hook calls, %d sent, %d results; want each sent once and reported once", calls, len(side.base.Calls()), len(ops))
				}
				for i, op := range ops {
					if op.OperationID != fmt.Sprintf("side-%d", i+1) || op.Attempts != 1 || op.Reason != attrs.ReasonIntent {
						t.Errorf("call %d: %+v; want side-%d, one attempt, stopped by its intent", i+1, op, i+1)
					}
				}
				if got := caller.Operations(); len(got) != 1 || got[0].OperationID != "op-outer" || got[0].Attempts != 2 {
					t.Errorf("the caller's slot holds %+v, want the calling read alone, 2 attempts", got)
				}
			})
		})
	}
}

// A call made from a hook that adds nothing to its context inherits
// nothing of the calling operation: not its intent (the token fetch
// retries its 503 under the Transport's limit, where the calling read
// allows one attempt), not its id (a generated one), not its result slot.
func TestCallFromAHookThatAddsNothingInheritsNothing(t *testing.T) {
	var tokens atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" && tokens.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	var client *http.Client
	fetchToken := func(r *http.Request, n int) error {
		if r.URL.Path == "/token" {
			return nil
		}
		resp, err := client.Do(get(t, r.Context(), srv.URL+"/token"))
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	client = &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithPrepareAttempt(fetchToken), otelretry.WithoutBudget(),
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
	var results otelretry.Results
	ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "op-outer"), &results)
	ctx = otelretry.WithIntent(ctx, otelretry.Intent{MaxAttempts: 1})
	resp, err := client.Do(get(t, ctx, srv.URL+"/items"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := tokens.Load(); n != 2 {
		t.Errorf("token fetched %d times, want 2: the calling read's MaxAttempts 1 is not the fetch's", n)
	}
	if ops := results.Operations(); len(ops) != 1 || ops[0].OperationID != "op-outer" {
		t.Errorf("the caller's slot holds %+v, want the calling read alone", ops)
	}
	ids := map[string]bool{}
	for _, op := range spantest.Operations(rec.Ended()) {
		ids[attrOf(op, attrs.OperationIDKey).AsString()] = true
	}
	delete(ids, "op-outer")
	for id := range ids {
		if !strings.HasPrefix(id, "op-") || len(ids) != 1 {
			t.Errorf("operation ids besides the caller's: %v, want the fetch's generated one alone", ids)
		}
	}
}

// A call made from a PrepareAttemptFunc through the same client (a token refresh)
// is an operation of its own: it takes neither the operation id, the
// Results slot nor a repeat marker from the calling operation, whose
// attempts stay numbered 1, 2 and whose count of writes on the wire is its
// own.
func TestCallFromAPrepareFuncIsItsOwnOperation(t *testing.T) {
	var orders atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			io.WriteString(w, "tok")
			return
		}
		if orders.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var client *http.Client
	refresh := func(r *http.Request, n int) error {
		if r.URL.Path == "/token" {
			return nil // the token call itself needs none
		}
		tr, err := client.Do(get(t, r.Context(), srv.URL+"/token"))
		if err != nil {
			return err
		}
		tok, _ := io.ReadAll(tr.Body)
		tr.Body.Close()
		r.Header.Set("Authorization", "Bearer "+string(tok))
		return nil
	}
	client = &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithPrepareAttempt(refresh),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
	var results otelretry.Results
	ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "op-1"), &results)
	resp, err := client.Do(get(t, ctx, srv.URL+"/items"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	var own []string
	for _, a := range spantest.Attempts(rec.Ended()) {
		id := attrOf(a, attrs.RequestIDKey).AsString()
		if attrOf(a, attrs.OperationIDKey).AsString() == "op-1" {
			own = append(own, id)
			if w := attrOf(a, attrs.WireWritesKey).AsInt64(); w != 1 {
				t.Errorf("%s: retry.wire.writes = %d, want 1: the token call's writes were counted", id, w)
			}
		}
	}
	if fmt.Sprint(own) != "[op-1/attempt-1 op-1/attempt-2]" {
		t.Errorf("the operation's attempts are %v, want [op-1/attempt-1 op-1/attempt-2]", own)
	}
	for _, op := range spantest.Operations(rec.Ended()) {
		if _, ok := spantestAttr(op, attrs.RepeatKey); ok {
			t.Errorf("operation %s carries retry.operation.repeat: a call from a hook counted as a repeat", attrOf(op, attrs.OperationIDKey).AsString())
		}
	}
	if ops := results.Operations(); len(ops) != 1 || ops[0].OperationID != "op-1" {
		t.Errorf("results = %+v, want the calling operation alone", ops)
	}
}

// redirectChainThrough runs a 4-hop chain of 250ms hops under
// WithDeadline(400ms) through an http.Client whose transport is
// above(otelretry over below(the scripted base)), and returns how long the
// client took, its error, and the operation spans.
func redirectChainThrough(t *testing.T, above, below func(http.RoundTripper, *sdktrace.TracerProvider) http.RoundTripper) (time.Duration, error, []sdktrace.ReadOnlySpan) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	rt := otelretry.NewTransport(below(scripted.New(redirectSteps(4, 250*time.Millisecond)...), tp),
		otelretry.WithTracerProvider(tp), otelretry.WithDeadline(400*time.Millisecond))
	client := &http.Client{Transport: above(rt, tp)}
	start := time.Now()
	resp, err := client.Do(get(t, t.Context(), "http://api.test/start"))
	if resp != nil {
		resp.Body.Close()
	}
	return time.Since(start), err, spantest.Operations(rec.Ended())
}

// A redirect chain keeps one operation contract (the first hop's
// deadline, one operation id, retry.redirects on the later hops) whatever
// layer stands between http.Client and otelretry. Before, otelhttp above
// otelretry hid the chain (it wraps the body, where the chain was kept):
// each hop was an operation of its own, with a deadline of its own, and
// the 400ms chain took 1s.
func TestARedirectChainThroughOtelhttpAboveIsOneOperation(t *testing.T) {
	same := func(rt http.RoundTripper, _ *sdktrace.TracerProvider) http.RoundTripper { return rt }
	instrumented := func(rt http.RoundTripper, tp *sdktrace.TracerProvider) http.RoundTripper {
		return otelhttp.NewTransport(rt, otelhttp.WithTracerProvider(tp))
	}
	for name, layers := range map[string][2]func(http.RoundTripper, *sdktrace.TracerProvider) http.RoundTripper{
		"otelretry alone":          {same, same},
		"otelretry above otelhttp": {same, instrumented},
		"otelhttp above otelretry": {instrumented, same},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				took, err, ops := redirectChainThrough(t, layers[0], layers[1])
				if err == nil || took != 400*time.Millisecond {
					t.Errorf("a 4-hop chain of 250ms hops under a 400ms deadline: took %v, err %v; want it cut at 400ms", took, err)
				}
				if len(ops) != 2 {
					t.Fatalf("%d operation spans, want 2 hops within 400ms", len(ops))
				}
				if a, b := attrOf(ops[0], attrs.OperationIDKey).AsString(), attrOf(ops[1], attrs.OperationIDKey).AsString(); a != b {
					t.Errorf("hops under operation ids %q and %q, want one", a, b)
				}
				if _, marked := spantest.Attr(ops[1], attrs.RedirectsKey); !marked {
					t.Errorf("the second hop carries no %s", attrs.RedirectsKey)
				}
			})
		})
	}
}

// A request the caller builds again from a finished chain's last
// resp.Request (to ask the final URL again later) carries the Response of
// the hop before, which a hop already followed: it is an operation of its
// own, not a hop of the finished chain, whatever the chain ended on (a
// 200, a 404, a 503 after retries). Before, it took that chain's id and
// its deadline, long passed, and failed after 0 attempts (after a 404 or a
// 503 also under a version of the rule that let a chain be followed until
// a hop was answered below 400).
func TestARequestBuiltAgainFromAFinishedChainIsNotItsNextHop(t *testing.T) {
	for name, last := range map[string]int{"200": http.StatusOK, "404": http.StatusNotFound, "503 after retries": http.StatusServiceUnavailable} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				steps := []scripted.Step{{Delay: time.Millisecond, Status: http.StatusTemporaryRedirect, Header: http.Header{"Location": {"/hop-1"}}}}
				if last == http.StatusServiceUnavailable {
					steps = append(steps, scripted.Step{Status: last}, scripted.Step{Status: last}) // hop-1: 3 attempts, all 503
				}
				steps = append(steps, scripted.Step{Status: last}, scripted.Step{Status: 200}) // then the request asked again
				h := newHarness(t, steps, otelretry.WithDeadline(400*time.Millisecond),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
				resp, err := h.client.Do(get(t, t.Context(), "http://api.test/start"))
				if err != nil || resp.StatusCode != last {
					t.Fatalf("the chain ended %v, %v; want %d", resp, err, last)
				}
				resp.Body.Close()
				time.Sleep(time.Second) // the chain's deadline passed; the caller asks again
				again, err := h.client.Do(resp.Request.Clone(t.Context()))
				if err != nil {
					t.Fatalf("the request built again from the finished chain's resp.Request failed: %v", err)
				}
				again.Body.Close()
				ops := spantest.Operations(h.ended())
				if len(ops) != 3 {
					t.Fatalf("%d operation spans, want 3", len(ops))
				}
				if attrOf(ops[2], attrs.OperationIDKey).AsString() == attrOf(ops[0], attrs.OperationIDKey).AsString() {
					t.Errorf("the request built again ran under the finished chain's operation id")
				}
				if _, marked := spantest.Attr(ops[2], attrs.RedirectsKey); marked {
					t.Errorf("the request built again is marked as a redirect hop")
				}
			})
		})
	}
}

// sendAgainOnce is a layer between http.Client and otelretry that sends
// the hop request it was handed again, once, when again says so of the
// first try (an error, a 503 otelretry returned after its own retries), as
// go-retryablehttp's RoundTripper or any retrying middleware does.
type sendAgainOnce struct {
	next  http.RoundTripper
	again func(*http.Response, error) bool
}

func (r sendAgainOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if !r.again(resp, err) {
		return resp, err
	}
	if resp != nil {
		resp.Body.Close()
	}
	return r.next.RoundTrip(req)
}

func failed(_ *http.Response, err error) bool { return err != nil }

func answered503(resp *http.Response, err error) bool {
	return err == nil && resp.StatusCode == http.StatusServiceUnavailable
}

// A hop that failed and that a layer above sends again is a try of that
// layer's, an operation of its own with a deadline of its own, as every try
// of a layer above is (docs/layers.md): the chain is followed once, and no
// request can be told to be the one that followed it again (net/http forks
// and otelhttp clones the request it sends).
func TestAHopSentAgainByALayerAboveIsAnOperationOfItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := scripted.New(
			scripted.Step{Delay: 250 * time.Millisecond, Status: http.StatusTemporaryRedirect, Header: http.Header{"Location": {"/hop-1"}}},
			scripted.Step{Delay: time.Second, Status: 200}, // cut by the chain's deadline at 400ms
			scripted.Step{Delay: 100 * time.Millisecond, Status: 200},
		)
		rec := tracetest.NewSpanRecorder()
		client := &http.Client{Transport: sendAgainOnce{otelretry.NewTransport(base, otelretry.WithDeadline(400*time.Millisecond),
			otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))), failed}}
		start := time.Now()
		resp, err := client.Do(get(t, t.Context(), "http://api.test/start"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if took := time.Since(start); took != 500*time.Millisecond || len(base.Calls()) != 3 {
			t.Errorf("took %v, %d calls; want the resend sent, at 400ms, and answered at 500ms", took, len(base.Calls()))
		}
		ops := spantest.Operations(rec.Ended())
		if len(ops) != 3 || attrOf(ops[1], attrs.OperationIDKey) != attrOf(ops[0], attrs.OperationIDKey) ||
			attrOf(ops[2], attrs.OperationIDKey) == attrOf(ops[0], attrs.OperationIDKey) {
			t.Errorf("%d operations; want the hop in the chain, and its resend under an id of its own", len(ops))
		}
	})
}

// Two requests that carry the same redirect response at once (two
// goroutines asking the hop): the first continues the chain, the other
// starts anew, and neither writes the first hop's operation id, which the
// chain made when it began (before, both took the chain and made that id
// lazily on the first hop's identity: a data race under -race).
func TestTwoRequestsFollowingOneRedirectAtOnceDoNotRace(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	rt := otelretry.NewTransport(roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Path == "/start" {
			return &http.Response{StatusCode: http.StatusTemporaryRedirect, Header: http.Header{"Location": {"/hop-1"}}, Body: http.NoBody, Request: req}, nil
		}
		arrived.Done()
		arrived.Wait() // both followers are in flight: neither is answered yet
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
	}), otelretry.WithTracerProvider(tracenoop.NewTracerProvider())) // no recording: no id made by the telemetry
	var first otelretry.Results
	redir, err := rt.RoundTrip(get(t, otelretry.WithResults(context.Background(), &first), "http://api.test/start"))
	if err != nil {
		t.Fatal(err)
	}
	redir.Body.Close()
	chainID := first.Operations()[0].OperationID
	var wg sync.WaitGroup
	results := make([]otelretry.Results, 2)
	for i := range results {
		hop := get(t, otelretry.WithResults(context.Background(), &results[i]), "http://api.test/hop-1")
		hop.Response = redir // as http.Client sets it
		wg.Go(func() {
			if resp, err := rt.RoundTrip(hop); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	a, _ := results[0].Last()
	b, _ := results[1].Last()
	if (a.OperationID == chainID) == (b.OperationID == chainID) {
		t.Errorf("the hops ran under %q and %q; want one under the chain's %q, the other anew", a.OperationID, b.OperationID, chainID)
	}
}

// A hop a layer above sends again after otelretry returned its 503 records
// every retry.request.id once: the resend is an operation of its own (a
// version of the chain's rule that kept the resend in the chain numbered
// its attempts from the hop's first number, and recorded one id twice).
func TestAHopSentAgainByALayerAboveKeepsItsRequestIDsUnique(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{
			{Status: http.StatusTemporaryRedirect, Header: http.Header{"Location": {"/hop-1"}}},
			{Status: 503}, {Status: 503}, // hop-1, first send: 2 attempts
			{Status: 200}, // hop-1, sent again by the layer above
		}, otelretry.WithMaxAttempts(2), otelretry.WithDeadline(time.Minute),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		resp, err := (&http.Client{Transport: sendAgainOnce{h.transprt, answered503}}).Do(get(t, t.Context(), "http://api.test/start"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		seen := map[string]int{}
		for _, a := range h.attempts() {
			seen[attrOf(a, attrs.RequestIDKey).AsString()]++
		}
		if len(seen) != 4 {
			t.Errorf("request ids %v, want 4, each once", seen)
		}
	})
}

// A hook's call is an operation of its own, with an id of its own: its own
// hooks are not told the calling operation's id (OperationIDFromContext),
// so a PrepareAttemptFunc that sends RequestID(id, n) as X-Request-Id
// never sends the caller's request id for another operation's attempt.
func TestAHooksCallsHooksAreNotToldTheCallersOperationID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		sent := map[string][]string{} // by path: the X-Request-Id values on the wire
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			sent[r.URL.Path] = append(sent[r.URL.Path], r.Header.Get("X-Request-Id"))
			mu.Unlock()
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		var client *http.Client
		prepare := func(r *http.Request, n int) error {
			if id, ok := otelretry.OperationIDFromContext(r.Context()); ok {
				r.Header.Set("X-Request-Id", otelretry.RequestID(id, n))
			}
			if r.URL.Path == "/token" {
				return nil
			}
			resp, err := client.Do(get(t, r.Context(), "http://auth.test/token"))
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		client = &http.Client{Transport: otelretry.NewTransport(base, quietOptions(otelretry.WithPrepareAttempt(prepare))...)}
		resp, err := client.Do(get(t, otelretry.WithOperationID(t.Context(), "op-outer"), "http://api.test/items"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		mu.Lock()
		defer mu.Unlock()
		if got := sent["/items"]; len(got) != 1 || got[0] != "op-outer/attempt-1" {
			t.Errorf("the caller's attempt went out with X-Request-Id %q", got)
		}
		if got := sent["/token"]; len(got) != 1 || got[0] != "" {
			t.Errorf("the hook's call, under no id of its own, went out with X-Request-Id %q, want none", got)
		}
	})
}

// A layer above that may send a write twice (an SDK's retryer) gives its
// tries one id with EnsureOperationID, at the top and in a hook's call
// alike, so that they share one idempotency key: in a hook's context the
// calling operation's id, which its calls do not take, does not count as
// theirs (OperationIDFromContext's ok there made the layer add none, and
// each try had a key of its own).
func TestALayerAboveInAHookGivesItsTriesOneKey(t *testing.T) {
	for _, fromHook := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			var keys []string
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				status := http.StatusOK
				if r.URL.Path == "/token" {
					mu.Lock()
					if keys = append(keys, r.Header.Get("Idempotency-Key")); len(keys) == 1 {
						status = http.StatusServiceUnavailable
					}
					mu.Unlock()
				}
				return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			tokens := &http.Client{Transport: otelretry.NewTransport(base, quietOptions(
				otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithMaxAttempts(1))...)}
			layerAbove := func(ctx context.Context) { // two tries, the second after a 503
				ctx = otelretry.EnsureOperationID(ctx)
				for range 2 {
					resp, err := tokens.Do(post(t, ctx, "http://auth.test/token", `{"grant_type":"client_credentials"}`))
					if err != nil {
						t.Fatal(err)
					}
					if resp.Body.Close(); resp.StatusCode < 500 {
						return
					}
				}
			}
			ctx := otelretry.WithOperationID(t.Context(), "op-outer")
			if !fromHook {
				layerAbove(ctx)
			} else {
				client := &http.Client{Transport: otelretry.NewTransport(base, quietOptions(otelretry.WithPrepareAttempt(
					func(r *http.Request, _ int) error { layerAbove(r.Context()); return nil }))...)}
				resp, err := client.Do(get(t, ctx, "http://api.test/items"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
				t.Errorf("from a hook %v: the layer's two tries of one write went out under keys %q, want one", fromHook, keys)
			}
		})
	}
}

// A hook's call's state check is told the call's own id, or none, as its
// other hooks are: never the calling operation's (before: the outer
// "op-outer", through the context the check's lookup derives from).
func TestAHooksCallsStateCheckIsNotToldTheCallersOperationID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var told []string
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPost {
				io.Copy(io.Discard, r.Body)
				<-r.Context().Done() // written, never answered: an unknown outcome
				return nil, r.Context().Err()
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		inner := &http.Client{Transport: otelretry.NewTransport(base, quietOptions(
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithMaxAttempts(1),
			otelretry.WithStateCheck(func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
				id, _ := otelretry.OperationIDFromContext(ctx)
				told = append(told, id)
				return otelretry.StateResult{State: attrs.StateUnknown}, nil
			}))...)}
		outer := &http.Client{Transport: otelretry.NewTransport(base, quietOptions(otelretry.WithPrepareAttempt(
			func(r *http.Request, _ int) error {
				if resp, err := inner.Do(post(t, r.Context(), "http://api.test/orders", "order")); err == nil {
					resp.Body.Close()
				}
				return nil
			}))...)}
		resp, err := outer.Do(get(t, otelretry.WithOperationID(t.Context(), "op-outer"), "http://api.test/items"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(told) != 1 || told[0] != "" {
			t.Errorf("the hook's call's state check was told the ids %q, want none", told)
		}
	})
}

// net/http reads a request without a Method as a GET, and so does every
// other part of otelretry: the same GET sent once without a Method and
// once with one is a repeat.
func TestARequestWithoutAMethodRepeatsTheSameGET(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Status: 500}}, otelretry.WithMaxAttempts(1))
	ctx, parent := h.tp.Tracer("caller").Start(t.Context(), "caller")
	defer parent.End()
	for _, m := range []string{"", http.MethodGet} {
		req := get(t, ctx, "http://api.test/orders")
		req.Method = m
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if repeats := repeatsOf(h); len(repeats) != 2 || repeats[1] != 1 {
		t.Errorf("retry.operation.repeat = %v, want [0 1]: both are GET /orders under one span", repeats)
	}
}

// repeatsOf is each ended operation's retry.operation.repeat, in order.
func repeatsOf(h *harness) []int64 {
	var repeats []int64
	for _, op := range spantest.Operations(h.ended()) {
		repeats = append(repeats, attrOf(op, attrs.RepeatKey).AsInt64())
	}
	return repeats
}
