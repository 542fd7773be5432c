// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Each attempt has its own header map in every sending mode: a base that
// sets a header never writes through to the caller's request.
func TestAttemptHeaderIsItsOwn(t *testing.T) {
	modes := map[string][]otelretry.Option{
		"client spans":         nil,
		"without client spans": {otelretry.WithoutClientSpans()},
		"no-op providers":      {otelretry.WithoutClientSpans(), otelretry.WithTracerProvider(nil)},
	}
	for name, opts := range modes {
		t.Run(name, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				r.Header.Set("X-Set-By-Base", "yes")
				return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
			})
			tr := otelretry.NewTransport(base, opts...)
			req := get(t, t.Context(), "http://api.test/items")
			req.Header.Set("Accept", "application/json")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := req.Header.Get("X-Set-By-Base"); got != "" {
				t.Errorf("the base's header reached the caller's request")
			}
		})
	}
}

// retry.deadline_ms is never negative, also for an operation that starts
// after its context's deadline.
func TestDeadlineMsNeverNegative(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-50*time.Millisecond))
	defer cancel()
	if _, err := tr.RoundTrip(get(t, ctx, "http://api.test/items")); err == nil {
		t.Fatal("want an error")
	}
	for _, op := range spantest.Operations(rec.Ended()) {
		if v := attrOf(op, attrs.DeadlineMsKey).AsInt64(); v < 0 {
			t.Errorf("retry.deadline_ms = %d", v)
		}
	}
}
