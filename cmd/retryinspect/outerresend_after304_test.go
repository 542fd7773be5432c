// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/otelretry"
)

// afterA304 sends, one call after another (none at once): a
// conditional GET /config answered 304 Not Modified (a 3xx no client
// follows: no Location), then POST /orders, 307 to /v2/orders, answered
// 503 (stop), then POST /orders again, as a loop would. underID: all under
// one WithOperationID, else only under the handler's span.
func afterA304(t *testing.T, underID bool) []byte {
	return traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
		if underID {
			ctx = otelretry.WithOperationID(ctx, "job-8")
		}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			answer := func(status int, location string) (*http.Response, error) { return answerTo(r, status, location) }
			switch r.URL.Path {
			case "/config":
				return answer(http.StatusNotModified, "")
			case "/orders":
				return answer(http.StatusTemporaryRedirect, "http://shop.test/v2/orders")
			case "/v2/orders":
				return answer(http.StatusServiceUnavailable, "")
			default:
				return answer(http.StatusCreated, "")
			}
		})
		client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
		get, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://shop.test/config", nil)
		get.Header.Set("If-None-Match", `"v1"`)
		if s := do(t, client, get); s != http.StatusNotModified {
			t.Fatalf("GET /config: %d, want 304", s)
		}
		time.Sleep(time.Millisecond) // (synctest's clock)
		post := func() int {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://shop.test/orders", strings.NewReader(`{"sku":"A1"}`))
			return do(t, client, req)
		}
		if s := post(); s != http.StatusServiceUnavailable {
			t.Fatalf("POST /orders: %d, want 503", s)
		}
		time.Sleep(10 * time.Millisecond)
		post()
	})
}

// docs/retryinspect.md, outer-layer-resend: "a chain whose later hop
// failed is a failure of its first hop's request". A 304 answered earlier
// under the same context is no redirect any hop follows; it must not make
// the /orders chain's hop ambiguous and hide the loop's resend.
func TestAResendAfterAFailedChainIsReportedAfterA304(t *testing.T) {
	for _, underID := range []bool{false, true} {
		name := "parent span"
		if underID {
			name = "operation id"
		}
		t.Run(name, func(t *testing.T) {
			spans := afterA304(t, underID)
			code, out, _ := runOnFile(t, spans)
			if code != exitFindings || !strings.Contains(out, "[outer-layer-resend]") {
				t.Errorf("exit %d: the resend of POST /orders after its chain ended 503 is not reported (an earlier 304 under the same %s):\n%s", code, name, out)
			}
		})
	}
}
