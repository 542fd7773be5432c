// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// An Intent added over another replaces it whole, as WithIntent's godoc
// says: an outer Intent{MaxAttempts: 4} under an inner one that sets only
// its AttemptTimeout leaves the Transport's limit of 2 (a reviewer's
// remark: the godoc did not say the two are not merged).
func TestAnIntentOverAnotherReplacesItWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}},
			otelretry.WithMaxAttempts(2), otelretry.WithoutBudget(),
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
		ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{MaxAttempts: 4})
		ctx = otelretry.WithIntent(ctx, otelretry.Intent{AttemptTimeout: time.Second})
		resp, err := h.client.Do(get(t, ctx, "http://api.test/x"))
		if err == nil {
			resp.Body.Close()
		}
		if n := len(h.base.Calls()); n != 2 {
			t.Errorf("%d calls; want the Transport's 2 (the inner Intent replaced the outer's MaxAttempts 4)", n)
		}
	})
}
