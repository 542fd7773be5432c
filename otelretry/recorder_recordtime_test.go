// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Each log record falls within the span whose context it carries: the
// retry.operation record, timed at the operation's start, was a few
// microseconds before its operation span began, which starts once the
// operation's start was read (a reviewer's find); the retry.attempt
// record within its attempt span.
func TestALogRecordFallsWithinItsSpan(t *testing.T) {
	for range 20 {
		h, logs := newLogHarness(t, []scripted.Step{{Status: 503}, {Status: 200}})
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test/x", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		op := h.operation(t)
		if ts := logs.named("retry.operation")[0].Timestamp(); ts.Before(op.StartTime()) || ts.After(op.EndTime()) {
			t.Fatalf("retry.operation record at %v, outside its span [%v, %v]", ts, op.StartTime(), op.EndTime())
		}
		for i, a := range h.attempts() {
			if ts := logs.named("retry.attempt")[i].Timestamp(); ts.Before(a.StartTime()) || ts.After(a.EndTime()) {
				t.Fatalf("retry.attempt record %d at %v, outside its span [%v, %v]", i+1, ts, a.StartTime(), a.EndTime())
			}
		}
	}
}

// A sampler that drops the spans still gives them ids, and the slog
// records carry them (docs/telemetry.md; a reviewer's remark: the doc said
// a TracerProvider that does not record gives none).
func TestASampledOutSpansIdsAreOnTheSlogRecords(t *testing.T) {
	var buf bytes.Buffer
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	base := scripted.New(scripted.Step{Status: 200})
	rt := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
		otelretry.WithLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.Contains(buf.String(), `"trace_id":"`) || !strings.Contains(buf.String(), `"span_id":"`) {
		t.Errorf("slog records under a sampler that drops every span:\n%s", buf.String())
	}
}
