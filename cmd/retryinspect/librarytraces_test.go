// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/internal/redact"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A handler creates an order, then a payment: two different writes, each
// sent once and answered 200. With otelhttp's Transport above otelretry,
// the transport counts the payment as a repeat under the handler's span
// (the parent of otelhttp's CLIENT span, a new one per call), and
// retryinspect, which looked for the earlier operation under the CLIENT
// span alone, reported the payment as an outer layer's resend on the
// marker alone (exit 1). It looks where the transport counts now.
func TestTwoWritesUnderOtelhttpAreNoOuterLayerResend(t *testing.T) {
	for _, above := range []string{"no otelhttp", "otelhttp above"} {
		t.Run(above, func(t *testing.T) {
			spans := traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
				base := scripted.New(scripted.Step{Status: 200}, scripted.Step{Status: 200})
				var rt http.RoundTripper = otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithoutClientSpans())
				if above == "otelhttp above" {
					rt = otelhttp.NewTransport(rt, otelhttp.WithTracerProvider(tp))
				}
				for _, u := range []string{"http://orders.test/orders", "http://payments.test/payments"} {
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(`{}`))
					if status := do(t, &http.Client{Transport: rt}, req); status != 200 {
						t.Fatalf("status %d", status)
					}
					time.Sleep(100 * time.Millisecond) // the handler's own work between the calls
				}
			})
			code, out, errOut := runOnFile(t, spans)
			if code != exitClean || strings.Contains(out, "[outer-layer-resend]") {
				t.Errorf("exit %d (stderr %q): two different writes, each sent once and answered 200, reported as an outer layer's resend:\n%s", code, errOut, out)
			}
		})
	}
}

// An otelretry Transport whose base is another (a library's retrying
// client under the application's): the outer one retries a POST the
// caller declared repeatable after a 503; each outer attempt is one inner
// operation, nested below the outer attempt's CLIENT span (the transport
// counts no repeat for it). retryinspect looked through that CLIENT span
// too, and took the two inner operations for an outer layer's resend.
func TestATransportBelowAnotherIsNoOuterLayerResend(t *testing.T) {
	spans := traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
		base := scripted.New(scripted.Step{Status: 503}, scripted.Step{Status: 200})
		inner := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
		outer := otelretry.NewTransport(inner, otelretry.WithTracerProvider(tp))
		ctx = otelretry.WithIntent(ctx, otelretry.Intent{Repeatable: true})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://search.test/query", strings.NewReader(`{}`))
		if status := do(t, &http.Client{Transport: outer}, req); status != 200 {
			t.Fatalf("status %d", status)
		}
		if n := len(base.Calls()); n != 2 {
			t.Fatalf("%d calls, want 2", n)
		}
	})
	code, out, errOut := runOnFile(t, spans)
	if strings.Contains(out, "[outer-layer-resend]") {
		t.Errorf("exit %d (stderr %q): the outer otelretry's own retry, under its contract, reported as an outer layer's resend:\n%s", code, errOut, out)
	}
}

// traceOf is the stdouttrace JSON of what send sends with tp under a
// handler's span (ctx), in virtual time.
func traceOf(t *testing.T, send func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context)) []byte {
	t.Helper()
	var spans bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tp := spanWriter(t, &spans)
		ctx, handler := tp.Tracer("app").Start(t.Context(), "handler", trace.WithSpanKind(trace.SpanKindServer))
		send(t, tp, ctx)
		handler.End()
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	return spans.Bytes()
}

// do sends req through c, reads its body whole and closes it, and returns
// the status.
func do(t *testing.T, c *http.Client, req *http.Request) int {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// libraryTraceOfGET is the trace of one GET of target through the library,
// answered 200.
func libraryTraceOfGET(t *testing.T, target string) []byte {
	t.Helper()
	return traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		do(t, &http.Client{Transport: otelretry.NewTransport(scripted.New(scripted.Step{Status: 200}), otelretry.WithTracerProvider(tp))}, req)
	})
}

// A request through a fetching proxy whose path holds the target URL with
// its credentials: internal/redact's String (error texts, retryinspect's
// display) hid the password, its URL (the url.full the transport records)
// kept it, and retryinspect, on the library's own trace, reported the
// library's spans (exit 1). Both redact it now.
func TestAProxysPathHoldingAPasswordIsCleanInTheLibrarysTrace(t *testing.T) {
	const target = "http://proxy.test/fetch/https://admin:hunter2@internal.test/report"
	if c := redact.String(target); strings.Contains(c, "hunter2") {
		t.Fatalf("precondition: redact.String = %q", c)
	}
	spans := libraryTraceOfGET(t, target)
	code, out, _ := runOnFile(t, spans)
	if n := strings.Count(string(spans), "hunter2"); n > 0 || code != exitClean {
		t.Errorf("the password internal/redact hides is in %d exported span attributes; retryinspect on the library's own trace: exit %d, %d [unredacted-url] findings", n, code, strings.Count(out, "[unredacted-url]"))
	}
}

// URLs the library records as they are (nothing to redact in them), and
// URLs it redacted (REDACTED:REDACTED for a userinfo) whose path holds an
// '@', are no leak to retryinspect. Each was reported unredacted-url on
// the library's own trace (exit 1): the text rule took a path's '@' after
// a host and port, or after a redacted userinfo, for a userinfo's end, a
// query key's escaped '@' for a raw one, and a redacted embedded URL was
// redacted anew.
func TestTheLibrarysURLsAreNoLeak(t *testing.T) {
	for _, target := range []string{
		"http://users.internal:8080/users/alice@example.com", // a path naming a user by e-mail
		"http://h.test/users/me:x@y/http://a.test/",          // the sanitizer's own case, left as it is
		"http://api.test/lookup?alice%40example.com",         // url.Values.Encode's escaped '@' in a key
		"http://svc:token@users.internal:8080/users/alice@example.com",
		"https://npmtoken@registry.test/@scope/pkg", // a registry token as the user, an npm scope
		"http://proxy.test/fetch/https://deploytoken@git.test/users/alice@example.com",
	} {
		t.Run(target, func(t *testing.T) {
			spans := libraryTraceOfGET(t, target)
			for _, secret := range []string{"token@", "npmtoken@", "deploytoken@"} {
				if strings.Contains(string(spans), secret) {
					t.Fatalf("setup: the trace holds the credential %q", secret)
				}
			}
			if code, out, _ := runOnFile(t, spans); strings.Contains(out, "[unredacted-url]") {
				t.Errorf("retryinspect on the library's own trace: exit %d:\n%s", code, grepLines(out, "unredacted-url"))
			}
		})
	}
}

func grepLines(s, sub string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// A handler charges two customers, each charge a call of its own wrapped
// in a CLIENT span of the caller's own (not put on the request's
// headers): the transport counts each call under its own CLIENT span and
// marks neither as a repeat, and retryinspect, which looks where the
// transport counts, reports no outer layer's resend. Before, it looked
// through any CLIENT span to the handler and reported the second charge
// as a resend of the first.
func TestCallsUnderClientSpansOfTheirOwnAreNoOuterLayerResend(t *testing.T) {
	var marked int
	spans := traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
		base := scripted.New(scripted.Step{Status: 500}, scripted.Step{Status: 201})
		client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))}
		for _, customer := range []string{"alice", "bob"} {
			callCtx, call := tp.Tracer("app").Start(ctx, "payments.charge "+customer, trace.WithSpanKind(trace.SpanKindClient))
			req, _ := http.NewRequestWithContext(callCtx, http.MethodPost, "http://payments.test/charges", strings.NewReader(`{"customer":"`+customer+`"}`))
			do(t, client, req)
			call.End()
			time.Sleep(100 * time.Millisecond) // the handler's own work between the calls
		}
	})
	marked = strings.Count(string(spans), `"retry.operation.repeat"`)
	code, out, errOut := runOnFile(t, spans)
	if strings.Contains(out, "[outer-layer-resend]") {
		t.Errorf("the transport marked %d operation(s) retry.operation.repeat (each charge was sent once, under a CLIENT span of its own); retryinspect: exit %d (stderr %q), reports an outer layer's resend:\n%s", marked, code, errOut, out)
	}
}

// A handler's loop sends one POST three times, each answered 503 at once
// on virtual time: three operations that start and end at one instant,
// which the transport numbers (retry.operation.repeat absent, 1, 2). Two
// are repeats, and the first repeats nothing: ordered by their random
// operation ids at equal starts, the first was now and then read as a
// repeat of a later one, and three findings made of two repeats.
func TestWritesAtOneInstantAreRepeatsInTheOrderTheyWereSent(t *testing.T) {
	for run := range 8 { // the ids are random: one order of them proves little
		spans := traceOf(t, func(t *testing.T, tp *sdktrace.TracerProvider, ctx context.Context) {
			rt := otelretry.NewTransport(scripted.New(scripted.Step{Status: http.StatusServiceUnavailable}), otelretry.WithTracerProvider(tp))
			for range 3 {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				do(t, &http.Client{Transport: rt}, req)
			}
		})
		r := analyzeWith(t, spans, read.Stdout)
		first := ""
		for _, op := range r.Operations {
			if op.Repeat == nil {
				first = op.ID
			}
		}
		var resends []string
		for _, f := range r.Findings {
			if f.Code == inspect.CodeOuterLayerResend {
				resends = append(resends, f.OperationID)
			}
		}
		if first == "" || len(resends) != 2 || slices.Contains(resends, first) {
			t.Fatalf("run %d: outer-layer-resend on %v; want the two repeats, never the first send %q", run, resends, first)
		}
	}
}
