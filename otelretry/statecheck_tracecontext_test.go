// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The state check's copy of the write carries no trace context, in any
// sending mode: the write's (its attempt span's, ended by then) is not the
// lookup's, whose client injects its own. Where otelretry injects into the
// attempt's request itself (WithoutClientSpans, over otelhttp's
// Transport, the no-op providers), the copy carried the write's
// traceparent (a reviewer's find); a caller's own, in any spelling, is
// left out too.
func TestAStateChecksCopyCarriesNoTraceContext(t *testing.T) {
	for _, mode := range []string{"client spans", "WithoutClientSpans", "over otelhttp", "no-op providers"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
				var seen http.Header
				hook := func(_ context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
					seen = c.Request.Header.Clone()
					return otelretry.StateResult{State: attrs.StateUnknown}, nil
				}
				opts := []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
					otelretry.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
					otelretry.WithAttemptTimeout(100 * time.Millisecond), otelretry.WithStateCheck(hook)}
				var base http.RoundTripper = scripted.New(scripted.Step{Hang: true})
				switch mode {
				case "WithoutClientSpans":
					opts = append(opts, otelretry.WithoutClientSpans())
				case "over otelhttp":
					base = otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tp))
				case "no-op providers":
					opts = append(opts, otelretry.WithTracerProvider(tracenoop.NewTracerProvider()))
				}
				ctx, caller := tp.Tracer("caller").Start(t.Context(), "caller")
				defer caller.End()
				req := post(t, ctx, "http://api.test/orders", "order")
				req.Header["TRACEPARENT"] = []string{"00-11111111111111111111111111111111-2222222222222222-01"}
				if _, err := otelretry.NewTransport(base, opts...).RoundTrip(req); err == nil {
					t.Fatal("want the outcome unknown")
				}
				if seen == nil {
					t.Fatal("the hook did not run")
				}
				for k := range seen {
					if http.CanonicalHeaderKey(k) == "Traceparent" || http.CanonicalHeaderKey(k) == "Baggage" {
						t.Errorf("the state check's copy carries %s %q: the write's trace context", k, seen[k])
					}
				}
			})
		})
	}
}
