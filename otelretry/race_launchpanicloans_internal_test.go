// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// panicsOnHedgeStart is a span processor whose OnStart of the second
// CLIENT span (the hedge's) panics.
type panicsOnHedgeStart struct {
	sdktrace.SpanProcessor
	clients atomic.Int32
}

func (p *panicsOnHedgeStart) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	if s.SpanKind() == trace.SpanKindClient && p.clients.Add(1) == 2 {
		panic("processor broke")
	}
	p.SpanProcessor.OnStart(ctx, s)
}

// A hedge whose launch panics (a span processor's OnStart on the hedge's
// span) ends the race as any hook's panic does: the panic goes on in the
// caller (doc.go), and the hedge's budget loan is settled at the race's
// end, whatever the hedge came to: the Budget keeps no loan open. The
// cases: the first attempt hangs until cut, or answers 200 or 503 just
// after the hedge's launch.
func TestAHedgeWhoseLaunchPanicsLeavesNoLoanOpen(t *testing.T) {
	for _, first := range []int{0, 200, 503} {
		synctest.Test(t, func(t *testing.T) {
			b := &Budget{}
			base := baseFunc(func(r *http.Request) (*http.Response, error) {
				wait := time.Hour
				if first != 0 {
					wait = 11 * time.Millisecond
				}
				select {
				case <-r.Context().Done():
					return nil, r.Context().Err()
				case <-time.After(wait):
				}
				return &http.Response{StatusCode: first, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(&panicsOnHedgeStart{SpanProcessor: sdktrace.NewSimpleSpanProcessor(nil)}))
			tr := NewTransport(base, WithBudget(b), WithMaxAttempts(3), WithTracerProvider(tp),
				WithHedging(Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
			if p := roundTripPanic(tr, "http://api.test/x"); p != "processor broke" {
				t.Errorf("first %d: recovered %v, want the processor's panic to reach the caller", first, p)
			}
			synctest.Wait()
			b.mu.Lock()
			defer b.mu.Unlock()
			for k, h := range b.hosts {
				if n := len(h.loans.open); n != 0 {
					t.Errorf("first %d: host %s has %d loans open after the race ended", first, k, n)
				}
			}
		})
	}
}
