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

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A handler creates two orders, one after the other, each a POST of its
// own. The first one's answer is lost (the attempt timeout cuts it), and
// the state check says it was applied: the operation ends return, the
// stored 201 handed to the caller. The second order is sent once and
// answered 201. No layer above resent anything: the caller got a 201 for
// the first order, and docs/retryinspect.md's outer-layer-resend is "a
// layer above the transport repeated a failed non-idempotent operation".
// The first operation is no failure (its last attempt has no status, its
// state check said applied), and the second order no resend.
func TestAWriteAStateCheckFoundAppliedIsNoFailureToResend(t *testing.T) {
	spans := traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
		base := scripted.New(scripted.Step{Hang: true}, scripted.Step{Status: http.StatusCreated})
		client := &http.Client{Transport: otelretry.NewTransport(base,
			otelretry.WithTracerProvider(tp),
			otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithStateCheck(foundApplied))}
		sendTwoOrders(t, ctx, client, base)
	})
	code, out, errOut := runOnFile(t, spans)
	if code != exitClean || strings.Contains(out, "[outer-layer-resend]") {
		t.Errorf("exit %d (stderr %q): two orders, each sent once, the first found applied by its state check (outcome return, 201 to the caller), reported as an outer layer's resend:\n%s", code, errOut, grepLines(out, "outer-layer-resend"))
	}
}

// A POST's answer is lost (the attempt timeout cuts it) and the state
// check hook panics: one network call, then a panic that ends the
// operation. docs/retryinspect.md: for an operation a panic ended (a hook,
// the base or the telemetry) the spans show the operation with the outcome
// panicked "and the attempt the panic ended marked panicked (JSON) with
// no decision; neither is a finding". The transport writes the operation
// id and the attempt number on the state_check span the panic ended
// (CHANGELOG: "the second the operation id and the attempt"): that span is
// a state check with no result, not a second attempt.
func TestAPanickedStateCheckIsNoSecondAttempt(t *testing.T) {
	spans := traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
		base := scripted.New(scripted.Step{Hang: true})
		client := &http.Client{Transport: otelretry.NewTransport(base,
			otelretry.WithTracerProvider(tp),
			otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				panic("lookup exploded")
			}))}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":"A1"}`))
		func() {
			defer func() {
				if r := recover(); r != "lookup exploded" {
					t.Fatalf("recovered %v, want the hook's panic", r)
				}
			}()
			client.Do(req)
		}()
		if n := len(base.Calls()); n != 1 {
			t.Fatalf("%d calls, want 1", n)
		}
	})
	r := analyzeWith(t, spans, read.Stdout)
	code, out, _ := runOnFile(t, spans)
	attempts := 0
	for _, op := range r.Operations {
		attempts += len(op.Attempts)
	}
	if code != exitClean || len(r.Findings) > 0 || attempts != 1 {
		t.Errorf("one call, then a panicking state check hook: exit %d, %d attempt(s) read (want 1), findings:\n%s", code, attempts, grepLines(out, "["))
	}
}

// A job's loop sends one POST to a URL that answers 307 to another; the
// first chain ends with a 503 on its second hop (outcome stop, the write
// not repeatable), and the loop sends the POST again, which the transport
// marks retry.operation.repeat=1. Without the 307 the same loop is an
// outer-layer-resend ("a layer above the transport repeated a failed
// non-idempotent operation"); with it too: the chain's failed hop is a
// failure of its first hop's request (a 307 alone is no success), under
// the job's own operation id as under its parent span.
func TestALoopResendingAWriteWhoseRedirectChainFailedIsReported(t *testing.T) {
	for _, withID := range []bool{false, true} {
		name := "same parent span"
		if withID {
			name = "same operation id"
		}
		t.Run(name, func(t *testing.T) {
			spans := traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
				moved := http.Header{"Location": {"http://orders.test/v2/orders"}}
				base := scripted.New(
					scripted.Step{Status: http.StatusTemporaryRedirect, Header: moved}, scripted.Step{Status: http.StatusServiceUnavailable},
					scripted.Step{Status: http.StatusTemporaryRedirect, Header: moved}, scripted.Step{Status: http.StatusCreated})
				client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
				if withID {
					ctx = otelretry.WithOperationID(ctx, "order-42")
				}
				for _, want := range []int{http.StatusServiceUnavailable, http.StatusCreated} { // the loop: again until it is created
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":"A1"}`))
					if status := do(t, client, req); status != want {
						t.Fatalf("status %d, want %d", status, want)
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
			if !strings.Contains(string(spans), `"retry.operation.repeat"`) {
				t.Fatal("precondition: the transport marked no repeat")
			}
			code, out, _ := runOnFile(t, spans)
			if code != exitFindings || !strings.Contains(out, "[outer-layer-resend]") {
				t.Errorf("exit %d: the loop's resend of a write whose chain ended 503 (stop) is not reported:\n%s", code, grepLines(out, "operation "))
			}
		})
	}
}

// foundApplied is a state check that finds every write applied, with its
// stored 201.
func foundApplied(_ context.Context, check otelretry.StateCheck) (otelretry.StateResult, error) {
	return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{
		StatusCode: http.StatusCreated, Body: http.NoBody, Header: http.Header{}, Request: check.Request}}, nil
}

// sendTwoOrders sends two different orders, one after the other, each a
// POST to one URL through client, each answered 201 after one call of
// base (the first's answer lost and found applied, see foundApplied).
func sendTwoOrders(t *testing.T, ctx context.Context, client *http.Client, base *scripted.Transport) {
	t.Helper()
	for _, order := range []string{`{"sku":"A1"}`, `{"sku":"B2"}`} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(order))
		if status := do(t, client, req); status != http.StatusCreated {
			t.Fatalf("status %d, want 201", status)
		}
		time.Sleep(10 * time.Millisecond) // the caller's own work between the calls
	}
	if n := len(base.Calls()); n != 2 {
		t.Fatalf("%d calls, want 2 (one per order)", n)
	}
}
