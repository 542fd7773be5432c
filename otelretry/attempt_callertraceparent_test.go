// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestACallersTraceparentIsReplacedOnTheAttemptsCopy: a caller that set
// its own traceparent, under any spelling of the name, as the map holds
// it: the attempt's copy carries the attempt's context, once (net/http
// sends every key of the map, and a stale "traceparent" went out beside
// the attempt's "Traceparent"); the caller's request is left as it was.
// Through otelhttp's CLIENT span (an SDK tracer), and injected by
// otelretry itself (the no-op providers, the caller's span the parent).
func TestACallersTraceparentIsReplacedOnTheAttemptsCopy(t *testing.T) {
	const stale = "00-11111111111111111111111111111111-2222222222222222-01"
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0xab, 1},
		SpanID:     trace.SpanID{0xcd, 2},
		TraceFlags: trace.FlagsSampled,
	})
	for _, sdk := range []bool{true, false} {
		for _, name := range []string{"Traceparent", "traceparent", "TraceParent"} {
			rec := tracetest.NewSpanRecorder()
			opts := []otelretry.Option{otelretry.WithPropagators(propagation.TraceContext{})}
			if sdk {
				opts = append(opts, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
			}
			req := get(t, trace.ContextWithRemoteSpanContext(t.Context(), parent), "http://api.test/")
			req.Header[name] = []string{stale}
			before := req.Header.Clone()
			base := &capture{statuses: []int{200}, caller: req.Header}
			resp, err := otelretry.NewTransport(base, opts...).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if !maps.EqualFunc(req.Header, before, slices.Equal) {
				t.Errorf("sdk %v, %q: the caller's header changed: %v -> %v", sdk, name, before, req.Header)
			}
			want := parent.SpanID()
			if sdk {
				atts := spantest.Attempts(rec.Ended())
				if len(atts) != 1 {
					t.Fatalf("sdk %v, %q: %d attempt spans, want 1", sdk, name, len(atts))
				}
				want = atts[0].SpanContext().SpanID()
			}
			var values []string
			for k, v := range base.calls()[0].header {
				if strings.EqualFold(k, "traceparent") {
					values = append(values, v...)
				}
			}
			if len(values) != 1 || !strings.Contains(values[0], want.String()) {
				t.Errorf("sdk %v, %q: the wire's traceparent values %q, want the attempt's alone (span %s)", sdk, name, values, want)
			}
		}
	}
}
