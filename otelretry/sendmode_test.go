// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// sent is what a capturing base saw of one request.
type sent struct {
	header     http.Header
	sameHeader bool // the attempt carried the caller's header map itself
}

// capture is a base transport answering with statuses in turn (the last
// one for ever) and recording each request.
type capture struct {
	mu       sync.Mutex
	statuses []int
	caller   http.Header // the caller's header map, to detect copies
	sent     []sent
}

func (c *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	c.sent = append(c.sent, sent{
		header:     req.Header.Clone(),
		sameHeader: reflect.ValueOf(req.Header).UnsafePointer() == reflect.ValueOf(c.caller).UnsafePointer(),
	})
	code := c.statuses[min(len(c.sent), len(c.statuses))-1]
	return &http.Response{StatusCode: code, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: req}, nil
}

func (c *capture) calls() []sent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sent(nil), c.sent...)
}

// opaqueMeterProvider behaves like the no-op MeterProvider but is not
// recognised as one, so attempts always go through otelhttp.
type opaqueMeterProvider struct{ metricnoop.MeterProvider }

var remoteParent = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
	SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	TraceFlags: trace.FlagsSampled,
	Remote:     true,
})

// With no-op providers the attempt skips otelhttp, yet the base sees the
// same trace context that otelhttp would have injected, on every attempt,
// and the caller's header is never written.
func TestNoopProvidersInjectWhatOtelhttpWould(t *testing.T) {
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	send := func(t *testing.T, direct bool, withParent bool) ([]sent, http.Header) {
		t.Helper()
		opts := []otelretry.Option{
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithPropagators(prop),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
		}
		if direct {
			opts = append(opts, otelretry.WithMeterProvider(metricnoop.NewMeterProvider()))
		} else {
			opts = append(opts, otelretry.WithMeterProvider(opaqueMeterProvider{}))
		}
		ctx := t.Context()
		if withParent {
			ctx = trace.ContextWithRemoteSpanContext(ctx, remoteParent)
		}
		req := get(t, ctx, "http://api.test/items?id=1")
		req.Header.Set("X-Caller", "1")
		base := &capture{statuses: []int{503, 200}, caller: req.Header}
		resp, err := otelretry.NewTransport(base, opts...).RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("got %v, %v; want the 200", resp, err)
		}
		resp.Body.Close()
		return base.calls(), req.Header
	}

	fast, callerHeader := send(t, true, true)
	slow, _ := send(t, false, true)
	if len(fast) != 2 || len(slow) != 2 {
		t.Fatalf("calls: direct %d, through otelhttp %d; want 2 each", len(fast), len(slow))
	}
	for i := range fast {
		if got, want := fast[i].header.Get("Traceparent"), slow[i].header.Get("Traceparent"); got == "" || got != want {
			t.Errorf("attempt %d: traceparent %q, otelhttp injects %q", i+1, got, want)
		}
		if !strings.Contains(fast[i].header.Get("Traceparent"), remoteParent.TraceID().String()) {
			t.Errorf("attempt %d: traceparent %q is not in the caller's trace", i+1, fast[i].header.Get("Traceparent"))
		}
		if fast[i].header.Get("X-Caller") != "1" || fast[i].sameHeader {
			t.Errorf("attempt %d: want a copy of the caller's header plus the trace context", i+1)
		}
	}
	if len(callerHeader) != 1 || callerHeader.Get("Traceparent") != "" {
		t.Errorf("the caller's header was written: %v", callerHeader)
	}

	// Nothing to inject (no parent span): the attempt's own copy of the
	// caller's header goes out, with the content otelhttp would send.
	bare, _ := send(t, true, false)
	slowBare, _ := send(t, false, false)
	for i := range bare {
		if bare[i].sameHeader || !reflect.DeepEqual(bare[i].header, slowBare[i].header) {
			t.Errorf("attempt %d: header %v (the caller's map=%v), otelhttp sends %v", i+1, bare[i].header, bare[i].sameHeader, slowBare[i].header)
		}
	}
}

// A no-op meter alone does not bypass otelhttp: an attempt whose span
// records still gets its CLIENT span and the client span's trace context.
func TestNoopMeterWithARecordingTracerKeepsClientSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := &capture{statuses: []int{200}}
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider()), otelretry.WithPropagators(propagation.TraceContext{}))
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	spans := rec.Ended()
	attempts := spantest.Attempts(spans)
	if len(attempts) != 1 {
		t.Fatalf("attempt spans = %d, want 1", len(attempts))
	}
	if attempts[0].SpanKind() != trace.SpanKindClient {
		t.Fatalf("the attempt span is %v, want the CLIENT span", attempts[0].SpanKind())
	}
	want := "00-" + attempts[0].SpanContext().TraceID().String() + "-" + attempts[0].SpanContext().SpanID().String() + "-01"
	if got := base.calls()[0].header.Get("Traceparent"); got != want {
		t.Errorf("traceparent = %q, want the attempt's CLIENT span's %q", got, want)
	}
}

// A no-op tracer under a caller's recording span (from another provider)
// must not hand the caller's span to the attempts: the attempt spans are
// non-recording children, and the operation's telemetry never writes to
// the caller's span.
func TestNoopTracerUnderARecordingParentLeavesItAlone(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("caller").Start(t.Context(), "caller")
	base := &capture{statuses: []int{503, 200}}
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider()), otelretry.WithPropagators(propagation.TraceContext{}),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	resp, err := tr.RoundTrip(get(t, ctx, "http://api.test/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !parent.IsRecording() {
		t.Fatal("the caller's span was ended by the transport")
	}
	parent.End()
	spans := rec.Ended()
	if len(spans) != 1 || len(spans[0].Attributes()) != 0 || spans[0].Status().Code != 0 {
		t.Fatalf("the caller's span was written: %d spans, attributes %v, status %v", len(spans), spans[0].Attributes(), spans[0].Status())
	}
	for i, c := range base.calls() {
		if !strings.Contains(c.header.Get("Traceparent"), parent.SpanContext().TraceID().String()) {
			t.Errorf("attempt %d: traceparent %q is not in the caller's trace", i+1, c.header.Get("Traceparent"))
		}
	}
}

// Providers installed globally after NewTransport are used: the transport
// keeps the global delegating providers and never takes them for no-ops.
// The global state is set once per process, so the check runs in a child
// process.
func TestGlobalProvidersInstalledLaterAreUsed(t *testing.T) {
	if os.Getenv("OTELRETRY_GLOBAL_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGlobalProvidersInstalledLaterAreUsed$", "-test.count=1")
		cmd.Env = append(os.Environ(), "OTELRETRY_GLOBAL_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("PASS")) {
			t.Fatalf("child process: %v\n%s", err, out)
		}
		return
	}
	base := &capture{statuses: []int{200}}
	// Built before any provider is installed, with the default (global)
	// providers; and with a no-op meter given explicitly but the global
	// tracer, whose spans decide whether otelhttp runs.
	global := otelretry.NewTransport(base)
	noopMeter := otelretry.NewTransport(base, otelretry.WithMeterProvider(metricnoop.NewMeterProvider()))

	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	otel.SetTextMapPropagator(propagation.TraceContext{})

	for _, tr := range []*otelretry.Transport{global, noopMeter} {
		resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	spans := rec.Ended()
	attempts := spantest.Attempts(spans)
	if len(spantest.Operations(spans)) != 2 || len(attempts) != 2 {
		t.Fatalf("operation/attempt spans = %d/%d, want 2/2", len(spantest.Operations(spans)), len(attempts))
	}
	for i, a := range attempts {
		if a.SpanKind() != trace.SpanKindClient {
			t.Fatalf("attempt %d: span kind %v, want CLIENT", i+1, a.SpanKind())
		}
		if got := base.calls()[i].header.Get("Traceparent"); !strings.Contains(got, a.SpanContext().SpanID().String()) {
			t.Errorf("attempt %d: traceparent %q is not the attempt span's", i+1, got)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var ops int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "retry.operations" {
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					ops += dp.Value
				}
			}
		}
	}
	if ops != 1 {
		t.Fatalf("retry.operations = %d, want 1 (the global transport's; the other's meter is a no-op)", ops)
	}
}

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

// Each client span carries its own request's sanitized URL, also when an
// operation's state check calls through the same client while the
// operation is open; a URL with nothing to redact is left as otelhttp
// wrote it.
func TestClientSpanURLIsItsOwnRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h *harness
		hook := func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
			resp, err := h.client.Do(get(t, ctx, "http://state.test/lookup?key=SECRET-1"))
			if err != nil {
				return otelretry.StateResult{}, err
			}
			return otelretry.StateResult{State: attrs.StateApplied, Response: resp}, nil
		}
		h = newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}, {Status: 200}},
			otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithStateCheck(hook))
		resp, err := h.client.Do(post(t, t.Context(), "http://u:pw@api.test/orders?sig=SECRET-2", "x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		resp, err = h.client.Do(get(t, t.Context(), "http://api.test/plain"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()

		want := map[string]bool{
			"http://REDACTED:REDACTED@api.test/orders?sig=REDACTED": false,
			"http://state.test/lookup?key=REDACTED":                 false,
			"http://api.test/plain":                                 false,
		}
		for _, s := range h.ended() {
			if s.SpanKind() != trace.SpanKindClient {
				continue
			}
			u := attrOf(s, attrs.URLFullKey).AsString()
			if _, ok := want[u]; !ok {
				t.Errorf("client span url.full = %q", u)
			}
			want[u] = true
		}
		for u, seen := range want {
			if !seen {
				t.Errorf("no client span with url.full %q", u)
			}
		}
	})
}

// A base that breaks the RoundTripper contract with a nil response and a
// nil error gets an error, on either path, not a panic; a response with a
// nil body is returned as it is.
func TestBaseAnsweringNothing(t *testing.T) {
	paths := map[string][]otelretry.Option{
		"otelhttp": nil,
		"direct":   {otelretry.WithTracerProvider(tracenoop.NewTracerProvider()), otelretry.WithMeterProvider(metricnoop.NewMeterProvider())},
		"base":     {otelretry.WithoutClientSpans()},
	}
	for name, opts := range paths {
		t.Run(name, func(t *testing.T) {
			nilResp := otelretry.NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil }),
				append(opts, otelretry.WithMaxAttempts(1))...)
			resp, err := nilResp.RoundTrip(get(t, t.Context(), "http://api.test/"))
			var rerr *otelretry.Error
			if resp != nil || !errors.As(err, &rerr) || rerr.Err == nil || !strings.Contains(err.Error(), "nil *Response") {
				t.Fatalf("got %v, %v; want an *Error about the nil response", resp, err)
			}
			nilBody := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 204, Header: http.Header{}, Request: r}, nil
			}), opts...)
			resp, err = nilBody.RoundTrip(get(t, t.Context(), "http://api.test/"))
			if err != nil || resp.StatusCode != 204 {
				t.Fatalf("got %v, %v; want the 204", resp, err)
			}
			if resp.Body != nil {
				resp.Body.Close() // otelhttp supplies http.NoBody
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The Backoff is asked for a pause only after an attempt whose result may
// be retried, with that retry's number; a success or a final answer never
// asks it.
func TestBackoffIsAskedOnlyForRetryableResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked []int
		backoff := otelretry.BackoffFunc(func(n int) time.Duration { asked = append(asked, n); return time.Millisecond })
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 503}, {Status: 200}, {Status: 404}},
			otelretry.WithBackoff(backoff), otelretry.WithMaxAttempts(5))
		for range 2 { // 503, 503, 200; then 404
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if !reflect.DeepEqual(asked, []int{1, 2}) {
			t.Fatalf("Backoff asked for %v, want [1 2]", asked)
		}
		decisions := map[string]int{}
		for _, e := range h.events(t) {
			decisions[e.Decision]++
			if (e.Decision == "retry") != (e.BackoffMs == 1) {
				t.Errorf("attempt %s: decision %s with backoff %d ms", e.RequestID, e.Decision, e.BackoffMs)
			}
		}
		if !reflect.DeepEqual(decisions, map[string]int{"retry": 2, "return": 1, "stop": 1}) {
			t.Fatalf("decisions = %v", decisions)
		}
	})
}

// reusedResponse is a base that allocates nothing: it answers every call
// with the same response, cycling through statuses, and a body rewound for
// each call.
type reusedResponse struct {
	statuses []int
	calls    int
	resp     http.Response
	body     rewoundBody
}

type rewoundBody struct{ strings.Reader }

func (*rewoundBody) Close() error { return nil }

func (b *reusedResponse) RoundTrip(req *http.Request) (*http.Response, error) {
	b.resp.StatusCode = b.statuses[b.calls%len(b.statuses)]
	b.calls++
	b.body.Reset("ok")
	b.resp.Body = &b.body
	b.resp.Request = req
	return &b.resp, nil
}

// TestNoopPathAllocations pins what an operation allocates with no-op
// providers over a base that allocates nothing. The operation record holds
// the first attempt and its copy of the request (1). Each attempt has a
// header map of its own (1), so that nothing below the transport writes
// into the caller's. Each attempt then takes the standard library's pieces, chosen over a hand-written context
// for robustness: context.WithCancelCause (the context and its cancel
// function, 2), the timer that bounds the wait for its headers and its
// function (2), and httptrace's context and its GetConn, GotConn,
// WroteHeaders and WroteRequest hooks, which tell what reached the wire
// and what a cut proves (5); a later
// attempt also allocates its own record (1). Counting allocations is exact, unlike timing; the benchmarks
// module measures the time.
func TestNoopPathAllocations(t *testing.T) {
	noop := []otelretry.Option{
		otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelretry.WithPropagators(propagation.NewCompositeTextMapPropagator()),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
		otelretry.WithoutBudget(),
	}
	for _, tc := range []struct {
		name     string
		statuses []int
		want     float64
	}{
		{"success", []int{http.StatusOK}, 11},
		{"503,503,200", []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusOK}, 11 + 2*12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := &reusedResponse{statuses: tc.statuses}
			rt := otelretry.NewTransport(base, noop...)
			req, err := http.NewRequest(http.MethodGet, "http://api.example.test/v1/items?id=42", nil)
			if err != nil {
				t.Fatal(err)
			}
			op := func() {
				resp, err := rt.RoundTrip(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("RoundTrip = %v, %v", resp, err)
				}
				resp.Body.Close()
			}
			op() // warm the pools
			if got := testing.AllocsPerRun(100, op); got != tc.want {
				t.Errorf("allocations per operation = %v, want %v", got, tc.want)
			}
		})
	}
}
