// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A TLS handshake that failed in a PrepareAttemptFunc's own call, made
// with the attempt's context before the attempt was sent, is that call's,
// not the attempt's: it proves nothing about the request sent after it.
// Here the base then asks for a connection and fails with that very error
// (as a layer sharing one dial between calls would), a read from a
// connection it never got: a POST that may have left, so check_state,
// never a resend. Taking the earlier handshake for the attempt's
// (tlsHandshakeDone without its live check, a mutant no test caught)
// resent the write as never processed.
func TestAHandshakeAPrepareCallHeardFailIsNotTheAttempts(t *testing.T) {
	addr := handshakeResettingServer(t)

	side := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	t.Cleanup(side.CloseIdleConnections)
	var sideHandshake atomic.Pointer[error]
	prepare := func(req *http.Request, attempt int) error {
		if attempt != 1 {
			return nil
		}
		// The prepare's own call (a token fetch, say), on the attempt's
		// context; its failure is ignored, as a cached token would be used.
		ctx := httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
				if err != nil {
					sideHandshake.Store(&err)
				}
			},
		})
		call, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/token", nil)
		if resp, err := side.RoundTrip(call); err == nil {
			resp.Body.Close()
			return fmt.Errorf("the side call got %d; want its handshake to fail", resp.StatusCode)
		}
		return nil
	}

	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		p := sideHandshake.Load()
		if p == nil {
			return nil, errors.New("no handshake failure was heard by the side call")
		}
		if tr := httptrace.ContextClientTrace(r.Context()); tr != nil && tr.GetConn != nil {
			tr.GetConn(r.URL.Host)
		}
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: *p}
	})

	rec := tracetest.NewSpanRecorder()
	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
		otelretry.WithPrepareAttempt(prepare),
		otelretry.WithMaxAttempts(3),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
		otelretry.WithDeadline(10*time.Second))}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://api.test/orders",
		strings.NewReader(`{"sku":1}`))
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got %d; want the base's error", resp.StatusCode)
	}
	if sideHandshake.Load() == nil {
		t.Fatalf("the side call's handshake did not fail: %v", err)
	}
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("error %v does not match ErrOutcomeUnknown: a POST whose connection read failed may have left", err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("the base was called %d times; want 1: a write that may have left is not resent", got)
	}
	a := spantest.Attempts(rec.Ended())
	if len(a) != 1 {
		t.Fatalf("%d attempt spans; want 1", len(a))
	}
	if d := attrOf(a[0], attrs.DecisionKey).AsString(); d != string(attrs.DecisionCheckState) {
		t.Errorf("decision %s (reason %s); want check_state", d, attrOf(a[0], attrs.ReasonKey).AsString())
	}
}

// handshakeResettingServer listens on 127.0.0.1 and resets every
// connection once it has read the ClientHello, so a TLS client's
// handshake fails reading the server's hello.
func handshakeResettingServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			hdr := make([]byte, 5) // the ClientHello's record header
			if _, err := io.ReadFull(c, hdr); err == nil {
				io.CopyN(io.Discard, c, int64(hdr[3])<<8|int64(hdr[4]))
			}
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); wg.Wait() })
	return l.Addr().String()
}
