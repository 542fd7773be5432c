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

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/otelretry"
)

// reviewChainsAtOnceUnderOneID is outerresend_chains_test.go's
// chainsAtOnce under a job's own operation id (WithOperationID: "Create it
// at the operation boundary (where the user action or job starts), before
// the first call"): the job sends two POST chains at once, POST /orders
// (307 to /v2/orders, answered 503: stop) and POST /payments (307 to
// /v2/payments, answered 201), the /payments chain running whole while
// the /orders chain's first hop is held; once both returned, it sends the
// POST given.
func reviewChainsAtOnceUnderOneID(t *testing.T, then string) []byte {
	return traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
		ctx = otelretry.WithOperationID(ctx, "job-7")
		paymentsDone := make(chan struct{})
		var once sync.Once
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Body != nil {
				r.Body.Close()
			}
			answer := func(status int, location string) (*http.Response, error) {
				h := http.Header{}
				if location != "" {
					h.Set("Location", location)
				}
				return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
			}
			switch r.URL.Path {
			case "/orders":
				<-paymentsDone
				time.Sleep(time.Millisecond) // (synctest's clock)
				return answer(http.StatusTemporaryRedirect, "http://shop.test/v2/orders")
			case "/payments":
				return answer(http.StatusTemporaryRedirect, "http://shop.test/v2/payments")
			case "/v2/orders":
				return answer(http.StatusServiceUnavailable, "")
			case "/v2/payments":
				once.Do(func() { close(paymentsDone) })
				return answer(http.StatusCreated, "")
			default:
				return answer(http.StatusCreated, "")
			}
		})
		client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
		send := func(path string) int {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://shop.test"+path, strings.NewReader(`{"sku":"A1"}`))
			return do(t, client, req)
		}
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		wg.Go(func() { statuses[0] = send("/orders") })
		time.Sleep(time.Millisecond) // (synctest's clock) the /payments chain starts second
		wg.Go(func() { statuses[1] = send("/payments") })
		wg.Wait()
		if statuses[0] != http.StatusServiceUnavailable || statuses[1] != http.StatusCreated {
			t.Fatalf("statuses %v; want [503 201]", statuses)
		}
		time.Sleep(10 * time.Millisecond)
		send(then)
	})
}

// TestASecondPaymentAfterConcurrentChainsUnderOneIDIsNoResend: the
// /payments chain succeeded (201), so a later POST /payments repeats no
// failed operation (docs/retryinspect.md: outer-layer-resend is "a layer
// above the transport repeated a failed non-idempotent operation"). The
// /orders chain's failed hop must not be laid on the /payments chain's
// first hop: TestASecondPaymentAfterConcurrentChainsIsNoResend pins this
// under a parent span; under one operation id the chains' heads share a
// key.
func TestASecondPaymentAfterConcurrentChainsUnderOneIDIsNoResend(t *testing.T) {
	spans := reviewChainsAtOnceUnderOneID(t, "/payments")
	code, out, _ := runOnFile(t, spans)
	if strings.Contains(out, "[outer-layer-resend]") {
		t.Errorf("exit %d: a POST /payments after the /payments chain answered 201 reported as an outer layer's resend:\n%s", code, grepLines(out, "outer-layer-resend")+grepLines(out, "repeats"))
	}
}

// TestALoopResendingAChainThatFailedBesideAnotherUnderOneIDIsReported:
// the /orders chain failed on its second hop (503, stop) and the job sends
// POST /orders again: "a chain whose later hop failed is a failure of its
// first hop's request" (docs/retryinspect.md), found under one parent span
// (TestALoopResendingAChainThatFailedBesideAnotherIsReported); under the
// job's operation id it must be found too.
func TestALoopResendingAChainThatFailedBesideAnotherUnderOneIDIsReported(t *testing.T) {
	spans := reviewChainsAtOnceUnderOneID(t, "/orders")
	code, out, _ := runOnFile(t, spans)
	if code != exitFindings || !strings.Contains(out, "[outer-layer-resend]") {
		t.Errorf("exit %d: the resend of POST /orders after its chain ended 503 is not reported:\n%s", code, grepLines(out, "operation "))
	}
}

// TestAnIPv6DependencyIsNamedAsTheTransportKeysIt: docs/budget.md,
// "A dependency, on every page and in retryinspect, is what the budget is
// kept per: the request's host as its URL writes it". The transport keeps
// https://[::1]/x under "[::1]" (otelretry's
// TestHostOfDropsTheSchemesDefaultPort: "https://[::1]:443/x": "[::1]");
// retryinspect, on the library's own trace of that GET, must name it so.
func TestAnIPv6DependencyIsNamedAsTheTransportKeysIt(t *testing.T) {
	for _, target := range []string{"https://[::1]/x", "http://[::1]/x"} {
		r := analyzeWith(t, libraryTraceOfGET(t, target), read.Stdout)
		if len(r.Operations) != 1 {
			t.Fatalf("%s: %d operations read, want 1", target, len(r.Operations))
		}
		if got := r.Operations[0].Dependency; got != "[::1]" {
			t.Errorf("%s: retryinspect names the dependency %q; the transport keeps it as %q", target, got, "[::1]")
		}
	}
}
