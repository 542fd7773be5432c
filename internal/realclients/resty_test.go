// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/go-resty/resty/v2"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestRestyGET503503200: resty (its own retries off, as by default) over
// otelretry; the server answers 503, 503, then 200. The server receives 3
// GETs, one operation span holds the 3 CLIENT attempt spans, and resty
// hands the 200 over.
func TestRestyGET503503200(t *testing.T) {
	tel := newTelemetry(t)
	srv := newServer(t, tel, statuses(http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusOK))
	client := resty.New().SetTransport(tel.transport(t, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))))

	resp, err := client.R().SetContext(context.Background()).Get(srv.URL + "/items/42")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != http.StatusOK || resp.String() != http.StatusText(http.StatusOK) {
		t.Errorf("status %d, body %q; want 200 %q", resp.StatusCode(), resp.String(), http.StatusText(http.StatusOK))
	}
	spans := tel.finished(srv)
	if got := srv.received.Load(); got != 3 {
		t.Errorf("server received %d GETs, want 3", got)
	}
	ops := operations(t, spans)
	if len(ops) != 1 {
		t.Fatalf("%d operation spans, want 1", len(ops))
	}
	ops[0].check(t, spans, wantOp{method: http.MethodGet, outcome: attrs.OutcomeReturn, attempts: []wantAttempt{
		{status: 503, decision: attrs.DecisionRetry}, {status: 503, decision: attrs.DecisionRetry},
		{status: 200, decision: attrs.DecisionReturn}}})
	if root := ops[0].span.Parent(); root.IsValid() {
		t.Errorf("operation span has parent %s, want a root span", root.SpanID())
	}
}

// TestRestyPOSTTimeout: a POST the server never answers is sent once; the
// deadline (100ms) ends its wait for the headers, otelretry does not
// resend the write, and resty passes otelretry's error through, so the caller can
// match ErrOutcomeUnknown.
func TestRestyPOSTTimeout(t *testing.T) {
	tel := newTelemetry(t)
	srv := newServer(t, tel, hang)
	client := resty.New().SetTransport(tel.transport(t, otelretry.WithDeadline(100*time.Millisecond)))

	resp, err := client.R().SetContext(context.Background()).
		SetHeader("Content-Type", "application/json").
		SetBody(`{"item":42}`).
		Post(srv.URL + "/orders")
	var oe *otelretry.Error
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) || !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeCheckState || oe.Attempts != 1 {
		t.Fatalf("error %v; want otelretry's check_state error after 1 attempt, matching ErrOutcomeUnknown", err)
	}
	if resp.StatusCode() != 0 {
		t.Errorf("status %d from a server that never answers", resp.StatusCode())
	}
	spans := tel.finished(srv)
	if got := srv.received.Load(); got != 1 {
		t.Errorf("server received %d POSTs, want 1", got)
	}
	ops := operations(t, spans)
	if len(ops) != 1 {
		t.Fatalf("%d operation spans, want 1", len(ops))
	}
	ops[0].check(t, spans, wantOp{method: http.MethodPost, outcome: attrs.OutcomeCheckState,
		attempts: []wantAttempt{{class: attrs.ErrorClassTimeout, decision: attrs.DecisionCheckState}}})
}
