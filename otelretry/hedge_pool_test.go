// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A hedge queued behind MaxConnsPerHost=1 on HTTP/1.1 waits for the one
// connection; the first attempt wins while the hedge still waits (its
// body unread holds the connection), so the hedge never got a connection
// and the server never saw it (layers.md: a request cut before GotConn is
// proved unsent). docs/budget.md: a hedge "takes 1 token where it is
// admitted ... gives it back if it is not sent". Eight such operations
// leave the budget where it was: no hedge refused for the budget (a
// reviewer's find: each such hedge kept its token, and the seventh was
// refused).
func TestAHedgeQueuedForTheOnlyConnectionCostsNoToken(t *testing.T) {
	const ops = 8
	requests, conns, spans := queuedHedges(t, ops, otelretry.Hedging{Delay: time.Millisecond, MaxShare: 1}, time.Second)
	var sent, refused int
	var reasons []string
	for _, op := range spantest.Operations(spans) {
		for _, e := range op.Events() {
			switch e.Name {
			case "hedge_sent":
				sent++
			case "hedge_refused":
				refused++
				for _, kv := range e.Attributes {
					if kv.Key == attribute.Key("retry.reason") {
						reasons = append(reasons, kv.Value.AsString())
					}
				}
			}
		}
	}
	t.Logf("ops=%d requests at server=%d connections=%d hedge_sent=%d hedge_refused=%d %v",
		ops, requests, conns, sent, refused, reasons)
	if requests != ops {
		t.Fatalf("server saw %d requests, want %d (the hedges never reached it)", requests, ops)
	}
	if refused > 0 {
		t.Errorf("hedges refused %v after %d hedges that never left the pool's queue: their tokens were not given back", reasons, sent)
	}
}

// A hedge its race's win cut while its span started (a span processor's
// OnStart outlasting the first attempt's answer) never reached its base:
// its host saw nothing, and its token is given back, as docs/telemetry.md
// says (it was kept before a hedge that never left gave its token back).
// Tokens 7 and a ratio of 0.001 tell the two apart: 3 retries in a row
// with the token back, 2 without.
func TestAHedgeCutWhileItStartedGivesItsTokenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls, clientStarts atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			select {
			case <-time.After(300 * time.Millisecond):
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		slowHedgeStart := onStartFunc(func(_ context.Context, s sdktrace.ReadWriteSpan) {
			if s.SpanKind() == trace.SpanKindClient && clientStarts.Add(1) == 2 {
				time.Sleep(time.Second) // the hedge's span: past the first attempt's answer
			}
		})
		budget := &otelretry.Budget{Tokens: 7, TokenRatio: 0.001}
		tr := otelretry.NewTransport(base, otelretry.WithBudget(budget),
			otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(slowHedgeStart))),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
		req := get(t, t.Context(), "http://api.test/items")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n := calls.Load(); n != 1 || clientStarts.Load() != 2 {
			t.Fatalf("%d base calls, %d attempt spans started; want 1 and 2 (the hedge cut while it started)", n, clientStarts.Load())
		}
		if got := budget.Available(req); got != 3 {
			t.Errorf("%d retries available after the hedge, want 3: its token given back", got)
		}
	})
}

// TestQueuedHedgesStayWithinTheRateBound: a hedge that waits in net/http's
// queue for the one connection and is canceled there never left, and gives
// its budget token back, but it was a hedge sent (its span, hedge_sent)
// and keeps its hedge-rate token: 64 operations send at most burst +
// MaxShare × 64 of them, as docs/hedging.md says (a reviewer's find: the
// rate token was given back too, and every operation sent one).
func TestQueuedHedgesStayWithinTheRateBound(t *testing.T) {
	const ops = 64
	const share = 0.05
	requests, _, spans := queuedHedges(t, ops, otelretry.Hedging{Delay: time.Millisecond, MaxShare: share}, 20*time.Millisecond)
	var sent int
	for _, op := range spantest.Operations(spans) {
		for _, e := range op.Events() {
			if e.Name == "hedge_sent" {
				sent++
			}
		}
	}
	hedgeSpans := 0
	for _, a := range spantest.Attempts(spans) {
		if _, ok := spantest.Attr(a, attrs.HedgeOfKey); ok {
			hedgeSpans++
		}
	}
	burst := max(1, 100*share)
	bound := burst + share*float64(ops)
	if requests != ops {
		t.Errorf("the server saw %d requests for %d operations: a queued hedge left", requests, ops)
	}
	if float64(sent) > bound || float64(hedgeSpans) > bound {
		t.Errorf("%d operations sent %d hedges (%d hedge attempt spans), over burst + MaxShare × N = %.1f",
			ops, sent, hedgeSpans, bound)
	}
}

// queuedHedges sends ops GETs, one after another, through a Transport that
// hedges with h over a base of one connection (MaxConnsPerHost 1), to a
// server whose answer waits until the operation's hedge asks for that
// connection (or wait, for a hedge that was refused): each hedge waits in
// net/http's queue and is canceled there when the first attempt wins. It
// returns the requests and the connections the server saw, and the spans.
func queuedHedges(t *testing.T, ops int, h otelretry.Hedging, wait time.Duration) (requests, conns int32, spans []sdktrace.ReadOnlySpan) {
	t.Helper()
	var requested, connected atomic.Int32
	var mu sync.Mutex
	var queued chan struct{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requested.Add(1)
		mu.Lock()
		q := queued
		mu.Unlock()
		select {
		case <-q: // the hedge waits for this connection
		case <-time.After(wait): // bound: a refused hedge never queues
		}
		w.Header().Set("Content-Length", "2")
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			connected.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	base.MaxConnsPerHost = 1
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithHedging(h))
	for i := range ops {
		q := make(chan struct{})
		mu.Lock()
		queued = q
		mu.Unlock()
		var gets atomic.Int32
		trace := &httptrace.ClientTrace{GetConn: func(string) {
			if gets.Add(1) == 2 {
				close(q)
			}
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, srv.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if gets.Load() < 2 {
			close(q)
		}
	}
	return requested.Load(), connected.Load(), rec.Ended()
}
