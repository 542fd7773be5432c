// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// statecheck.go, lookupContext: the state check's context "tells the hook
// the operation's own Intent and id, as an attempt's context does"
// (IntentFromContext, OperationIDFromContext in a hook's context).
func TestAStateChecksContextTellsTheOperationsIntentAndID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var id string
		var idOK, inOK bool
		var in otelretry.Intent
		check := func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
			id, idOK = otelretry.OperationIDFromContext(ctx)
			in, inOK = otelretry.IntentFromContext(ctx)
			return otelretry.StateResult{State: attrs.StateUnknown}, nil
		}
		h := newHarness(t, []scripted.Step{{Delay: 10 * time.Millisecond, Err: errBaseTimeout}},
			append(seedOptions, otelretry.WithStateCheck(check))...)
		ctx := otelretry.WithIntent(otelretry.WithOperationID(t.Context(), "order-9"), otelretry.Intent{MaxAttempts: 2})
		if _, err := h.transprt.RoundTrip(post(t, ctx, "http://api.test/orders", "order")); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v, want the write's outcome unknown", err)
		}
		if !idOK || id != "order-9" || !inOK || in.MaxAttempts != 2 {
			t.Errorf("the hook's context told id %q (%v), Intent %+v (%v); want order-9 and MaxAttempts 2", id, idOK, in, inOK)
		}
	})
}
