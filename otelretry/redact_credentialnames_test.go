// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// Credential headers whose names hold none of the common words (auth,
// token, key, ...): a DPoP proof (RFC 9449), a JWT assertion, a webhook's
// HMAC, an LND macaroon. A base's error that prints the request's header
// must not carry their values into the error or the spans.
func TestCredentialHeadersNamedOtherwiseAreScrubbed(t *testing.T) {
	headers := map[string]string{
		"DPoP":                   "eyJhbGciOiJFUzI1NiJ9.DPOPPROOFSECRET",
		"X-Jwt-Assertion":        "eyJ0eXAiOiJKV1QifQ.JWTASSERTIONSECRET",
		"X-Shopify-Hmac-Sha256":  "HMACSIGNATURESECRET=",
		"Grpc-Metadata-Macaroon": "0201036c6e64MACAROONSECRET",
	}
	for name, value := range headers {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			rt := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("refused %v", r.Header)
			}), otelretry.WithTracerProvider(h.tp), otelretry.WithMaxAttempts(1))
			req := get(t, t.Context(), "http://api.test/v1")
			req.Header.Set(name, value)
			_, err := rt.RoundTrip(req)
			if err == nil {
				t.Fatal("RoundTrip succeeded; want the base's error")
			}
			texts := []string{err.Error()}
			for _, s := range h.ended() {
				texts = append(texts, s.Status().Description)
				for _, e := range s.Events() {
					for _, kv := range e.Attributes {
						texts = append(texts, kv.Value.Emit())
					}
				}
			}
			secret := value[len(value)-16:]
			for _, text := range texts {
				if strings.Contains(text, secret) {
					t.Errorf("%q carries the %s value", text, name)
				}
			}
			if !strings.Contains(err.Error(), "refused") {
				t.Errorf("error %q lost the base's text", err)
			}
		})
	}
}
