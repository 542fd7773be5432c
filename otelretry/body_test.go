// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// The body of the response handed to the caller belongs to the caller's
// context alone: read after the operation ended (its span ended when the
// headers came), past the attempt timeout and the operation deadline, it
// arrives whole.
func TestResponseBodyReadAfterTheOperationEndedArrivesWhole(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "head-")
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "tail")
	}))
	defer srv.Close()
	rec, opts := tracingProviders()
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rt := otelretry.NewTransport(base, append(opts, otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(200*time.Millisecond))...)
	resp, err := rt.RoundTrip(get(t, context.Background(), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if ops := spantest.Operations(rec.Ended()); len(ops) != 1 {
		t.Errorf("%d operation spans ended when the headers came, want 1", len(ops))
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != "head-tail" {
		t.Errorf("read %q, %v; want head-tail", b, err)
	}
}

// The attempt timeout bounds the wait for an answer, not the body of the
// answer handed to the caller: a one-second stream is read whole with the
// defaults and with a 300ms attempt timeout, and only the caller's own
// context cuts it.
func TestStreamedBodyBelongsToTheCaller(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 20 {
			if i > 0 {
				select {
				case <-time.After(50 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
			io.WriteString(w, "chunk\n")
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close) // the subtests run in parallel, after this function returns
	cases := []struct {
		name      string
		opts      []otelretry.Option
		callerTTL time.Duration
		whole     bool
	}{
		{"defaults", nil, 0, true},
		{"300ms attempt timeout", []otelretry.Option{otelretry.WithAttemptTimeout(300 * time.Millisecond)}, 0, true},
		{"400ms operation deadline", []otelretry.Option{otelretry.WithDeadline(400 * time.Millisecond)}, 0, true},
		{"500ms caller deadline", nil, 500 * time.Millisecond, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := srv.Client().Transport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: otelretry.NewTransport(base, tc.opts...)}
			ctx := t.Context()
			if tc.callerTTL > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.callerTTL)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			chunks := strings.Count(string(data), "chunk\n")
			if tc.whole && (err != nil || chunks != 20) {
				t.Fatalf("read %d of 20 chunks, err %v: the stream was cut", chunks, err)
			}
			if !tc.whole && (err == nil || chunks >= 20) {
				t.Fatalf("read %d chunks, err %v: the caller's deadline did not cut the stream", chunks, err)
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
