// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// slowHedgeStart is a span processor whose OnStart of the second CLIENT
// span (the hedge's) takes 1 ms.
type slowHedgeStart struct {
	sdktrace.SpanProcessor
	clients atomic.Int32
}

func (p *slowHedgeStart) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	if s.SpanKind() == trace.SpanKindClient && p.clients.Add(1) == 2 {
		time.Sleep(time.Millisecond)
	}
	p.SpanProcessor.OnStart(ctx, s)
}

// A hedge the race sent, whose base was never called because the first
// attempt won during the hedge's 1 ms of starting telemetry, is counted as
// docs/telemetry.md says (retry.attempts, Results.Attempts: its span
// exists), superseded.
func TestAHedgeCutWhileItStartedIsCountedAsDocumented(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(&slowHedgeStart{SpanProcessor: rec}))
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		base := scripted.New(
			scripted.Step{Delay: 10*time.Millisecond + 500*time.Microsecond, Status: 200, Body: "first"},
			scripted.Step{Delay: time.Millisecond, Status: 200, Body: "hedge"},
		)
		tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithMeterProvider(mp),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond}),
			otelretry.WithDeadline(10*time.Second))
		var res otelretry.Results
		resp, err := tr.RoundTrip(get(t, otelretry.WithResults(t.Context(), &res), "http://api.test/items"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		calls := len(base.Calls())
		op, _ := res.Last()
		h := &harness{spans: rec, reader: reader}
		metric := sumBy(t, h.collect(t), "retry.attempts", attrs.DecisionKey)
		if string(b) != "first" || calls != 1 || op.Attempts != 2 || len(h.attempts()) != 2 || metric["return"] != 1 || metric["superseded"] != 1 {
			t.Errorf("body %q; the base was called %d times; Results.Attempts = %d, attempt spans %d, retry.attempts metric %v; want the first's body, 1 call, 2 attempts counted (return, superseded)",
				b, calls, op.Attempts, len(h.attempts()), metric)
		}
	})
}
