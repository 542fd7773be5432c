// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// SanitizeURL's doc: "userinfo becomes REDACTED:REDACTED (also when a URL
// built by hand carries it in Opaque)"; docs/telemetry.md: a proxy's path
// that holds its target URL loses the target's userinfo, "as written or
// escaped". net/http sends a request whose URL.Opaque is "//host/path" as
// written (its documented use). When the target's password holds "//" (a
// base64 password; TestAProxyTargetsPasswordHoldingADoubleSlashIsNotRecorded
// covers the same target in URL.Path), the spans keep no part of the
// target's user name or password.
func TestAnOpaqueProxyTargetsPasswordHoldingADoubleSlashIsNotRecorded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for name, opaque := range map[string]string{
		"as written": "//" + host + "/fetch/https://USERNAME:PWHEAD//PWTAIL@i.test/x",
		"escaped":    "//" + host + "/fetch/https%3A%2F%2FUSERNAME%3APWHEAD%2F%2FPWTAIL%40i.test/x",
	} {
		t.Run(name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			base := &http.Transport{DisableKeepAlives: true}
			defer base.CloseIdleConnections()
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
			req := get(t, t.Context(), srv.URL)
			req.URL.Opaque = opaque
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(rec.Ended()) == 0 {
				t.Fatal("no span ended")
			}
			for _, s := range rec.Ended() {
				for _, kv := range s.Attributes() {
					v := kv.Value.Emit()
					for _, secret := range []string{"USERNAME", "PWHEAD", "PWTAIL"} {
						if strings.Contains(v, secret) {
							t.Errorf("span %q attribute %s = %q keeps %q", s.Name(), kv.Key, v, secret)
						}
					}
				}
			}
		})
	}
}
