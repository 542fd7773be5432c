// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/telemetry.md: userinfo becomes REDACTED:REDACTED "in a proxy's
// path that holds its target URL, as written or escaped". A password may
// hold a '/' (internal/redact's docs), so "//" too (a base64 password):
// the operation and attempt spans' url.full keep no part of such a
// target's user name or password, as written and escaped, in URL.Path and
// in URL.Opaque ("//host/path", net/http's documented use of it, which
// SanitizeURL's doc covers: "also when a URL built by hand carries it in
// Opaque").
func TestAProxyTargetsPasswordHoldingADoubleSlashIsNotRecorded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for name, target := range map[string]string{
		"as written": "/fetch/https://USERNAME:PWHEAD//PWTAIL@i.test/x",
		"escaped":    "/fetch/https%3A%2F%2FUSERNAME%3APWHEAD%2F%2FPWTAIL%40i.test/x",
	} {
		for _, opaque := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, opaque %v", name, opaque), func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
				base := &http.Transport{DisableKeepAlives: true}
				defer base.CloseIdleConnections()
				req := get(t, t.Context(), srv.URL+target)
				if opaque {
					req = get(t, t.Context(), srv.URL)
					req.URL.Opaque = "//" + host + target
				}
				resp, err := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp)).RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if len(rec.Ended()) == 0 {
					t.Fatal("no span ended")
				}
				text := telemetryText(rec.Ended())
				for _, secret := range []string{"USERNAME", "PWHEAD", "PWTAIL"} {
					if strings.Contains(text, secret) {
						t.Errorf("the spans keep %q:\n%s", secret, text)
					}
				}
			})
		}
	}
}
