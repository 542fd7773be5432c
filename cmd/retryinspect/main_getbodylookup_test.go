// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A keyed write whose attempt timed out and whose resend's GetBody fails
// once is looked up (decisions.md row 6, footnote ²); the check finds it
// not applied and the resend, its body now had, is sent and answered 201.
// Two network calls were made: Results, retry.attempts on the operation
// span and record, the metrics, and the attempt numbering must all say 2,
// and retryinspect must give no finding on this clean run.
func TestAWriteResentAfterItsGetBodyFailedCountsTheCallsMade(t *testing.T) {
	var calls, attempts, status int
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		base := scripted.New(scripted.Step{Hang: true}, step(10, 201))
		rt := e.transport(base, otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithoutBudget(),
			otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithBodyBuffer(0, 0),
			otelretry.WithStateCheck(stateSays(attrs.StateNotApplied)))
		var res otelretry.Results
		ctx := otelretry.WithResults(otelretry.WithOperationID(e.ctx, "order-9"), &res)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":"A1"}`))
		n := 0
		req.GetBody = func() (io.ReadCloser, error) {
			n++
			if n == 1 {
				return nil, errors.New("the file is gone")
			}
			return io.NopCloser(strings.NewReader(`{"sku":"A1"}`)), nil
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		resp.Body.Close()
		status = resp.StatusCode
		last, _ := res.Last()
		calls, attempts = len(base.Calls()), last.Attempts
	})
	if status != http.StatusCreated || calls != 2 {
		t.Fatalf("setup: status %d, %d calls; want 201 after 2 calls", status, calls)
	}
	if attempts != calls {
		t.Errorf("Results: Attempts %d, but %d network calls were made", attempts, calls)
	}
	for name, data := range map[string][]byte{"spans": r.spans, "logs": r.logs} {
		code, rep, _ := reportJSON(t, data)
		if name == "spans" {
			compareWithMetrics(t, name, r, rep)
		}
		for _, f := range rep.Findings {
			t.Errorf("%s: finding [%s] (exit %d): %s", name, f.Code, code, f.Seen)
		}
	}
	if got := total(counter(r.metrics, "retry.attempts", "retry.decision")); got != calls {
		t.Errorf("metric retry.attempts counts %d, %d calls made", got, calls)
	}
	if !strings.Contains(string(r.spans), `"Key":"retry.attempts","Value":{"Type":"INT64","Value":2}`) {
		t.Errorf("the operation span's retry.attempts is not 2 (%d calls made)", calls)
	}
	if strings.Contains(string(r.spans), `"Value":"order-9/attempt-3"`) {
		t.Errorf("the second call made is numbered attempt-3 (no attempt 2 was sent)")
	}
}
