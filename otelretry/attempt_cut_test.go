// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/otelretry"
)

// slowClientSpanStart is a span processor whose OnStart is slow for the
// attempts' CLIENT spans.
type slowClientSpanStart struct{ d time.Duration }

func (p slowClientSpanStart) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	if s.SpanKind() == trace.SpanKindClient {
		time.Sleep(p.d)
	}
}
func (slowClientSpanStart) OnEnd(sdktrace.ReadOnlySpan)      {}
func (slowClientSpanStart) Shutdown(context.Context) error   { return nil }
func (slowClientSpanStart) ForceFlush(context.Context) error { return nil }

// TestAWriteCutBeforeItsCallIsNotUnknown: the telemetry that starts an
// attempt (its span's name formatter, a span processor's OnStart) runs
// after the decision to send it, and may run past the deadline or the
// caller's cancel. The base is then not called (no attempt starts that
// cannot end in time), and the write, which never left, does not end
// with its outcome unknown. It was handed to the base with its context
// done: net/http sent nothing, and the write ended check_state or
// ErrOutcomeUnknown as if cut in flight.
func TestAWriteCutBeforeItsCallIsNotUnknown(t *testing.T) {
	for _, hook := range []string{"attempt span name formatter", "span processor OnStart"} {
		for _, stop := range []string{"WithDeadline", "caller's deadline", "caller's cancel"} {
			var got atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
			base := &http.Transport{}
			opts := []otelretry.Option{otelretry.WithoutBudget(), otelretry.WithDeadline(5 * time.Second)}
			switch hook {
			case "attempt span name formatter":
				opts = append(opts, otelretry.WithAttemptSpanNameFormatter(func(*http.Request) string {
					time.Sleep(300 * time.Millisecond)
					return "POST"
				}))
			default:
				opts = append(opts, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(
					sdktrace.WithSpanProcessor(slowClientSpanStart{300 * time.Millisecond}))))
			}
			ctx := t.Context()
			switch stop {
			case "WithDeadline":
				opts = append(opts, otelretry.WithDeadline(100*time.Millisecond))
			case "caller's deadline":
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
			default:
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				time.AfterFunc(100*time.Millisecond, cancel)
			}
			tr := otelretry.NewTransport(base, opts...)
			var results otelretry.Results
			req, _ := http.NewRequestWithContext(otelretry.WithResults(ctx, &results), http.MethodPost, srv.URL+"/orders", strings.NewReader("order"))
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			last, _ := results.Last()
			if got.Load() != 0 || errors.Is(err, otelretry.ErrOutcomeUnknown) || last.OutcomeUnknown {
				t.Errorf("%s, %s: the server got %d; ended %s (%s), outcome unknown %v",
					hook, stop, got.Load(), last.Outcome, last.Reason, last.OutcomeUnknown)
			}
			srv.Close()
			base.CloseIdleConnections()
		}
	}
}
