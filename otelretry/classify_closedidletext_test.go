// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

type postOutcome struct {
	class, decision, reason string
	err                     error
}

// firstPostAttempt sends one POST (two attempts allowed) through base and
// returns the first attempt's class, decision and reason.
func firstPostAttempt(t *testing.T, base http.RoundTripper, target string, opts ...otelretry.Option) postOutcome {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	opts = append([]otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithoutBudget(), otelretry.WithMaxAttempts(2)}, opts...)
	c := &http.Client{Transport: otelretry.NewTransport(base, opts...)}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(`{"n":1}`))
	resp, err := c.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	as := spantest.Attempts(rec.Ended())
	if len(as) == 0 {
		t.Fatalf("no attempt spans; err %v", err)
	}
	a := as[0]
	class, _ := spantest.Attr(a, "retry.error_class")
	decision, _ := spantest.Attr(a, "retry.decision")
	reason, _ := spantest.Attr(a, "retry.reason")
	o := postOutcome{class.AsString(), decision.AsString(), reason.AsString(), err}
	t.Logf("class=%s decision=%s reason=%s err=%v", o.class, o.decision, o.reason, err)
	return o
}

// docs/decisions.md row 15: a failure from a base other than net/http's
// Transport, before it reported anything through httptrace, proves
// nothing: a write's outcome is unknown (check_state). net/http's "server
// closed idle connection" proves a write unsent only beside the trace of
// the reused connection it is met on; a base of one's own that sent the
// POST out of the trace and then failed with an error so worded got the
// write resent (a reviewer's find).
func TestServerClosedIdleTextFromABaseOfOnesOwnProvesNothing(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posts.Add(1) }))
	defer srv.Close()
	inner := &http.Transport{}
	defer inner.CloseIdleConnections()
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		// a base of one's own sends without net/http's httptrace (here: a
		// context of its own), as one over another client would
		resp, err := inner.RoundTrip(r.WithContext(context.Background()))
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		// the base's own failure after the exchange, worded by coincidence as net/http's
		return nil, fmt.Errorf("mybase: %w", errors.New("http: server closed idle connection"))
	})
	o := firstPostAttempt(t, base, srv.URL+"/orders")
	if n := posts.Load(); n != 1 || o.decision != "check_state" {
		t.Errorf("server got %d POSTs; first attempt decision %s/%s class %s: want 1 POST and check_state (a custom base's error text proves nothing)",
			n, o.decision, o.reason, o.class)
	}
}

// Beside the trace of its connection, the text proves nothing once the
// request was reported written: a base that reports the connection it
// took and the request written (as net/http would not, for this error)
// and then returns the text gets no resend (a reviewer's question on the
// fix, which looks at GotConn alone: the write reported wins).
func TestServerClosedIdleTextAfterTheRequestWasWrittenProvesNothing(t *testing.T) {
	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		if trace := httptrace.ContextClientTrace(r.Context()); trace != nil {
			if trace.GotConn != nil {
				trace.GotConn(httptrace.GotConnInfo{Reused: true})
			}
			if trace.WroteHeaders != nil {
				trace.WroteHeaders()
			}
			if trace.WroteRequest != nil {
				trace.WroteRequest(httptrace.WroteRequestInfo{})
			}
		}
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
		}
		return nil, errors.New("http: server closed idle connection")
	})
	o := firstPostAttempt(t, base, "http://api.test/orders")
	if n := calls.Load(); n != 1 || o.decision != "check_state" {
		t.Errorf("%d calls; first attempt %s/%s: want 1 call and check_state", n, o.decision, o.reason)
	}
}
