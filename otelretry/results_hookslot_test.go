// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"testing"
	"testing/synctest"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A call a Classifier makes with the context it was shown is an operation
// of its own (results.go WithResults: "reported to the slots the hook
// added to that context, and to none of the calling operation's";
// identity.go WithOperationID: "the call takes the id added to the hook's
// context, never the calling operation's").
func TestAClassifiersCallIsReportedToNoneOfTheCallersSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		side := newHarness(t, []scripted.Step{{Status: 200}})
		var own otelretry.Results
		h := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			ctx := otelretry.WithResults(a.Request.Context(), &own)
			resp, err := side.client.Do(get(t, ctx, "http://side.test/health"))
			if err == nil {
				resp.Body.Close()
			}
			return otelretry.Classification{}
		}))
		var caller otelretry.Results
		ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "op-caller"), &caller)
		resp, err := h.transprt.RoundTrip(get(t, ctx, "http://api.test/items"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ops, mine := caller.Operations(), own.Operations()
		if len(ops) != 1 || ops[0].OperationID != "op-caller" {
			t.Errorf("the caller's Results: %+v; want the caller's one operation, op-caller", ops)
		}
		if len(mine) != 1 || mine[0].OperationID == "op-caller" {
			t.Errorf("the Classifier's own Results: %+v; want its call, under an id of its own", mine)
		}
	})
}
