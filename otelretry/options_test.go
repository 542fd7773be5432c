// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// WithRetryableStatuses replaces the set: a status in it is retried, one
// outside it (even a default one) is not.
func TestWithRetryableStatusesReplacesTheSet(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   []string
	}{
		{500, []string{"500 retry retryable_status", "200 return response"}},
		{503, []string{"503 stop status"}},
	} {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Status: tc.status}, {Status: 200}},
				append(seedLike, otelretry.WithRetryableStatuses(500))...)
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			sameTuples(t, h, tc.want...)
		})
	}
}

// Both formatters name their spans, for every attempt; with client spans
// the attempt formatter names otelhttp's CLIENT span.
func TestSpanNameFormatters(t *testing.T) {
	for _, clientSpans := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			opts := append(seedLike,
				otelretry.WithSpanNameFormatter(func(r *http.Request) string { return "orders " + r.Method }),
				otelretry.WithAttemptSpanNameFormatter(func(r *http.Request) string { return "orders call " + r.Method }))
			if !clientSpans {
				opts = append(opts, otelretry.WithoutClientSpans())
			}
			h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, opts...)
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/orders/1"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := h.operation(t).Name(); got != "orders GET" {
				t.Errorf("clientSpans=%v: operation span %q, want %q", clientSpans, got, "orders GET")
			}
			attempts := h.attempts()
			if len(attempts) != 2 {
				t.Fatalf("attempt spans = %d, want 2", len(attempts))
			}
			for _, a := range attempts {
				if a.Name() != "orders call GET" {
					t.Errorf("clientSpans=%v: attempt span %q, want %q", clientSpans, a.Name(), "orders call GET")
				}
			}
		})
	}
}

// A 101 Switching Protocols answer is a success: the operation returns it,
// and its body stays a writable connection through the transport's
// wrappers, on loopback with net/http's own upgrade.
func TestSwitchingProtocolsKeepsTheConnectionWritable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		brw.Flush()
		line, err := brw.ReadString('\n') // echo one line back
		if err == nil {
			brw.WriteString("echo: " + line)
			brw.Flush()
		}
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rec := tracetest.NewSpanRecorder()
	tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "echo")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want 101", resp.StatusCode)
	}
	rw, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		t.Fatalf("the 101 body (%T) is not writable", resp.Body)
	}
	if _, err := io.WriteString(rw, "hello\n"); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(rw).ReadString('\n')
		done <- line
	}()
	select {
	case line := <-done:
		if strings.TrimSpace(line) != "echo: hello" {
			t.Errorf("read %q, want the echo", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no echo within 5s")
	}
	rw.Close()
	op := spantest.Operations(rec.Ended())
	if len(op) != 1 || attrOf(op[0], attrs.OutcomeKey).AsString() != "return" {
		t.Errorf("operation spans %d, want one ending return", len(op))
	}
}
