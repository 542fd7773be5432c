// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package h2_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/http2"

	"github.com/otelretry/otelretry-go/classify/h2"
	"github.com/otelretry/otelretry-go/otelretry"
)

// x/net's http2.Transport refuses an http URL (AllowHTTP unset) before it
// reports anything through httptrace or asks for the trace: otelretry
// cannot tell that silence from a custom base's, whose failure says
// nothing of where a write got, so the write ends check_state, its
// outcome unknown (the safe side; docs/layers.md), with the refusal
// named in the error. It is not resent.
func TestAnHTTP2TransportsRefusalOfAWriteIsTheSafeSide(t *testing.T) {
	base := &http2.Transport{}
	defer base.CloseIdleConnections()
	rt := otelretry.NewTransport(base, otelretry.WithClassifier(h2.Classify), otelretry.WithoutBudget())
	var results otelretry.Results
	req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), http.MethodPost, "http://127.0.0.1:1/orders", strings.NewReader(`{"sku":1}`))
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the failure came back as a response")
	}
	r, _ := results.Last()
	if r.Attempts != 1 || !r.OutcomeUnknown || !errors.Is(err, otelretry.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "unencrypted HTTP/2 not enabled") {
		t.Errorf("ended %s (%s) after %d attempts, unknown %v, err %v; want check_state after 1, the refusal named", r.Outcome, r.Reason, r.Attempts, r.OutcomeUnknown, err)
	}
}
