// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A server may answer any three-digit status (net/http's client takes 000
// to 999, a base of one's own any code). The Transport writes error.type =
// the status code on its spans (docs/telemetry.md); the metrics carry the
// same value, never _OTHER (the closed-set check below took only 100 to
// 599: a reviewer's find).
func TestTheMetricsErrorTypeOfAnyStatusIsItsCode(t *testing.T) {
	for _, code := range []int{42, 503, 600, 799, 999} {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: code, Status: http.StatusText(code), Body: io.NopCloser(strings.NewReader("x")), Header: http.Header{}, Request: r}, nil
		})
		tr := otelretry.NewTransport(base, otelretry.WithMeterProvider(mp), otelretry.WithTracerProvider(tp))
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/x", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		want := map[string]bool{}
		for _, s := range spans.Ended() {
			for _, kv := range s.Attributes() {
				if kv.Key == attrs.ErrorTypeKey {
					want[kv.Value.Emit()] = true
				}
			}
		}
		got := ownHistogramErrorTypes(t, reader)
		if len(got) == 0 {
			t.Fatalf("status %d: no error.type recorded on otelretry's metrics", code)
		}
		for name, v := range got {
			if !want[v] {
				t.Errorf("status %d: %s error.type=%q; the spans carry %v", code, name, v, want)
			}
		}
	}
}

// ownHistogramErrorTypes is the error.type of otelretry's duration
// histograms' points, by instrument.
func ownHistogramErrorTypes(t *testing.T, reader *sdkmetric.ManualReader) map[string]string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelretry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
				for _, p := range h.DataPoints {
					if v, ok := p.Attributes.Value(attrs.ErrorTypeKey); ok {
						got[m.Name] = v.Emit()
					}
				}
			}
		}
	}
	return got
}
