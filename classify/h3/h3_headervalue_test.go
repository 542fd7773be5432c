// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A response header quic-go's client refuses: its error quotes the value
// of one with a control byte ("invalid header field value for
// x-session: \"…\"") or of a TE it does not take, and names one whose
// name holds a value. None reaches the caller's error, a span or a log
// record: "otelretry records no header's value, on any channel"
// (docs/telemetry.md).
func TestHTTP3HeaderValuesReachNoTelemetry(t *testing.T) {
	const secret = "SUPERSECRETSESSION0123456789"
	for _, tc := range []struct{ name, header, value string }{
		{"invalid value", "X-Session", "sid=" + secret + "\x01"},
		{"name that holds a value", "Retry-After/" + secret, "1"},
		{"te value", "Te", secret},
		{"invalid value, name with a space", "x-session id", "sid=" + secret + "\x01"}, // the name is no token
		{"invalid value, pseudo name", ":x-session", "sid=" + secret + "\x01"},
		{"content-length value", "content-length", secret}, // strconv.ParseUint: parsing "…"
	} {
		t.Run(tc.name, func(t *testing.T) { headerValueLeaks(t, secret, tc.header, tc.value) })
	}
}

func headerValueLeaks(t *testing.T, secret, header, value string) {
	// quic-go's server writes names in lower case: a secret a name holds
	// reaches the client so.
	leaks := func(text string) bool {
		return strings.Contains(text, secret) || strings.Contains(text, strings.ToLower(secret))
	}
	cert, pool := newCert(t)
	srv := &http3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()[header] = []string{value}
		w.WriteHeader(200)
	})}
	ln, err := quic.ListenAddr("127.0.0.1:0", http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}), &quic.Config{MaxIdleTimeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.ServeListener(ln) })
	defer func() { srv.Close(); ln.Close(); wg.Wait() }()

	roundTripLeaks(t, pool, "https://"+ln.Addr().String()+"/x", leaks)
}

// roundTripLeaks sends a GET to url, which the server refuses, through
// otelretry with a tracer and a logger, and reports what carries a text
// that leaks: the error, a span's status, attribute or event, a record.
func roundTripLeaks(t *testing.T, pool *x509.CertPool, url string, leaks func(string) bool) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	base := newClient(t, pool)
	rt := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelretry.WithLogger(logger), otelretry.WithClassifier(h3.Classify), otelretry.WithMaxAttempts(1), otelretry.WithDeadline(testTimeout))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got %d; want quic-go's refusal", resp.StatusCode)
	}
	t.Logf("error: %v", err)
	if leaks(err.Error()) {
		t.Errorf("RoundTrip's error carries the server's text: %v", err)
	}
	for _, s := range rec.Ended() {
		if leaks(s.Status().Description) {
			t.Errorf("span %q status carries the server's text: %q", s.Name(), s.Status().Description)
		}
		for _, kv := range s.Attributes() {
			if leaks(kv.Value.Emit()) {
				t.Errorf("span %q attribute %s carries the server's text: %q", s.Name(), kv.Key, kv.Value.Emit())
			}
		}
		for _, ev := range s.Events() {
			for _, kv := range ev.Attributes {
				if leaks(kv.Value.Emit()) {
					t.Errorf("span %q event %s attribute %s carries the server's text", s.Name(), ev.Name, kv.Key)
				}
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if leaks(logs.String()) {
		t.Errorf("slog record carries the server's text: %s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
