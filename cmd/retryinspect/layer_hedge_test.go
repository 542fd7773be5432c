// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A layer above the transport hedges a POST itself: it sends the write and,
// 100 ms later, the first still in flight, sends it again under the same
// WithOperationID, with no contract. The trace cannot tell that from a
// job's fan-out of two orders to one URL (their bodies are not recorded):
// it is read as a fan-out, with no finding, as docs/retryinspect.md's
// unsafe-hedge row says (a reviewer's run, which found the doc silent).
func TestALayerHedgingAWriteIsReadAsAFanOut(t *testing.T) {
	spans := traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
		base := scripted.New(scripted.Step{Delay: 500 * time.Millisecond, Status: 201}, scripted.Step{Delay: 10 * time.Millisecond, Status: 201})
		client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
		ctx = otelretry.WithOperationID(ctx, "order-42")
		post := func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":"A1"}`))
			do(t, client, req)
		}
		var wg sync.WaitGroup
		wg.Go(post)
		time.Sleep(100 * time.Millisecond) // the layer's hedge delay
		wg.Go(post)
		wg.Wait()
		if n := len(base.Calls()); n != 2 {
			t.Fatalf("%d calls, want 2", n)
		}
	})
	if code, out, _ := runOnFile(t, spans); code != exitClean || strings.Contains(out, "[unsafe-hedge]") {
		t.Errorf("exit %d, want %d (read as a fan-out):\n%s", code, exitClean, out)
	}
}
