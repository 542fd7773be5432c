// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

// net/http's Transport sends a URL's userinfo as an Authorization: Basic
// header it builds itself, out of otelretry's sight; a base that repeats
// that credential in its error (a proxy's or a gateway's "auth failed:
// basic …") gives the password away in base64. It is redacted as the
// userinfo is, in the error and on the spans. It was kept (a reviewer's
// find).
func TestTheBasicCredentialBuiltFromTheUserinfoIsRedacted(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("alice:PASSWORD99"))
	base := roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("gateway: auth failed for basic " + basic)
	})
	rec := tracetest.NewSpanRecorder()
	rt := otelretry.NewTransport(base, otelretry.WithMaxAttempts(1),
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	req, _ := http.NewRequest(http.MethodGet, "http://alice:PASSWORD99@api.test/items", nil)
	_, err := rt.RoundTrip(req)
	if err == nil || strings.Contains(err.Error(), basic) {
		t.Errorf("error %v keeps the Basic credential", err)
	}
	for _, s := range rec.Ended() {
		if strings.Contains(s.Status().Description, basic) {
			t.Errorf("span %s status keeps it: %s", s.Name(), s.Status().Description)
		}
		for _, a := range s.Attributes() {
			if strings.Contains(a.Value.Emit(), basic) {
				t.Errorf("span %s attribute %s keeps it", s.Name(), a.Key)
			}
		}
		for _, e := range s.Events() {
			for _, a := range e.Attributes {
				if strings.Contains(a.Value.Emit(), basic) {
					t.Errorf("span %s event %s keeps it", s.Name(), e.Name)
				}
			}
		}
	}
}
