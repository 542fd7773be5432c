// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// a047aca exempts every operation whose outcome is throttled from being
// the earlier try of outer-layer-resend (sentNothing). But docs/budget.md:
// "a refused retry ends the operation the same way with its last answer":
// such an operation did send its first attempt (here a POST answered 503
// with X-Should-Retry: true under WithShouldRetryWrites; the throttle
// refused the retry). A layer above that sends the POST again resends a
// write the server received; docs/retryinspect.md exempts only "an
// operation that sent nothing: one the throttle refused".
func TestAThrottledRetryAfterASentWriteIsAnEarlierTry(t *testing.T) {
	var spans []byte
	rec := tracetest.NewSpanRecorder()
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		tp := spanWriter(t, &out, sdktrace.WithSpanProcessor(rec))
		rt := otelretry.NewTransport(scripted.New(scripted.Step{Delay: time.Millisecond, Status: 503,
			Header: http.Header{"X-Should-Retry": {"true"}}}),
			otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans(), otelretry.WithMaxAttempts(3),
			otelretry.WithShouldRetryWrites(), otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithThrottle(&otelretry.Throttle{MaxRejection: 0.5}))
		for range 200 {
			ctx, handler := tp.Tracer("app").Start(t.Context(), "handler", trace.WithSpanKind(trace.SpanKindServer))
			ctx = otelretry.EnsureOperationID(ctx)
			for range 2 { // the layer sends the POST twice, whatever came back
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":1}`))
				if resp, err := rt.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
			}
			handler.End()
		}
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		spans = out.Bytes()
	})
	// Per handler, its two POST operations in start order.
	type op struct {
		span, outcome string
		attempts      int64
	}
	byHandler := map[trace.SpanID][]op{}
	for _, s := range rec.Ended() {
		o := op{span: s.SpanContext().SpanID().String(), attempts: -1}
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "retry.outcome":
				o.outcome = kv.Value.AsString()
			case "retry.attempts":
				o.attempts = kv.Value.AsInt64()
			}
		}
		if o.outcome != "" && s.Parent().IsValid() {
			byHandler[s.Parent().SpanID()] = append(byHandler[s.Parent().SpanID()], o) // ended in order: sequential
		}
	}
	_, out, _ := runOnFile(t, spans)
	dist := map[string]int{}
	for _, ops := range byHandler {
		k := ""
		for _, o := range ops {
			k += fmt.Sprintf("%s/%d ", o.outcome, o.attempts)
		}
		dist[k]++
	}
	t.Logf("distribution: %v", dist)
	cases := 0
	for _, ops := range byHandler {
		if len(ops) != 2 || ops[0].outcome != "throttled" || ops[0].attempts < 1 || ops[1].attempts < 1 {
			continue
		}
		cases++ // the first POST reached the server (503) before its retry was throttled; the second was sent again
		if !strings.Contains(grepLines(out, "[outer-layer-resend]"), "span "+ops[1].span) {
			t.Errorf("POST operation span %s resends POST operation span %s (outcome throttled after %d attempt(s) sent, answered 503) under the same handler span and operation id: no outer-layer-resend",
				ops[1].span, ops[0].span, ops[0].attempts)
		}
	}
	if cases == 0 {
		t.Skip("no layer whose first POST sent an attempt and was then throttled, and whose second was sent")
	}
	t.Logf("%d such layers; outer-layer-resend findings in all: %d", cases, strings.Count(out, "[outer-layer-resend]"))
}
