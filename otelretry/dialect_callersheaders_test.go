// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The state check's copy of the write drops the attempt and operation-id
// headers otelretry stamped (attempt.go's checkCopy), but those the
// caller set itself are the caller's: "never over a header of that name
// the caller or an SDK set" (config.go, WithAttemptHeader and
// WithOperationIDHeader), and the copy is "the prepared request that went
// on the wire". A caller's value is kept on the copy, in any spelling;
// with none, the copy carries neither header.
func TestAStateChecksCopyKeepsTheCallersOwnAttemptAndIDHeaders(t *testing.T) {
	for _, callerSets := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			var got http.Header
			check := func(_ context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				got = c.Request.Header.Clone()
				return otelretry.StateResult{State: attrs.StateUnknown}, nil
			}
			h := newHarness(t, []scripted.Step{{Delay: 10 * time.Millisecond, Err: errBaseTimeout}},
				append(seedOptions, otelretry.WithAttemptHeader("X-Attempt"), otelretry.WithOperationIDHeader("X-Op"),
					otelretry.WithStateCheck(check))...)
			req := post(t, t.Context(), "http://api.test/orders", "order")
			if callerSets {
				req.Header.Set("X-Attempt", "callers-7")
				req.Header["x-op"] = []string{"callers-op"} // a lower-case spelling: present in any
			}
			if _, err := h.transprt.RoundTrip(req); !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Fatalf("err = %v, want the write's outcome unknown", err)
			}
			if got == nil {
				t.Fatal("the state check did not run")
			}
			a, op := got.Get("X-Attempt"), got["x-op"]
			if !callerSets {
				op = got.Values("X-Op")
			}
			switch {
			case callerSets && (a != "callers-7" || len(op) != 1 || op[0] != "callers-op"):
				t.Errorf("caller's headers on the copy: X-Attempt %q, x-op %q; want the caller's callers-7 and callers-op (copy %v)", a, op, got)
			case !callerSets && (a != "" || len(op) != 0):
				t.Errorf("stamped headers on the copy: X-Attempt %q, X-Op %q; want none", a, op)
			}
		})
	}
}
