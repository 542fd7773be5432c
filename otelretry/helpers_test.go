// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net"
	"net/http"
	"net/url"
	"os"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// harness wires a Transport over a scripted base with recording providers.
type harness struct {
	base     *scripted.Transport
	spans    *tracetest.SpanRecorder
	reader   *sdkmetric.ManualReader
	client   *http.Client
	tp       *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	transprt *otelretry.Transport
}

func newHarness(t *testing.T, steps []scripted.Step, opts ...otelretry.Option) *harness {
	t.Helper()
	h := &harness{base: scripted.New(steps...), spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	h.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	h.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	all := append([]otelretry.Option{otelretry.WithTracerProvider(h.tp), otelretry.WithMeterProvider(h.mp)}, opts...)
	h.transprt = otelretry.NewTransport(h.base, all...)
	h.client = &http.Client{Transport: h.transprt}
	return h
}

func (h *harness) ended() []sdktrace.ReadOnlySpan { return h.spans.Ended() }

func (h *harness) attempts() []sdktrace.ReadOnlySpan { return spantest.Attempts(h.ended()) }

func (h *harness) operation(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	ops := spantest.Operations(h.ended())
	if len(ops) != 1 {
		t.Fatalf("got %d operation spans, want 1", len(ops))
	}
	return ops[0]
}

// event is the attempt event as read back from an attempt span.
type event struct {
	OperationID, RequestID string
	Attempt                int64
	Method                 string
	Status                 int64 // 0: absent
	ErrorClass             string
	ElapsedMs, RemainingMs int64
	Decision               string
	RetryAfterMs           int64 // -1: absent
	BackoffMs              int64 // -1: absent
}

func readEvent(t *testing.T, s sdktrace.ReadOnlySpan) event {
	t.Helper()
	get := func(k attribute.Key) attribute.Value { v, _ := spantest.Attr(s, k); return v }
	has := func(k attribute.Key) bool { _, ok := spantest.Attr(s, k); return ok }
	e := event{
		OperationID:  get("retry.operation.id").AsString(),
		RequestID:    get("retry.request.id").AsString(),
		Attempt:      get("retry.attempt").AsInt64(),
		Method:       get("http.request.method").AsString(),
		Status:       get("http.response.status_code").AsInt64(),
		ErrorClass:   get("retry.error_class").AsString(),
		ElapsedMs:    get("retry.elapsed_ms").AsInt64(),
		RemainingMs:  get("retry.remaining_ms").AsInt64(),
		Decision:     get("retry.decision").AsString(),
		RetryAfterMs: -1, BackoffMs: -1,
	}
	if has("retry.retry_after_ms") {
		e.RetryAfterMs = get("retry.retry_after_ms").AsInt64()
	}
	if has("retry.backoff_ms") {
		e.BackoffMs = get("retry.backoff_ms").AsInt64()
	}
	if has("http.response.status_code") == has("retry.error_class") {
		t.Errorf("attempt %d: want exactly one of status and error class, got status=%v error_class=%v",
			e.Attempt, has("http.response.status_code"), has("retry.error_class"))
	}
	return e
}

func (h *harness) events(t *testing.T) []event {
	t.Helper()
	var out []event
	for _, s := range h.attempts() {
		out = append(out, readEvent(t, s))
	}
	return out
}

func attrOf(s sdktrace.ReadOnlySpan, k attribute.Key) attribute.Value {
	v, _ := spantest.Attr(s, k)
	return v
}

func attrValue(kvs []attribute.KeyValue, k attribute.Key) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == k {
			return kv.Value.Emit(), true
		}
	}
	return "", false
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// errBaseTimeout is a timeout the base itself reports, as a read deadline
// or net/http's ResponseHeaderTimeout does: a net.Error whose Timeout is
// true.
var errBaseTimeout error = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
