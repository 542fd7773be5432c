// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// quic-go v0.65.0 validateHeaderFieldNameAndValue checks the value before
// the name: a lower-case name that is no token (it may hold `: "`) is
// printed as is, then the value quoted.
func TestAQuicGoNameHoldingColonQuoteKeepsNoValue(t *testing.T) {
	const secret = "supersecretsession0123456789"
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"name holds colon-quote, value secret", fmt.Errorf("invalid header field value for %s: %q", `x: "a"`, "sid="+secret+"\x01")},
		{"name holds colon-quote and secret", fmt.Errorf("invalid header field value for %s: %q", `x: "a" sid=`+secret, "\x01")},
		{"name opens a quote", fmt.Errorf("invalid header field value for %s: %q", `x: "a`, "sid="+secret+"\x01")},
		// quic-go: fmt.Errorf("invalid header field name: %q", h.Name) for a lower-case name that is no token, value valid
		{"invalid name, quic-go form", fmt.Errorf("invalid header field name: %q", "retry-after/sid="+secret)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			base := roundTripFunc(func(*http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("http3: invalid response: %w", tc.err)
			})
			client := &http.Client{Transport: otelretry.NewTransport(base,
				otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))),
				otelretry.WithMaxAttempts(1), otelretry.WithDeadline(2*time.Second))}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://api.test/x", nil)
			_, err := client.Do(req)
			if err == nil {
				t.Fatal("want the base's error")
			}
			var rerr *otelretry.Error
			_ = errors.As(err, &rerr)
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error keeps the value: %s", err)
			}
			for _, s := range rec.Ended() {
				if strings.Contains(s.Status().Description, secret) {
					t.Errorf("span %q status: %s", s.Name(), s.Status().Description)
				}
			}
		})
	}
}
