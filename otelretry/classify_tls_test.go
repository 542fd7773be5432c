// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A TLS handshake that fails is class tls (docs/telemetry.md: retry.error_class
// "tls"; "Error classes come from error types (... TLS errors ...)"),
// whichever side of the handshake refused: the client (an unknown
// authority: the certificate, not retried, docs/decisions.md row 25) or
// the server, with a TLS alert (a version it does not speak, a client
// certificate it requires: retried, row 26, "connection refused, DNS, TLS
// handshake, dial").
func TestAFailedTLSHandshakeIsClassTLS(t *testing.T) {
	cases := []struct {
		name   string
		server func(*tls.Config)
		client func(*tls.Config)
		reason attrs.Reason
	}{
		{"client rejects the server's certificate", nil, func(c *tls.Config) { c.RootCAs = x509.NewCertPool() }, attrs.ReasonCertificate},
		{"server alert: protocol version", func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 },
			func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 }, attrs.ReasonNotProcessed},
		{"server alert: client certificate required (TLS 1.2)", func(c *tls.Config) {
			c.MaxVersion = tls.VersionTLS12
			c.ClientAuth = tls.RequireAnyClientCert
		}, nil, attrs.ReasonNotProcessed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var handled atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				handled.Add(1)
			}))
			srv.Config.ErrorLog = nil
			srv.TLS = &tls.Config{}
			if tc.server != nil {
				tc.server(srv.TLS)
			}
			srv.StartTLS()
			t.Cleanup(srv.Close)
			srv.Config.ErrorLog = nil
			base := srv.Client().Transport.(*http.Transport).Clone()
			if tc.client != nil {
				tc.client(base.TLSClientConfig)
			}
			t.Cleanup(base.CloseIdleConnections)
			rec := tracetest.NewSpanRecorder()
			client := &http.Client{Transport: otelretry.NewTransport(base,
				otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
				otelretry.WithMaxAttempts(2),
				otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
				otelretry.WithDeadline(5*time.Second))}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(`{"sku":1}`))
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("got %d; want the handshake's failure", resp.StatusCode)
			}
			a := spantest.Attempts(rec.Ended())
			if len(a) == 0 {
				t.Fatal("no attempt span")
			}
			first := a[0]
			cls := attrOf(first, attrs.ErrorClassKey).AsString()
			reason := attrOf(first, attrs.ReasonKey).AsString()
			t.Logf("error: %v; attempt 1: class %s, %s/%s; %d attempts", err, cls, attrOf(first, attrs.DecisionKey).AsString(), reason, len(a))
			if cls != string(attrs.ErrorClassTLS) {
				t.Errorf("attempt 1 retry.error_class = %q; want %q", cls, attrs.ErrorClassTLS)
			}
			if reason != string(tc.reason) {
				t.Errorf("attempt 1 retry.reason = %q; want %s", reason, tc.reason)
			}
			if h := handled.Load(); h != 0 {
				t.Errorf("handled %d", h)
			}
		})
	}
}
