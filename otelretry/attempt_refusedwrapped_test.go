// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/telemetry.md: WithoutClientSpans is for a base that is instrumented
// already (otelhttp's transport over net/http's). docs/decisions.md row 24:
// a request net/http's Transport refuses itself ends stop
// (invalid_request) after one attempt, not charged to the budget. Only a
// base that is net/http's Transport was known: below otelhttp's, the
// refusal was sent three times and drained its host's budget.
func TestARefusalBelowAnInstrumentedBaseIsNotRetried(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer srv.Close()
	inner := &http.Transport{}
	defer inner.CloseIdleConnections()
	budget := &otelretry.Budget{}
	tr := otelretry.NewTransport(otelhttp.NewTransport(inner), otelretry.WithoutClientSpans(), otelretry.WithBudget(budget),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	req := get(t, t.Context(), srv.URL)
	req.Header.Set("X-Bad", "a\nb")
	_, err := tr.RoundTrip(req)
	var oe *otelretry.Error
	if !errors.As(err, &oe) || oe.Attempts != 1 || oe.Reason != attrs.ReasonInvalidRequest {
		t.Errorf("err = %v; want stop (invalid_request) after 1 attempt", err)
	}
	if n := served.Load(); n != 0 {
		t.Errorf("served %d", n)
	}
	r, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	if got := budget.Available(r); got != 2 {
		t.Errorf("Available = %d after one refused request; want 2 (fresh host: the host saw nothing)", got)
	}
}
