// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A client that has otelhttp already, wrapped as it is (the newcomer's
// first step), gets one CLIENT span per attempt and otelhttp's metrics
// once per attempt: a base that is otelhttp's Transport is taken as
// instrumented, as WithoutClientSpans says. Before, otelretry sent each
// attempt through an otelhttp Transport of its own as well, so every
// attempt had two CLIENT spans, one under the other, and
// http.client.request.duration counted it twice.
func TestAnOtelhttpBaseIsTakenAsInstrumented(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		base := otelhttp.NewTransport(scripted.New(scripted.Step{Status: 503}, scripted.Step{Status: 200}),
			otelhttp.WithTracerProvider(h.tp), otelhttp.WithMeterProvider(h.mp))
		tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(h.tp), otelretry.WithMeterProvider(h.mp),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		spans := h.ended()
		attempts := spantest.Attempts(spans)
		if len(attempts) != 2 {
			t.Fatalf("attempt spans = %d, want 2", len(attempts))
		}
		clients := 0
		for _, s := range spans {
			if s.SpanKind() == trace.SpanKindClient {
				clients++
			}
		}
		if clients != 2 {
			t.Errorf("CLIENT spans = %d, want one per attempt (2), the base's", clients)
		}
		for _, a := range attempts {
			if a.SpanKind() != trace.SpanKindInternal {
				t.Errorf("attempt span %q is %v, want otelretry's INTERNAL one over the base's CLIENT span", a.Name(), a.SpanKind())
			}
			if c := spantest.Children(spans, a); len(c) != 1 || c[0].SpanKind() != trace.SpanKindClient {
				t.Errorf("attempt span %q has %d children, want the base's one CLIENT span", a.Name(), len(c))
			}
		}
		var rm metricdata.ResourceMetrics
		if err := h.reader.Collect(t.Context(), &rm); err != nil {
			t.Fatal(err)
		}
		byStatus := histogramCountBy(rm, "http.client.request.duration", attribute.Key("http.response.status_code"))
		if byStatus["503"] != 1 || byStatus["200"] != 1 {
			t.Errorf("http.client.request.duration counts by status %v, want each attempt once", byStatus)
		}
	})
}

// README.md and docs/telemetry.md: otelhttp's Transport wrapped in a layer
// of one's own is not seen, so each attempt has two CLIENT spans until
// WithoutClientSpans says the base is instrumented (a reviewer's read: the
// README did not say).
func TestAWrappedOtelhttpBaseNeedsWithoutClientSpans(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []otelretry.Option
		clients int
	}{
		{"not seen", nil, 4},
		{"WithoutClientSpans", []otelretry.Option{otelretry.WithoutClientSpans()}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, nil)
				inner := otelhttp.NewTransport(scripted.New(scripted.Step{Status: 503}, scripted.Step{Status: 200}),
					otelhttp.WithTracerProvider(h.tp), otelhttp.WithMeterProvider(h.mp))
				layer := roundTripperFunc(func(r *http.Request) (*http.Response, error) { return inner.RoundTrip(r) })
				opts := append([]otelretry.Option{otelretry.WithTracerProvider(h.tp), otelretry.WithMeterProvider(h.mp),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, tc.opts...)
				resp, err := otelretry.NewTransport(layer, opts...).RoundTrip(get(t, t.Context(), "http://api.test/"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				clients := 0
				for _, s := range h.ended() {
					if s.SpanKind() == trace.SpanKindClient {
						clients++
					}
				}
				if clients != tc.clients {
					t.Errorf("CLIENT spans = %d, want %d for 2 attempts", clients, tc.clients)
				}
			})
		})
	}
}

// WithPropagators holds in every mode: over otelhttp's Transport (taken as
// instrumented), which injects with its own propagators (none here), and
// under WithoutClientSpans, the trace context is
// injected once, with the transport's, in the caller's trace; a base that
// injects too replaces it from its CLIENT span (a reviewer's find: over
// otelhttp's Transport none was sent).
func TestThePropagatorsInjectOverAnInstrumentedBase(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	// The base's propagators inject nothing (as the global no-op does,
	// which other tests may replace meanwhile).
	silent := otelhttp.WithPropagators(propagation.NewCompositeTextMapPropagator())
	noop := []otelretry.Option{otelretry.WithTracerProvider(tracenoop.NewTracerProvider()), otelretry.WithMeterProvider(metricnoop.NewMeterProvider())}
	for _, tc := range []struct {
		name string
		base func(http.RoundTripper) http.RoundTripper
		opts []otelretry.Option
		// fromBase: the header names the base's CLIENT span.
		fromBase bool
	}{
		{"otelhttp base", func(rt http.RoundTripper) http.RoundTripper {
			return otelhttp.NewTransport(rt, otelhttp.WithTracerProvider(tp), silent)
		},
			[]otelretry.Option{otelretry.WithTracerProvider(tp)}, false},
		{"otelhttp base, no-op providers", func(rt http.RoundTripper) http.RoundTripper {
			return otelhttp.NewTransport(rt, otelhttp.WithTracerProvider(tp), silent)
		},
			noop, false},
		{"otelhttp base injecting too", func(rt http.RoundTripper) http.RoundTripper {
			return otelhttp.NewTransport(rt, otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(propagation.TraceContext{}))
		}, []otelretry.Option{otelretry.WithTracerProvider(tp)}, true},
		{"WithoutClientSpans", func(rt http.RoundTripper) http.RoundTripper { return rt },
			[]otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans()}, false},
		{"WithoutClientSpans, no-op providers", func(rt http.RoundTripper) http.RoundTripper { return rt },
			append([]otelretry.Option{otelretry.WithoutClientSpans()}, noop...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			var got []http.Header
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				got = append(got, r.Header.Clone())
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			tr := otelretry.NewTransport(tc.base(base), append(tc.opts, otelretry.WithPropagators(propagation.TraceContext{}))...)
			ctx, caller := tp.Tracer("caller").Start(t.Context(), "caller")
			resp, err := tr.RoundTrip(get(t, ctx, "http://api.test/x"))
			caller.End()
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(got) != 1 {
				t.Fatalf("the base got %d requests, want 1", len(got))
			}
			v := got[0].Values("Traceparent")
			if len(v) != 1 {
				t.Fatalf("traceparent sent %d times (%q), want once", len(v), v)
			}
			sent := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(t.Context(), propagation.HeaderCarrier(got[0])))
			if sent.TraceID() != caller.SpanContext().TraceID() {
				t.Errorf("traceparent %q is not in the caller's trace", v[0])
			}
			var client trace.SpanID
			for _, s := range rec.Ended() {
				if s.SpanKind() == trace.SpanKindClient {
					client = s.SpanContext().SpanID()
				}
			}
			if fromBase := client.IsValid() && sent.SpanID() == client; fromBase != tc.fromBase {
				t.Errorf("traceparent %q names the base's CLIENT span: %v, want %v", v[0], fromBase, tc.fromBase)
			}
		})
	}
}
