// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

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
