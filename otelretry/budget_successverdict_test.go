// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"testing"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/budget.md: a 2xx, 3xx or 101 is returned whatever a classifier
// says (decisions.md row 12) and counts as a success. Two 503s cost 2 of a
// fresh host's 6 tokens; each answer a classifier calls retryable then
// gives back half a token, as any success does, where a failure would
// take one more.
func TestARetryableVerdictOnASuccessCostsNoToken(t *testing.T) {
	budget := &otelretry.Budget{}
	always := func(otelretry.Answer) otelretry.Classification { return otelretry.Retryable(0) }
	h := newHarness(t, []scripted.Step{
		{Status: http.StatusServiceUnavailable}, {Status: http.StatusServiceUnavailable},
		{Status: http.StatusOK}, {Status: http.StatusFound}, {Status: http.StatusOK},
	}, otelretry.WithBudget(budget), otelretry.WithClassifier(always), otelretry.WithMaxAttempts(3),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	for i, want := range []int{http.StatusOK, http.StatusFound, http.StatusOK} {
		req := get(t, t.Context(), "http://api.test/v1")
		resp, err := h.transprt.RoundTrip(req)
		if err != nil {
			t.Fatalf("operation %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("operation %d: status %d, want %d", i, resp.StatusCode, want)
		}
	}
	if n := len(h.base.Calls()); n != 5 {
		t.Errorf("%d calls, want 5 (3 for the first operation, 1 for each other)", n)
	}
	// 6 - 2 failures + 3 successes x 0.5 = 5.5 tokens, 2 retries in a row;
	// the three verdicts taken as failures would leave the floor, 3 tokens,
	// and no retry.
	if got := budget.Available(get(t, t.Context(), "http://api.test/v1")); got != 2 {
		t.Errorf("Available %d, want 2", got)
	}
}
