// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package overhead

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// BenchmarkSDKParts prices, on the providers of the *-otelhttp and
// otelretry-sdk cases, the pieces the SDK path is made of, so that the gap
// between otelretry-sdk and retryablehttp-otelhttp can be split into spans,
// attributes and metric records (see docs/benchmarks.md). Each part runs inside a
// recording parent span, as it does in a transport.
func BenchmarkSDKParts(b *testing.B) {
	s := newSDK(b)
	tracer := s.tp.Tracer("parts")
	meter := s.mp.Meter("parts")
	internal := trace.WithSpanKind(trace.SpanKindInternal)
	ctx, parent := tracer.Start(context.Background(), "parent")
	defer parent.End()

	opAttrs := []attribute.KeyValue{ // what the operation span carries
		attrs.OperationIDKey.String("op-1f3a9c0d5e7b2a64"), attrs.HTTPRequestMethodKey.String("GET"),
		attrs.URLFullKey.String("http://api.example.test/v1/items?id=REDACTED"), attrs.ServerAddressKey.String("api.example.test"),
		attrs.ServerPortKey.Int(80), attrs.DeadlineMsKey.Int64(30000), attrs.AttemptsKey.Int(1), attrs.OutcomeReturn.Attribute(),
	}
	attemptAttrs := []attribute.KeyValue{ // the attempt event written on a successful attempt's CLIENT span
		attrs.OperationIDKey.String("op-1f3a9c0d5e7b2a64"), attrs.RequestIDKey.String("op-1f3a9c0d5e7b2a64/attempt-1"),
		attrs.AttemptKey.Int(1), attrs.HTTPRequestMethodKey.String("GET"),
		attrs.URLFullKey.String("http://api.example.test/v1/items?id=REDACTED"), attrs.RemainingMsKey.Int64(30000),
		attrs.HTTPResponseStatusCodeKey.Int(200), attrs.ElapsedMsKey.Int64(0), attrs.DecisionReturn.Attribute(),
		attrs.ReasonResponse.Attribute(), attrs.WireWritesKey.Int(1),
	}
	set := attribute.NewSet(attrs.HTTPRequestMethodKey.String("GET"), attrs.OutcomeReturn.Attribute())
	counter, _ := meter.Int64Counter("parts.counter")
	histogram, _ := meter.Float64Histogram("parts.histogram")
	add := []metric.AddOption{metric.WithAttributeSet(set)}
	record := []metric.RecordOption{metric.WithAttributeSet(set)}

	parts := []struct {
		name string
		run  func()
	}{
		{"span", func() {
			_, span := tracer.Start(ctx, "span", internal)
			span.End()
		}},
		{"span+operation-attributes", func() {
			_, span := tracer.Start(ctx, "span", internal)
			span.SetAttributes(opAttrs...)
			span.End()
		}},
		{"span+attempt-attributes", func() {
			_, span := tracer.Start(ctx, "span", internal)
			span.SetAttributes(attemptAttrs...)
			span.End()
		}},
		{"counter", func() { counter.Add(ctx, 1, add...) }},
		{"histogram", func() { histogram.Record(ctx, 0.01, record...) }},
		// Without a sampled span in the context the SDK offers no exemplar.
		{"counter-no-exemplar", func() { counter.Add(context.Background(), 1, add...) }},
		{"histogram-no-exemplar", func() { histogram.Record(context.Background(), 0.01, record...) }},
	}
	for _, p := range parts {
		b.Run("part="+p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.run()
			}
		})
	}
}

// BenchmarkFloor prices two things every otelretry operation must do
// before it decides anything: read the clock that starts its deadline, and
// copy the request to give the attempt its own context.
func BenchmarkFloor(b *testing.B) {
	req, err := http.NewRequest(http.MethodGet, "http://api.example.test/v1/items?id=42", nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var sinkTime time.Time
	var sinkReq *http.Request
	b.Run("part=clock", func(b *testing.B) {
		for b.Loop() {
			sinkTime = time.Now()
		}
	})
	b.Run("part=request-copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkReq = req.WithContext(ctx)
		}
	})
	_, _ = sinkTime, sinkReq
}
