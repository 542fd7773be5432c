// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// clientOnlySampler samples CLIENT spans (the attempts) and drops the rest
// (the operation span).
type clientOnlySampler struct{}

func (clientOnlySampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	if p.Kind == trace.SpanKindClient {
		return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
	}
	return sdktrace.SamplingResult{Decision: sdktrace.Drop}
}
func (clientOnlySampler) Description() string { return "clientOnly" }

// sampledOnlyHandler takes a record only in the context of a sampled span
// (a handler that samples by span in Enabled), and keeps the span contexts
// it was asked with.
type sampledOnlyHandler struct {
	mu      sync.Mutex
	asked   []trace.SpanContext
	handled []slogRecord
}

func (h *sampledOnlyHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	sc := trace.SpanContextFromContext(ctx)
	h.mu.Lock()
	h.asked = append(h.asked, sc)
	h.mu.Unlock()
	return sc.IsSampled()
}
func (h *sampledOnlyHandler) Handle(ctx context.Context, r slog.Record) error {
	m := map[string]string{}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handled = append(h.handled, slogRecord{r.Level, r.Message, m, trace.SpanContextFromContext(ctx)})
	return nil
}
func (h *sampledOnlyHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *sampledOnlyHandler) WithGroup(string) slog.Handler      { return h }

// WithLogger hands a record to the handler "in the context of the span
// they name" (docs/telemetry.md; WithLogger's godoc: "in that span's
// context (as a handler reads it)"), and asks its Enabled in that context
// too: with the attempt spans sampled and the operation span dropped, a
// handler deciding by the span of its context takes the attempts' records
// (a reviewer's find: Enabled was asked with the operation span's).
func TestSlogEnabledIsAskedInTheRecordsContext(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(clientOnlySampler{}), sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	sh := &sampledOnlyHandler{}
	tr := otelretry.NewTransport(scripted.New(scripted.Step{Status: 503}, scripted.Step{Status: 200}),
		otelretry.WithTracerProvider(tp), otelretry.WithLogger(slog.New(sh)),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/v1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var client int
	for _, s := range sr.Ended() {
		if s.SpanKind() == trace.SpanKindClient {
			client++
		}
	}
	if client != 2 {
		t.Fatalf("%d sampled CLIENT spans, want 2", client)
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if len(sh.handled) != 2 {
		t.Errorf("handler took %d attempt records, want 2 (one per sampled attempt span); Enabled asked with span contexts %v", len(sh.handled), sh.asked)
	}
}

// sampledOnlyProcessor takes a log record only in the context of a sampled
// span, and counts the attempt events emitted.
type sampledOnlyProcessor struct {
	mu       sync.Mutex
	attempts int
}

func (*sampledOnlyProcessor) Enabled(ctx context.Context, _ sdklog.EnabledParameters) bool {
	return trace.SpanContextFromContext(ctx).IsSampled()
}
func (p *sampledOnlyProcessor) OnEmit(_ context.Context, r *sdklog.Record) error {
	if r.EventName() == "retry.attempt" {
		p.mu.Lock()
		p.attempts++
		p.mu.Unlock()
	}
	return nil
}
func (*sampledOnlyProcessor) Shutdown(context.Context) error   { return nil }
func (*sampledOnlyProcessor) ForceFlush(context.Context) error { return nil }

// WithLoggerProvider emits an attempt's event "in the attempt span's
// context" (its godoc) and builds it "only when the Logger is Enabled for
// it": Enabled is asked in the context the event is emitted in, so a
// processor filtering by span in Enabled (as the SDK's Processor.Enabled
// allows) takes the sampled attempts' events (a reviewer's find: it was
// asked with the operation span's context).
func TestLogEventEnabledIsAskedInTheRecordsContext(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(clientOnlySampler{}))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	proc := &sampledOnlyProcessor{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(proc))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	tr := otelretry.NewTransport(scripted.New(scripted.Step{Status: 503}, scripted.Step{Status: 200}),
		otelretry.WithTracerProvider(tp), otelretry.WithLoggerProvider(lp),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/v1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	proc.mu.Lock()
	defer proc.mu.Unlock()
	if proc.attempts != 2 {
		t.Errorf("%d retry.attempt events emitted, want 2 (each attempt span is sampled)", proc.attempts)
	}
}

// countingHandler counts the Enabled calls it gets and the records it
// takes.
type countingHandler struct {
	mu             sync.Mutex
	asked, handled int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked++
	return true
}
func (h *countingHandler) Handle(context.Context, slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handled++
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// The slog handler is asked once per record it gets, and not for the
// operation record of an operation that made attempts, which it never
// gets (a reviewer's note: it was asked 3 times for 2 records, as the
// Logger asked again).
func TestSlogEnabledIsAskedOncePerRecord(t *testing.T) {
	h := &countingHandler{}
	tr := otelretry.NewTransport(scripted.New(scripted.Step{Status: 503}, scripted.Step{Status: 200}),
		otelretry.WithLogger(slog.New(h)), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
	resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/v1"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.asked != 2 || h.handled != 2 {
		t.Errorf("Enabled asked %d times for %d records, want 2 and 2", h.asked, h.handled)
	}
}
