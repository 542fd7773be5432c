// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// WithResults' godoc: a hook's call is an operation of its own when it is
// made on the context the hook was given (the request's). One made on a
// context the hook captured from the caller carries no boundary: it is the
// caller's own call, reported to the caller's slot under the caller's
// operation id (a reviewer's reading, written down).
func TestAHooksCallOnACapturedCallerContextIsTheCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		other := otelretry.NewTransport(scripted.New(scripted.Step{Status: 200}), quietOptions()...)
		var results otelretry.Results
		callerCtx := otelretry.WithOperationID(otelretry.WithResults(t.Context(), &results), "caller-op")
		call := func(ctx context.Context) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://token.test/", nil)
			resp, err := other.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		rt := otelretry.NewTransport(scripted.New(scripted.Step{Status: 200}, scripted.Step{Status: 200}), append(quietOptions(),
			otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
				call(r.Context()) // the hook's own: none of the caller's slots
				call(callerCtx)   // captured: the caller's
				return nil
			}))...)
		req, _ := http.NewRequestWithContext(callerCtx, http.MethodGet, "http://api.test/", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ops := results.Operations()
		if len(ops) != 2 {
			t.Fatalf("the caller's slot holds %d operations, want 2 (the captured call's and the caller's): %+v", len(ops), ops)
		}
		for _, op := range ops {
			if op.OperationID != "caller-op" {
				t.Errorf("an operation in the caller's slot has id %q; want the caller's", op.OperationID)
			}
		}
	})
}
