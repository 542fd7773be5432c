// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A stream the server counted in its GOAWAY before it closed the
// connection may have been processed: net/http returns its own (unexported)
// GoAwayError for it, and the attempt's class is connection_reset, as a
// reset's (attrs: "the connection broke, possibly after the request was
// written"), not other. A GET is retried; a POST ends check_state.
func TestAStreamAGoAwayCountedBeforeTheCloseIsAConnectionReset(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			srv := newH2Server(t, h2GoAwayDebug, h2OK)
			h := newHarness(t, nil)
			rt := otelretry.NewTransport(h2cTransport(), otelretry.WithTracerProvider(h.tp), otelretry.WithoutBudget(),
				otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			req := get(t, t.Context(), srv.url()+"/x")
			if method == http.MethodPost {
				req = post(t, t.Context(), srv.url()+"/x", "o")
			}
			resp, err := rt.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			att := h.attempts()
			if len(att) == 0 {
				t.Fatalf("no attempt recorded (err %v)", err)
			}
			if c := attrOf(att[0], attrs.ErrorClassKey).AsString(); c != string(attrs.ErrorClassConnectionReset) {
				t.Errorf("the first attempt's class %q, want connection_reset", c)
			}
			switch method {
			case http.MethodGet:
				if err != nil || len(att) != 2 {
					t.Errorf("err %v after %d attempts; want the retry's 200", err, len(att))
				}
			case http.MethodPost:
				if !errors.Is(err, otelretry.ErrOutcomeUnknown) || len(att) != 1 {
					t.Errorf("err %v after %d attempts; want one attempt, its outcome unknown", err, len(att))
				}
			}
		})
	}
}
