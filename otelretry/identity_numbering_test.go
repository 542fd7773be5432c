// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// numbersOfRun returns the attempt numbers of the attempt spans and the
// retry.abandoned_attempt values of the operation spans recorded by h.
func numbersOfRun(t *testing.T, h *harness) (sent, abandonedNums []int64) {
	t.Helper()
	for _, s := range h.attempts() {
		sent = append(sent, attrOf(s, "retry.attempt").AsInt64())
	}
	for _, op := range spantest.Operations(h.ended()) {
		if v := attrOf(op, attrs.AbandonedAttemptKey); v.AsInt64() != 0 {
			abandonedNums = append(abandonedNums, v.AsInt64())
		}
	}
	slices.Sort(sent)
	slices.Sort(abandonedNums)
	return sent, abandonedNums
}

// checkNumbersRun wants, of the operations under one id, the numbers
// 1..max each used once, by an attempt span, or explained by an
// attempt_abandoned (retry.abandoned_attempt).
func checkNumbersRun(t *testing.T, sent, abandonedNums []int64) {
	t.Helper()
	seen := map[int64]int{}
	var max int64
	for _, n := range sent {
		seen[n]++
		max = maxOf(max, n)
	}
	for _, n := range abandonedNums {
		max = maxOf(max, n)
	}
	for n := int64(1); n <= max; n++ {
		switch {
		case seen[n] > 1:
			t.Errorf("attempt number %d used by %d attempt spans", n, seen[n])
		case seen[n] == 0 && !slices.Contains(abandonedNums, n):
			t.Errorf("attempt number %d skipped: no attempt span and no retry.abandoned_attempt names it (sent %v, abandoned %v)", n, sent, abandonedNums)
		case seen[n] == 1 && slices.Contains(abandonedNums, n):
			t.Errorf("attempt number %d is an attempt span's and also an operation's retry.abandoned_attempt (sent %v, abandoned %v)", n, sent, abandonedNums)
		}
	}
}

func maxOf(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// perPathBase answers each path with a script of its own: 503, then 200.
func perPathBase() roundTripFunc {
	var mu sync.Mutex
	scripts := map[string]*scripted.Transport{}
	return func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		s := scripts[r.URL.Path]
		if s == nil {
			s = scripted.New(scripted.Step{Delay: 10 * time.Millisecond, Status: 503}, scripted.Step{Delay: 10 * time.Millisecond, Status: 200})
			scripts[r.URL.Path] = s
		}
		mu.Unlock()
		return s.RoundTrip(r)
	}
}

// Under one WithOperationID, a job's first operation gets a 503 and is
// canceled by its caller during the pause before its retry: the retry's
// call is abandoned (canceled), and the operation records the number
// that call would have had (docs/telemetry.md, retry.abandoned_attempt).
// 15 other operations of the job took numbers 2 to 16 meanwhile: the
// number it records is one no other attempt has, and the numbers of the
// job keep no gap.
func TestARetryAbandonedUnderASharedIDNamesANumberNoOtherAttemptHas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		base := perPathBase()
		first := make(chan struct{})
		h.transprt = otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/jobs/canceled" {
				select {
				case <-first:
				default:
					close(first)
				}
			}
			return base(r)
		}), otelretry.WithTracerProvider(h.tp), otelretry.WithMeterProvider(h.mp),
			otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
		ctx := otelretry.WithOperationID(t.Context(), "job-1")
		var wg sync.WaitGroup
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		time.AfterFunc(15*time.Millisecond, cancel) // during the pause after its 503 (10 ms), before its retry (30 ms)
		wg.Go(func() {
			resp, err := h.transprt.RoundTrip(get(t, cctx, "http://api.test/jobs/canceled"))
			if err == nil {
				resp.Body.Close()
			}
		})
		<-first // its first attempt took number 1
		for i := range 15 {
			wg.Go(func() {
				resp, err := h.transprt.RoundTrip(get(t, ctx, fmt.Sprintf("http://api.test/jobs/%d", i)))
				if err == nil {
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		sent, ab := numbersOfRun(t, h)
		t.Logf("sent %v abandoned %v", sent, ab)
		if len(ab) != 1 {
			t.Fatalf("abandoned %v; want the canceled operation's one", ab)
		}
		checkNumbersRun(t, sent, ab)
	})
}

// A keyed POST whose first attempt lost its answer (timeout) is retried;
// the retry's GetBody fails, so the write is looked up (decisions.md,
// row 6): the check finds it applied and returns a stored 303 See Other.
// The call the retry planned (number 2) is recorded abandoned
// (retry.abandoned_attempt 2). http.Client follows the 303 with a GET,
// the next hop of the chain, whose attempts keep counting across hops
// (telemetry.md, retry.attempt). Its attempt must not be numbered 2 as
// well: that number is the abandoned call's.
func TestAStoredRedirectAfterAnAbandonedResendDoesNotReuseItsNumber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: http.StatusSeeOther,
				Header: http.Header{"Location": {"/orders/1"}}, Body: http.NoBody}}, nil
		}
		h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}},
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithoutBudget(),
			otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithBodyBuffer(0, 0),
			otelretry.WithStateCheck(hook), otelretry.WithAttemptHeader("X-Attempt"))
		req := post(t, t.Context(), "http://api.test/orders", `{"sku":"A1"}`)
		req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("the file is gone") }
		resp, err := h.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		calls := h.base.Calls()
		if err != nil || len(calls) != 2 || calls[1].Method != http.MethodGet {
			t.Fatalf("err %v, %d calls; want the POST and the GET of the stored 303", err, len(calls))
		}
		sent, ab := numbersOfRun(t, h)
		t.Logf("attempt spans numbered %v, abandoned %v, headers %q %q", sent, ab,
			calls[0].Header.Get("X-Attempt"), calls[1].Header.Get("X-Attempt"))
		checkNumbersRun(t, sent, ab)
	})
}
