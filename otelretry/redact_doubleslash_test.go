// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
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
// target's user name or password, as written and escaped.
func TestAProxyTargetsPasswordHoldingADoubleSlashIsNotRecorded(t *testing.T) {
	for name, raw := range map[string]string{
		"as written": "http://p.test/fetch/https://USERNAME:PWHEAD//PWTAIL@i.test/x",
		"escaped":    "http://p.test/fetch/https%3A%2F%2FUSERNAME%3APWHEAD%2F%2FPWTAIL%40i.test/x",
	} {
		t.Run(name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
			resp, err := tr.RoundTrip(get(t, t.Context(), raw))
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
