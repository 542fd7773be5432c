// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// closingServer accepts connections and ends each at once: closed, or
// half-closed (its FIN sent) while it counts the bytes it still receives.
// received returns those counts once every connection is done.
func closingServer(t *testing.T, halfClose bool) (addr string, received func() []int) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var mu sync.Mutex
	var got []int
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if !halfClose {
				c.Close()
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.(*net.TCPConn).CloseWrite()
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				n, _ := io.Copy(io.Discard, c)
				mu.Lock()
				got = append(got, int(n))
				mu.Unlock()
			}()
		}
	}()
	return l.Addr().String(), func() []int {
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), got...)
	}
}

// A server that ends a connection as a POST begins on it: net/http says
// "http: server closed idle connection" (an unexported errors.New) where
// it saw the close before it counted the request, and closed the socket
// before handing the request to its writer (the server gets 0 bytes), or
// a reset, an EOF or a closed connection where the close and the write
// raced. Each is class connection_reset; the first proves the write
// unsent (not resent here: one attempt allowed), the others leave it
// unknown. The first was class other and a write's outcome unknown; the
// last was class other.
func TestAConnectionTheServerClosedIsAResetWhicheverErrorNetHTTPGives(t *testing.T) {
	for _, halfClose := range []bool{true, false} {
		t.Run(map[bool]string{true: "half-closed", false: "closed"}[halfClose], func(t *testing.T) {
			addr, received := closingServer(t, halfClose)
			var unsentRuns []bool
			for range 10 {
				base := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
					if err == nil {
						time.Sleep(30 * time.Millisecond) // the server's close arrives before the request is written
					}
					return c, err
				}}
				rec := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
				c := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithoutBudget(),
					otelretry.WithMaxAttempts(1))}
				ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
					time.Sleep(20 * time.Millisecond) // net/http's reader sees the close before the request is counted
				}})
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/orders", strings.NewReader(`{"n":1}`))
				resp, err := c.Do(req)
				if err == nil {
					resp.Body.Close()
					t.Fatal("want an error")
				}
				base.CloseIdleConnections()
				a := spantest.Attempts(rec.Ended())[0]
				class, _ := spantest.Attr(a, "retry.error_class")
				decision, _ := spantest.Attr(a, "retry.decision")
				if class.AsString() != "connection_reset" {
					t.Errorf("class %s, want connection_reset (err %v)", class.AsString(), err)
				}
				unsent := strings.Contains(err.Error(), "http: server closed idle connection")
				unsentRuns = append(unsentRuns, unsent)
				if unsent == errors.Is(err, otelretry.ErrOutcomeUnknown) || unsent == (decision.AsString() == "check_state") {
					t.Errorf("decision %s, ErrOutcomeUnknown %v, for %v: want unknown only where nothing proves the write unsent",
						decision.AsString(), errors.Is(err, otelretry.ErrOutcomeUnknown), err)
				}
			}
			if !halfClose {
				return
			}
			// One connection a run, in turn: the server's counts say what
			// each run's write reached it.
			for i, n := range received() {
				if i < len(unsentRuns) && unsentRuns[i] && n != 0 {
					t.Errorf("run %d: the server got %d bytes of a write net/http said it closed before writing", i, n)
				}
			}
		})
	}
}
