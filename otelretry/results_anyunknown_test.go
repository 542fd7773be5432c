// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Results.OutcomeUnknown "reports whether any operation reported so far
// left a write whose outcome is unknown" (results.go): an unknown write
// followed by an operation that succeeded (a layer above went on, a
// lookup through the same client) still says so; only Last tells the
// last one.
func TestResultsOutcomeUnknownIsAnyOperationsNotTheLasts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Delay: 10 * time.Millisecond, Err: errBaseTimeout}, {Status: 200}}, seedOptions...)
		var results otelretry.Results
		ctx := otelretry.WithResults(t.Context(), &results)
		if _, err := h.transprt.RoundTrip(post(t, ctx, "http://api.test/orders", "order")); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v, want the write's outcome unknown", err)
		}
		resp, err := h.transprt.RoundTrip(get(t, ctx, "http://api.test/orders/1"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ops := results.Operations(); len(ops) != 2 || !ops[0].OutcomeUnknown || ops[1].OutcomeUnknown {
			t.Fatalf("results = %+v, want the unknown write, then the success", ops)
		}
		if !results.OutcomeUnknown() {
			t.Error("OutcomeUnknown() = false after an unknown write followed by a success")
		}
		if last, _ := results.Last(); last.OutcomeUnknown || last.StatusCode != 200 {
			t.Errorf("Last() = %+v, want the success", last)
		}
	})
}
