// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

// docs/stack.md ("From a spike to its trace: exemplars"): the metrics are
// recorded in the span's context, so that with the SDK's default
// trace-based exemplar filter every exemplar points at the span. Each of
// the seven instruments passes the caller's context on: a record made with
// another context (context.Background()) carries no exemplar, and no unit
// test saw it (only the end-to-end stack's).
func TestEveryInstrumentRecordsInTheCallersContext(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithExemplarFilter(exemplar.TraceBasedFilter))
	rec, err := metrics.NewRecorder(mp.Meter(scope))
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.DecisionRetry, StatusCode: 503, ErrorType: "503", Duration: 80 * time.Millisecond})
	rec.RecordBackoff(ctx, metrics.Backoff{Method: "GET", Duration: 40 * time.Millisecond})
	rec.RecordThrottled(ctx, metrics.Throttled{Method: "GET"})
	rec.RecordOperation(ctx, metrics.Operation{Method: "GET", Outcome: attrs.OutcomeReturn, Attempts: 2, Duration: 200 * time.Millisecond})

	got := collect(t, reader)
	names := []string{"retry.operations", "retry.attempts", "retry.operation.attempts", "retry.operation.duration",
		"retry.attempt.duration", "retry.backoff.duration", "retry.throttled"}
	for _, name := range names {
		m, ok := got[name]
		if !ok {
			t.Errorf("%s: not recorded", name)
			continue
		}
		var ids [][]byte
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			ids = sumExemplars(d.DataPoints)
		case metricdata.Histogram[int64]:
			ids = histExemplars(d.DataPoints)
		case metricdata.Histogram[float64]:
			ids = histExemplars(d.DataPoints)
		default:
			t.Errorf("%s: data %T", name, m.Data)
			continue
		}
		if len(ids) == 0 {
			t.Errorf("%s: no exemplar: recorded outside the caller's context", name)
		}
		for _, id := range ids {
			if trace.TraceID(id) != sc.TraceID() {
				t.Errorf("%s: exemplar of trace %x, want %s", name, id, sc.TraceID())
			}
		}
	}
}

func sumExemplars(dps []metricdata.DataPoint[int64]) (ids [][]byte) {
	for _, dp := range dps {
		for _, e := range dp.Exemplars {
			ids = append(ids, e.TraceID)
		}
	}
	return ids
}

func histExemplars[N int64 | float64](dps []metricdata.HistogramDataPoint[N]) (ids [][]byte) {
	for _, dp := range dps {
		for _, e := range dp.Exemplars {
			ids = append(ids, e.TraceID)
		}
	}
	return ids
}
