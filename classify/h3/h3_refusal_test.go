// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h3_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/quic-go/quic-go/http3"

	"github.com/otelretry/otelretry-go/classify/h3"
	"github.com/otelretry/otelretry-go/otelretry"
)

// quic-go's http3.Transport checks the request (its scheme, its header
// fields) before it reports anything through httptrace or asks for the
// trace: otelretry cannot tell that silence from a custom base's, so a
// write it refused ends check_state, its outcome unknown (the safe side;
// docs/layers.md), the refusal named in the error, never resent.
func TestAnHTTP3TransportsRefusalOfAWriteIsTheSafeSide(t *testing.T) {
	for _, tc := range []struct {
		name, url, header, says string
	}{
		{"http scheme", "http://127.0.0.1:1/orders", "", "unsupported protocol scheme"},
		{"bad header value", "https://127.0.0.1:1/orders", "a\x00b", "invalid http header field value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := &http3.Transport{}
			defer base.Close()
			rt := otelretry.NewTransport(base, otelretry.WithClassifier(h3.Classify), otelretry.WithoutBudget())
			var results otelretry.Results
			req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), http.MethodPost, tc.url, strings.NewReader(`{"sku":1}`))
			if tc.header != "" {
				req.Header.Set("X-Bad", tc.header)
			}
			resp, err := rt.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatal("the failure came back as a response")
			}
			r, _ := results.Last()
			if r.Attempts != 1 || !r.OutcomeUnknown || !errors.Is(err, otelretry.ErrOutcomeUnknown) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("ended %s (%s) after %d attempts, unknown %v, err %v; want check_state after 1, the refusal named", r.Outcome, r.Reason, r.Attempts, r.OutcomeUnknown, err)
			}
		})
	}
}
