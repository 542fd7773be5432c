// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The Results slot keeps every operation made with its context, in the
// order they ended, with the outcome, the reason, the id, the attempts and
// whether a write's outcome is unknown, and the same *Error RoundTrip
// returned.
func TestResultsKeepEveryOperation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}, {Delay: 10 * time.Millisecond, Err: errBaseTimeout}}, seedOptions...)
		var results otelretry.Results
		if _, ok := results.Last(); ok || results.OutcomeUnknown() || len(results.Operations()) != 0 {
			t.Fatal("an empty Results reports something")
		}
		ctx := otelretry.WithOperationID(otelretry.WithResults(t.Context(), &results), "op-1")
		resp, err := h.transprt.RoundTrip(get(t, ctx, "http://api.test/items"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		_, err = h.transprt.RoundTrip(post(t, ctx, "http://api.test/orders", "order"))
		want := []otelretry.OperationResult{
			{OperationID: "op-1", Outcome: attrs.OutcomeReturn, Reason: attrs.ReasonResponse, Attempts: 2, StatusCode: 200},
			{OperationID: "op-1", Outcome: attrs.OutcomeCheckState, Reason: attrs.ReasonUnknownWrite, Attempts: 1, OutcomeUnknown: true, Err: err},
		}
		got := results.Operations()
		if len(got) != len(want) {
			t.Fatalf("results = %+v, want %+v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("result %d = %+v, want %+v", i, got[i], want[i])
			}
		}
		if !results.OutcomeUnknown() {
			t.Error("OutcomeUnknown() = false after an unknown write")
		}
		if last, _ := results.Last(); last != want[1] {
			t.Errorf("Last() = %+v", last)
		}
	})
}

// Every slot added to the caller's context receives the operation, as
// nested httptrace traces all receive their events: a slot added inside
// another (a helper's, under the caller's own) blinds neither, and a slot
// added twice gets the operation once. After an unknown write, the
// caller's outer slot holds it and says OutcomeUnknown.
func TestNestedResultSlotsEachReceiveTheOperation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Delay: 10 * time.Millisecond, Err: errBaseTimeout}}, seedOptions...)
		var outer, inner otelretry.Results
		ctx := otelretry.WithResults(t.Context(), &outer)
		ctx = otelretry.WithOperationID(ctx, "order-9")
		ctx = otelretry.WithResults(otelretry.WithResults(ctx, &inner), &inner)
		_, err := h.transprt.RoundTrip(post(t, ctx, "http://api.test/orders", "order"))
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v, want an unknown write", err)
		}
		for name, r := range map[string]*otelretry.Results{"the outer slot": &outer, "the inner slot": &inner} {
			ops := r.Operations()
			if len(ops) != 1 || ops[0].OperationID != "order-9" || !ops[0].OutcomeUnknown || ops[0].Err != err || !r.OutcomeUnknown() {
				t.Errorf("%s holds %+v (OutcomeUnknown %v), want the unknown write once", name, ops, r.OutcomeUnknown())
			}
		}
	})
}

// OutcomeUnknown is also reported with a response: a keyed write resent
// under its contract after its first attempt timed out, whose resends
// were answered 503, returns the last 503 (max_attempts, Err nil), and
// the first write may have been applied, which no 503 settles.
func TestOutcomeUnknownWithAResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 503}, {Status: 503}},
			otelretry.WithIdempotencyKeyContract(), otelretry.WithAttemptTimeout(50*time.Millisecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget())
		var results otelretry.Results
		req := post(t, otelretry.WithResults(t.Context(), &results), "http://api.test/orders", "order")
		req.Header.Set("Idempotency-Key", "order-9")
		resp, err := h.transprt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		last, _ := results.Last()
		if resp.StatusCode != 503 || last.Outcome != attrs.OutcomeMaxAttempts || last.Attempts != 3 || last.StatusCode != 503 ||
			!last.OutcomeUnknown || last.Err != nil {
			t.Errorf("response %d, result %+v; want the last 503, max_attempts after 3 attempts, OutcomeUnknown, Err nil", resp.StatusCode, last)
		}
	})
}

// Concurrent operations share one Results safely (go test -race).
func TestResultsAreSafeForConcurrentUse(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Status: 200}})
	var results otelretry.Results
	ctx := otelretry.WithResults(t.Context(), &results)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			resp, err := h.transprt.RoundTrip(get(t, ctx, fmt.Sprintf("http://api.test/items/%d", i)))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			_ = results.OutcomeUnknown()
			_, _ = results.Last()
		})
	}
	wg.Wait()
	if n := len(results.Operations()); n != 50 {
		t.Errorf("results hold %d operations, want 50", n)
	}
}

// A nil Results is ignored, and a context without one reports nowhere.
func TestWithResultsNil(t *testing.T) {
	ctx := t.Context()
	if otelretry.WithResults(ctx, nil) != ctx {
		t.Error("WithResults(ctx, nil) changed the context")
	}
}

// Results' godoc: an operation a panic ended reports nothing to the slot
// (RoundTrip does not return); the panic reaches the caller. The godoc was
// silent on it (a reviewer's remark).
func TestAnOperationAPanicEndedReportsNoResult(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
		otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification { panic("classifier") }))
	var results otelretry.Results
	req := get(t, otelretry.WithResults(t.Context(), &results), "http://api.test/")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the classifier's panic did not reach the caller")
			}
		}()
		if resp, err := h.transprt.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}()
	if ops := results.Operations(); len(ops) != 0 {
		t.Errorf("the slot holds %+v, want nothing", ops)
	}
}
