// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A keyed write under WithOperationID whose first attempt timed out and
// whose resend's GetBody failed is looked up; while the check runs,
// another operation under the same id (a read of the same job) makes its
// call. The check says not_applied: the CHANGELOG and decisions.md say
// "a resend the check allows is the call planned, under its number" (2),
// and abandonPlanned's rule is that no retry is left without its next
// attempt and no explanation.
func TestALookedUpResendUnderASharedOperationIDKeepsThePlannedNumber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h *harness
		ctx := otelretry.WithOperationID(t.Context(), "job-7")
		otherDone := make(chan error, 1)
		check := func(_ context.Context, sc otelretry.StateCheck) (otelretry.StateResult, error) {
			// Another operation of the job, in flight now, makes its call.
			go func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/jobs/7", nil)
				resp, err := h.transprt.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				otherDone <- err
			}()
			if err := <-otherDone; err != nil {
				t.Errorf("the other operation: %v", err)
			}
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		}
		h = newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}, {Status: 201}},
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithoutBudget(),
			otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithBodyBuffer(0, 0),
			otelretry.WithStateCheck(check), otelretry.WithAttemptHeader("X-Attempt"))
		req := post(t, ctx, "http://api.test/orders", `{"sku":"A1"}`)
		bodies := 0
		req.GetBody = func() (io.ReadCloser, error) {
			bodies++
			if bodies == 1 {
				return nil, errors.New("the file is busy")
			}
			return io.NopCloser(strings.NewReader(`{"sku":"A1"}`)), nil
		}
		resp, err := h.transprt.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		resp.Body.Close()
		var calls []string
		for _, c := range h.base.Calls() {
			calls = append(calls, c.Method+" #"+c.Header.Get("X-Attempt"))
		}
		var numbers []int64
		for _, e := range h.events(t) {
			numbers = append(numbers, e.Attempt)
		}
		t.Logf("calls %v, attempt spans numbered %v", calls, numbers)
		if len(calls) != 3 {
			t.Fatalf("%d calls; want 3", len(calls))
		}
		for _, op := range spantest.Operations(h.ended()) {
			if ab := attrOf(op, "retry.abandoned_attempt"); ab.AsInt64() != 0 {
				t.Logf("operation %s records abandoned attempt %d", op.Name(), ab.AsInt64())
			}
		}
		if got := h.base.Calls()[2].Header.Get("X-Attempt"); got != "2" {
			t.Errorf("the resend the check allowed went out as attempt %s; want 2, the planned call's number (the other operation's call is 3)", got)
		}
	})
}

// The caller cancels while the check waits for WithStateCheckDelay: the
// operation ends canceled (caller), the write unknown, no check made.
func TestALookUpOfAnUnpreparedResendCanceledDuringTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c checks
		h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 201}},
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithoutBudget(),
			otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithBodyBuffer(0, 0),
			otelretry.WithStateCheckDelay(5*time.Second), c.answering(attrs.StateNotApplied))
		var res otelretry.Results
		ctx, cancel := context.WithCancel(otelretry.WithResults(t.Context(), &res))
		defer cancel()
		req := post(t, ctx, "http://api.test/orders", `{"sku":"A1"}`)
		go func() { time.Sleep(time.Second); cancel() }()
		req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("the file is gone") }
		resp, err := h.transprt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		last, _ := res.Last()
		if err == nil || len(c.told) != 0 || len(h.base.Calls()) != 1 {
			t.Fatalf("want an error, no check, 1 call")
		}
		if last.Outcome != attrs.DecisionCanceled.Outcome() || last.Reason != attrs.ReasonCaller || !last.OutcomeUnknown || !errors.Is(err, otelretry.ErrOutcomeUnknown) || !errors.Is(err, context.Canceled) {
			t.Errorf("ended %s (%s), unknown %v; want canceled (caller), unknown", last.Outcome, last.Reason, last.OutcomeUnknown)
		}
		if ab := attrOf(h.operation(t), "retry.abandoned_attempt"); ab.AsInt64() != 2 {
			t.Errorf("retry.abandoned_attempt %d; want 2", ab.AsInt64())
		}
	})
}

// Tokens: a cut write looked up after its resend's GetBody failed, then
// resent and answered 201, costs the host what a cut write without a key
// looked up at once and resent costs (decisions.md: the same rule).
func TestALookedUpUnpreparedResendCostsWhatALookedUpWriteCosts(t *testing.T) {
	run := func(t *testing.T, keyed bool) int {
		var left int
		synctest.Test(t, func(t *testing.T) {
			b := &otelretry.Budget{}
			var c checks
			opts := []otelretry.Option{otelretry.WithAttemptTimeout(100 * time.Millisecond), otelretry.WithBudget(b),
				otelretry.WithBodyBuffer(0, 0), c.answering(attrs.StateNotApplied)}
			if keyed {
				opts = append(opts, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))
			}
			h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 201}}, opts...)
			req := post(t, t.Context(), "http://api.test/orders", `{"sku":"A1"}`)
			bodies := 0
			req.GetBody = func() (io.ReadCloser, error) {
				bodies++
				if keyed && bodies == 1 {
					return nil, errors.New("the file is busy")
				}
				return io.NopCloser(strings.NewReader(`{"sku":"A1"}`)), nil
			}
			resp, err := h.transprt.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			resp.Body.Close()
			probe, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			left = b.Available(probe)
		})
		return left
	}
	plain, keyed := run(t, false), run(t, true)
	if plain != keyed {
		t.Errorf("Available %d after the keyed write, %d after the plain one", keyed, plain)
	}
}

// The operation's deadline passes during the check of an unprepared
// resend: deadline_exceeded, the write unknown, one call; a
// PrepareAttemptFunc that fails once only is asked again for the resend a
// not_applied check allows, which is then the second call, numbered 2.
func TestALookUpOfAnUnpreparedResendAtTheDeadlineAndAFlakyHook(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			check := func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
				<-ctx.Done()
				return otelretry.StateResult{}, ctx.Err()
			}
			prepare := otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				if n > 1 {
					return errors.New("signer down")
				}
				return nil
			})
			h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 201}}, otelretry.WithAttemptTimeout(100*time.Millisecond),
				otelretry.WithDeadline(time.Second), otelretry.WithoutBudget(),
				otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithStateCheck(check), prepare)
			var res otelretry.Results
			resp, err := h.transprt.RoundTrip(post(t, otelretry.WithResults(t.Context(), &res), "http://api.test/orders", `{"sku":"A1"}`))
			if err == nil {
				resp.Body.Close()
			}
			last, _ := res.Last()
			t.Logf("outcome %s (%s), unknown %v, attempts %d, calls %d, err %v", last.Outcome, last.Reason, last.OutcomeUnknown, last.Attempts, len(h.base.Calls()), err)
			if err == nil || len(h.base.Calls()) != 1 || !last.OutcomeUnknown || !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("want an unknown write after 1 call")
			}
		})
	})
	t.Run("flaky", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var c checks
			calls := 0
			prepare := otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				calls++
				if calls == 2 {
					return errors.New("signer busy")
				}
				return nil
			})
			h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 201}}, otelretry.WithAttemptTimeout(100*time.Millisecond),
				otelretry.WithoutBudget(), otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
				c.answering(attrs.StateNotApplied), prepare)
			var res otelretry.Results
			resp, err := h.transprt.RoundTrip(post(t, otelretry.WithResults(t.Context(), &res), "http://api.test/orders", `{"sku":"A1"}`))
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			resp.Body.Close()
			last, _ := res.Last()
			var numbers []int64
			for _, e := range h.events(t) {
				numbers = append(numbers, e.Attempt)
			}
			if resp.StatusCode != 201 || len(h.base.Calls()) != 2 || len(c.told) != 1 || last.Attempts != 2 || !slices.Equal(numbers, []int64{1, 2}) {
				t.Errorf("ended %s (%s), %d attempts, %d calls, %d checks, spans %v; want 201 after 2 calls numbered [1 2], 1 check",
					last.Outcome, last.Reason, last.Attempts, len(h.base.Calls()), len(c.told), numbers)
			}
		})
	})
}
