// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// hangCap bounds how long a frozen server waits for the client to give up,
// so that a test whose client never does still stops.
const hangCap = 10 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	inspector.remove()
	if code == 0 {
		// Every client, server and exporter of the suite is closed by then.
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// telemetry records every span of one test in memory: the transport's and
// the servers' (otelhttp handlers), so that the tree can be checked whole.
type telemetry struct {
	rec  *tracetest.SpanRecorder
	tp   *sdktrace.TracerProvider
	prop propagation.TextMapPropagator
}

func newTelemetry(t *testing.T) *telemetry {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &telemetry{rec: rec, tp: tp, prop: propagation.TraceContext{}}
}

// transport returns an otelretry Transport that records into tel, over a
// base of its own whose idle connections are closed when the test ends.
func (tel *telemetry) transport(t *testing.T, opts ...otelretry.Option) *otelretry.Transport {
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	return otelretry.NewTransport(base, append([]otelretry.Option{
		otelretry.WithTracerProvider(tel.tp),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelretry.WithPropagators(tel.prop),
	}, opts...)...)
}

// parent starts the span a caller would have around its call.
func (tel *telemetry) parent(ctx context.Context) (context.Context, trace.Span) {
	return tel.tp.Tracer("realclients").Start(ctx, "caller")
}

// server is a loopback server that counts the requests it received. Its
// handler is instrumented with otelhttp, so that each request it received
// is a SERVER span under the attempt span that sent it.
type server struct {
	*httptest.Server
	received atomic.Int64
	// handlers counts the handlers running, spans included: Close does
	// not wait for the handler of a hijacked connection.
	handlers sync.WaitGroup
}

// newServer answers the n-th request it receives (from 1) with answer.
func newServer(t *testing.T, tel *telemetry, answer func(n int, w http.ResponseWriter, r *http.Request)) *server {
	s := &server{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer(int(s.received.Add(1)), w, r)
	})
	traced := otelhttp.NewHandler(h, "server", otelhttp.WithTracerProvider(tel.tp), otelhttp.WithPropagators(tel.prop))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.handlers.Add(1)
		defer s.handlers.Done()
		traced.ServeHTTP(w, r)
	}))
	t.Cleanup(s.close)
	return s
}

// statuses answers the n-th request with codes[n-1], and every later one
// with the last code.
func statuses(codes ...int) func(int, http.ResponseWriter, *http.Request) {
	return func(n int, w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		code := codes[min(n, len(codes))-1]
		w.WriteHeader(code)
		_, _ = io.WriteString(w, http.StatusText(code))
	}
}

// hang never answers: it returns when the client gives up (and closes the
// connection), or after hangCap.
func hang(_ int, _ http.ResponseWriter, r *http.Request) {
	freeze(r)
}

// freeze reads the request's body, as a server that acts on it would (and
// as net/http needs to notice the client leaving), then waits for the
// client to give up, or hangCap.
func freeze(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(hangCap):
	}
}

// close stops s and waits for its handlers to return.
func (s *server) close() {
	s.Close()
	s.handlers.Wait()
}

// finished closes the servers, which waits for their handlers to return
// (and so for their spans to end), and returns every span recorded.
func (tel *telemetry) finished(servers ...*server) []sdktrace.ReadOnlySpan {
	for _, s := range servers {
		s.close()
	}
	return tel.rec.Ended()
}

// op is one operation span with its attempt spans, in attempt order.
type op struct {
	span     sdktrace.ReadOnlySpan
	attempts []sdktrace.ReadOnlySpan
}

// operations returns the operation spans in start order, each with its
// attempts. Every attempt span must belong to one of them.
func operations(t *testing.T, spans []sdktrace.ReadOnlySpan) []op {
	t.Helper()
	opSpans := spantest.Operations(spans)
	slices.SortStableFunc(opSpans, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	var out []op
	owned := 0
	for _, s := range opSpans {
		atts := spantest.Attempts(spantest.Children(spans, s))
		owned += len(atts)
		out = append(out, op{span: s, attempts: atts})
	}
	if all := len(spantest.Attempts(spans)); all != owned {
		t.Errorf("%d attempt spans, %d of them under an operation span", all, owned)
	}
	return out
}

// wantAttempt is what one attempt span must record.
type wantAttempt struct {
	status   int              // the response's status, or 0
	class    attrs.ErrorClass // the error class when no response came
	decision attrs.Decision
}

// wantOp is what one operation span and its attempts must record.
type wantOp struct {
	method   string
	outcome  attrs.Outcome
	attempts []wantAttempt
	repeat   int  // retry.operation.repeat; 0: absent
	contract bool // retry.idempotency_contract=true
}

// check compares o with want: names, kinds, parents, the outcome and
// attempt attributes, and that every attempt reached the server (one
// SERVER span under it).
func (o op) check(t *testing.T, spans []sdktrace.ReadOnlySpan, want wantOp) {
	t.Helper()
	s := o.span
	id := str(s, attrs.OperationIDKey)
	if got := s.Name(); got != "retry "+want.method {
		t.Errorf("operation %s: name %q, want %q", id, got, "retry "+want.method)
	}
	if s.SpanKind() != trace.SpanKindInternal {
		t.Errorf("operation %s: kind %v, want internal", id, s.SpanKind())
	}
	if got := str(s, attrs.OutcomeKey); got != string(want.outcome) {
		t.Errorf("operation %s: outcome %q, want %q", id, got, want.outcome)
	}
	if got, _ := num(s, attrs.AttemptsKey); got != int64(len(want.attempts)) {
		t.Errorf("operation %s: %s=%d, want %d", id, attrs.AttemptsKey, got, len(want.attempts))
	}
	if got, ok := num(s, attrs.RepeatKey); ok != (want.repeat > 0) || got != int64(want.repeat) {
		t.Errorf("operation %s: %s=%d (set: %v), want %d (set: %v)", id, attrs.RepeatKey, got, ok, want.repeat, want.repeat > 0)
	}
	if _, ok := spantest.Attr(s, attrs.IdempotencyContractKey); ok != want.contract {
		t.Errorf("operation %s: %s set: %v, want %v", id, attrs.IdempotencyContractKey, ok, want.contract)
	}
	if wantErr := want.outcome != attrs.OutcomeReturn; (s.Status().Code == codes.Error) != wantErr {
		t.Errorf("operation %s: status %v, want error: %v", id, s.Status(), wantErr)
	}
	if len(o.attempts) != len(want.attempts) {
		t.Fatalf("operation %s: %d attempt spans, want %d", id, len(o.attempts), len(want.attempts))
	}
	// Attempt numbers are consecutive within the operation. They start at
	// 1, or, under a WithOperationID shared with earlier operations (an
	// outer layer's repeats), where the earlier ones stopped: request ids
	// stay unique across repeats.
	first, _ := num(o.attempts[0], attrs.AttemptKey)
	if want.repeat == 0 && first != 1 {
		t.Errorf("operation %s: first %s=%d, want 1", id, attrs.AttemptKey, first)
	}
	for i, a := range o.attempts {
		w := want.attempts[i]
		n := int(first) + i
		if a.Name() != want.method || a.SpanKind() != trace.SpanKindClient {
			t.Errorf("operation %s attempt %d: %s span %q, want client span %q", id, n, a.SpanKind(), a.Name(), want.method)
		}
		if got, _ := num(a, attrs.AttemptKey); got != int64(n) {
			t.Errorf("operation %s attempt %d: %s=%d", id, n, attrs.AttemptKey, got)
		}
		if got := str(a, attrs.OperationIDKey); got != id {
			t.Errorf("operation %s attempt %d: operation id %q", id, n, got)
		}
		if got := str(a, attrs.RequestIDKey); got != otelretry.RequestID(id, n) {
			t.Errorf("operation %s attempt %d: request id %q, want %q", id, n, got, otelretry.RequestID(id, n))
		}
		status, hasStatus := num(a, attrs.HTTPResponseStatusCodeKey)
		class := str(a, attrs.ErrorClassKey)
		if w.status != 0 && (status != int64(w.status) || class != "") || w.status == 0 && (hasStatus || class != string(w.class)) {
			t.Errorf("operation %s attempt %d: status %d, error class %q; want status %d, error class %q", id, n, status, class, w.status, w.class)
		}
		if got := str(a, attrs.DecisionKey); got != string(w.decision) {
			t.Errorf("operation %s attempt %d: decision %q, want %q", id, n, got, w.decision)
		}
		served := 0
		for _, c := range spantest.Children(spans, a) {
			if c.SpanKind() == trace.SpanKindServer {
				served++
			}
		}
		if served != 1 {
			t.Errorf("operation %s attempt %d: %d server spans under it, want 1", id, n, served)
		}
	}
}

func str(s sdktrace.ReadOnlySpan, k attribute.Key) string {
	v, _ := spantest.Attr(s, k)
	return v.AsString()
}

func num(s sdktrace.ReadOnlySpan, k attribute.Key) (int64, bool) {
	v, ok := spantest.Attr(s, k)
	return v.AsInt64(), ok
}

// traceIDs returns the distinct trace ids of the operations, in order.
func traceIDs(ops []op) []trace.TraceID {
	var ids []trace.TraceID
	for _, o := range ops {
		if id := o.span.SpanContext().TraceID(); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}
