// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Concurrent operations against a real loopback server instrumented with
// otelhttp: the first call of each operation gets a 503, the second a 200.
// Every attempt must carry its own trace context, and the server spans must
// join the operation's trace under the attempt's client span.
func TestConcurrentOperationsOnLoopbackJoinOneTracePerOperation(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prop := propagation.TraceContext{}

	var mu sync.Mutex
	seen := map[string]int{} // calls per op key
	traceparents := map[string][]string{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Query().Get("op")
		mu.Lock()
		seen[key]++
		n := seen[key]
		traceparents[key] = append(traceparents[key], r.Header.Get("Traceparent"))
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "ok %s", key)
	})
	srv := httptest.NewServer(otelhttp.NewHandler(handler, "flaky", otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(prop)))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()

	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithTracerProvider(tp), otelretry.WithPropagators(prop),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
		otelretry.WithDeadline(5*time.Second),
		// 24 simultaneous failures from a fresh client exceed the default
		// budget's two retries; this test is about trace structure.
		otelretry.WithBudget(otelretry.NewBudget(otelretry.BudgetTokens(1000))))}

	const ops = 24
	var wg sync.WaitGroup
	errs := make(chan error, ops)
	for i := range ops {
		wg.Go(func() {
			ctx := otelretry.WithOperationID(t.Context(), fmt.Sprintf("op-%d", i))
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/items?op=%d", srv.URL, i), nil)
			resp, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body) // readable after RoundTrip returned
			if err != nil || string(body) != fmt.Sprintf("ok %d", i) || resp.StatusCode != 200 {
				errs <- fmt.Errorf("op %d: %d %q %v", i, resp.StatusCode, body, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	srv.Close() // server spans end before we read them

	spans := rec.Ended()
	ops_ := spantest.Operations(spans)
	if len(ops_) != ops {
		t.Fatalf("operation spans = %d, want %d", len(ops_), ops)
	}
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	for _, op := range ops_ {
		id := attrOf(op, attrs.OperationIDKey).AsString()
		var attempts []sdktrace.ReadOnlySpan
		for _, a := range spantest.Attempts(spans) {
			if a.Parent().SpanID() == op.SpanContext().SpanID() {
				attempts = append(attempts, a)
			}
		}
		if len(attempts) != 2 {
			t.Fatalf("%s: %d attempt spans, want 2", id, len(attempts))
		}
		key := id[len("op-"):]
		if tps := traceparents[key]; len(tps) != 2 || tps[0] == tps[1] || tps[0] == "" {
			t.Errorf("%s: traceparents %q, want two distinct ones", id, tps)
		}
		for _, a := range attempts {
			if attrOf(a, attrs.OperationIDKey).AsString() != id || a.SpanContext().TraceID() != op.SpanContext().TraceID() {
				t.Errorf("%s: attempt %s is not in the operation's trace", id, attrOf(a, attrs.RequestIDKey).AsString())
			}
			if a.SpanKind() != trace.SpanKindClient {
				t.Fatalf("%s: the attempt span is %v, want CLIENT", id, a.SpanKind())
			}
			servers := spantest.Children(spans, a)
			if len(servers) != 1 || servers[0].SpanKind() != trace.SpanKindServer {
				t.Fatalf("%s: want the server span under the attempt's CLIENT span, got %d", id, len(servers))
			}
		}
	}
}
