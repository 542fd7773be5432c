// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"encoding/json"
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

// A tool's output that a base quotes with %q or marshals as JSON writes
// each line break as `\n` and, in JSON, '<' as `\u003c`: a URL without a
// scheme at the start of a line ("//TOKEN@github.com/o/r.git", as git
// prints one) or in angle brackets follows those escapes, and its
// userinfo is redacted in Error(), the attempt span's status and the log
// record (docs/telemetry.md: another URL an error names is sanitized where
// it is written as a URL).
func TestASchemelessTokenInQuotedToolOutputIsRedacted(t *testing.T) {
	const token = "ghp_REVIEWTOKEN0123456789"
	for _, stderr := range []string{
		"Cloning into 'r'...\n//" + token + "@github.com/o/r.git: not found\n",
		"fatal: could not read from <//" + token + "@github.com/o/r.git>\n",
	} {
		for name, mk := range map[string]func() error{
			"%q": func() error { return fmt.Errorf("credential helper: exit status 128: %q", stderr) },
			"json": func() error {
				js, _ := json.Marshal(map[string]string{"stderr": stderr})
				return fmt.Errorf("credential helper: exit status 128: %s", js)
			},
		} {
			t.Run(name, func(t *testing.T) {
				msg, tel := errorTelemetry(t, http.MethodGet, "https://api.test/v1", nil,
					failingWith(func(*http.Request) error { return mk() }))
				if strings.Contains(msg, token) {
					t.Errorf("Error() keeps the token: %s", msg)
				}
				if strings.Contains(tel, token) {
					t.Errorf("telemetry keeps the token:\n%s", tel)
				}
			})
		}
	}
}
