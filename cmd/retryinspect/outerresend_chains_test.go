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

	"github.com/otelretry/otelretry-go/otelretry"
)

// chainsAtOnce sends, under the handler's span, two POST chains at once
// (a fan-out): POST /orders, 307 to /v2/orders, answered 503 (stop: the
// write is not repeatable); and POST /payments, 307 to /v2/payments,
// answered 201. The /payments chain runs whole while the /orders chain's
// first hop is held: it starts after the /orders chain's first hop and
// ends before its second starts, each at an instant of its own. Once both
// returned, then sends the POST given (as a loop or a new call would).
// Under a job's WithOperationID (id not ""), the chains' hops all share
// that id.
func chainsAtOnce(t *testing.T, then, id string) []byte {
	return traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
		if id != "" {
			ctx = otelretry.WithOperationID(ctx, id)
		}
		paymentsDone := make(chan struct{})
		var once sync.Once
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			answer := func(status int, location string) (*http.Response, error) { return answerTo(r, status, location) }
			switch r.URL.Path {
			case "/orders":
				<-paymentsDone               // the other chain ran while this hop was held
				time.Sleep(time.Millisecond) // (synctest's clock) the second hop starts at an instant of its own
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

// TestASecondPaymentAfterConcurrentChainsIsNoResend: the /payments
// chain succeeded (201); the handler then makes a second payment. Per
// docs/retryinspect.md, outer-layer-resend is "a layer above the transport
// repeated a failed non-idempotent operation": the /payments request never
// failed, so no finding. The /orders chain's failed hop must not be laid
// on the /payments chain's first hop because it started last, under a
// parent span or under a job's one operation id.
func TestASecondPaymentAfterConcurrentChainsIsNoResend(t *testing.T) {
	for _, id := range []string{"", "job-7"} {
		t.Run("id="+id, func(t *testing.T) { secondPaymentIsNoResend(t, id) })
	}
}

func secondPaymentIsNoResend(t *testing.T, id string) {
	spans := chainsAtOnce(t, "/payments", id)
	code, out, _ := runOnFile(t, spans)
	if strings.Contains(out, "[outer-layer-resend]") {
		t.Errorf("exit %d: a POST /payments after the /payments chain answered 201 reported as an outer layer's resend:\n%s", code, grepLines(out, "outer-layer-resend"))
	}
}

// TestALoopResendingAChainThatFailedBesideAnotherIsReported: the
// /orders chain failed on its second hop (503, stop), and the handler
// sends POST /orders again: the CHANGELOG says a loop's resend of a write
// whose redirect chain failed on a later hop is found; a chain running
// beside it under the same parent span, or the same operation id, must
// not hide it.
func TestALoopResendingAChainThatFailedBesideAnotherIsReported(t *testing.T) {
	for _, id := range []string{"", "job-7"} {
		t.Run("id="+id, func(t *testing.T) { resendOfTheFailedChainIsReported(t, id) })
	}
}

func resendOfTheFailedChainIsReported(t *testing.T, id string) {
	spans := chainsAtOnce(t, "/orders", id)
	code, out, _ := runOnFile(t, spans)
	if code != exitFindings || !strings.Contains(out, "[outer-layer-resend]") {
		t.Errorf("exit %d: the resend of POST /orders after its chain ended 503 is not reported:\n%s", code, grepLines(out, "operation "))
	}
}

// answerTo answers r, whose body it closes, with status and, when given, a
// Location.
func answerTo(r *http.Request, status int, location string) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	h := http.Header{}
	if location != "" {
		h.Set("Location", location)
	}
	return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
}
