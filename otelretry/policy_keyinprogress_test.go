// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

type review409Case struct {
	name        string
	steps       []scripted.Step
	opts        []otelretry.Option
	cancelAfter time.Duration // 0: never
	wantStatus  int           // 0: an error
	wantOutcome attrs.Outcome
	wantReason  attrs.Reason
	wantUnknown bool
}

func conflict(retryAfter string) scripted.Step {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return scripted.Step{Delay: 10 * time.Millisecond, Status: http.StatusConflict, Header: h, Body: "in progress"}
}

// A keyed write answered 409 stays unresolved (a122bbc): every ending of
// the operation after it, with what RoundTrip returns and what Results
// says.
func TestKeyedWrite409Endings(t *testing.T) {
	keys := otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())
	cases := []review409Case{
		{name: "attempt limit", steps: []scripted.Step{conflict(""), conflict("")},
			opts: []otelretry.Option{keys, otelretry.WithoutBudget(), otelretry.WithMaxAttempts(2)}, wantStatus: 409,
			wantOutcome: attrs.OutcomeMaxAttempts, wantReason: attrs.ReasonAttemptLimit, wantUnknown: true},
		{name: "deadline before the Retry-After pause", steps: []scripted.Step{conflict("10")},
			opts: []otelretry.Option{keys, otelretry.WithoutBudget(), otelretry.WithDeadline(5 * time.Second)}, wantStatus: 409,
			wantOutcome: attrs.OutcomeDeadlineExceeded, wantReason: attrs.ReasonDeadline, wantUnknown: true},
		{name: "budget refusal", steps: []scripted.Step{conflict("")},
			opts: []otelretry.Option{keys, otelretry.WithBudget(&otelretry.Budget{Tokens: 2})}, wantStatus: 409,
			wantOutcome: attrs.OutcomeBudgetExhausted, wantReason: attrs.ReasonBudget, wantUnknown: true},
		{name: "caller cancels in the pause", steps: []scripted.Step{conflict("5")},
			opts: []otelretry.Option{keys, otelretry.WithoutBudget()}, cancelAfter: time.Second,
			wantOutcome: attrs.OutcomeCanceled, wantReason: attrs.ReasonCaller, wantUnknown: true},
		{name: "later 2xx", steps: []scripted.Step{conflict(""), {Status: 201}},
			opts: []otelretry.Option{keys, otelretry.WithoutBudget()}, wantStatus: 201,
			wantOutcome: attrs.OutcomeReturn, wantReason: attrs.ReasonResponse, wantUnknown: false},
		{name: "later 422", steps: []scripted.Step{conflict(""), {Status: 422}},
			opts: []otelretry.Option{keys, otelretry.WithoutBudget()}, wantStatus: 422,
			wantOutcome: attrs.OutcomeStop, wantReason: attrs.ReasonKeyReused, wantUnknown: true},
		{name: "classifier stops the 409", steps: []scripted.Step{conflict("")},
			opts: []otelretry.Option{keys, otelretry.WithoutBudget(), otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				return otelretry.NotRetryable()
			})}, wantStatus: 409,
			wantOutcome: attrs.OutcomeStop, wantReason: attrs.ReasonClassifier, wantUnknown: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tc.steps, tc.opts...)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancelAfter > 0 {
					go func() { time.Sleep(tc.cancelAfter); cancel() }()
				}
				var res otelretry.Results
				ctx = otelretry.WithResults(otelretry.WithOperationID(ctx, "order-42"), &res)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/orders", strings.NewReader(`{"sku":"A1"}`))
				resp, err := h.transprt.RoundTrip(req)
				status := 0
				if resp != nil {
					status = resp.StatusCode
					resp.Body.Close()
				}
				last, _ := res.Last()
				t.Logf("status %d err %v; result %+v", status, err, last)
				if status != tc.wantStatus {
					t.Errorf("status %d, want %d (err %v)", status, tc.wantStatus, err)
				}
				if last.Outcome != tc.wantOutcome || last.Reason != tc.wantReason {
					t.Errorf("ended %s (%s), want %s (%s)", last.Outcome, last.Reason, tc.wantOutcome, tc.wantReason)
				}
				if last.OutcomeUnknown != tc.wantUnknown {
					t.Errorf("Results.Last().OutcomeUnknown = %v, want %v", last.OutcomeUnknown, tc.wantUnknown)
				}
				if err != nil {
					if errors.Is(err, otelretry.ErrOutcomeUnknown) != tc.wantUnknown {
						t.Errorf("errors.Is(err, ErrOutcomeUnknown) = %v, want %v: %v", !tc.wantUnknown, tc.wantUnknown, err)
					}
					if tc.wantUnknown && !strings.Contains(err.Error(), "outcome of the write unknown") {
						t.Errorf("message %q says nothing of the unknown outcome", err)
					}
					var oe *otelretry.Error
					if errors.As(err, &oe) && (oe.Timeout() || oe.RetryableError()) && tc.wantUnknown {
						t.Errorf("an unknown write's error says Timeout %v RetryableError %v", oe.Timeout(), oe.RetryableError())
					}
				}
			})
		})
	}
}

// The stripe-go recipe's layout (WithRecordedIdempotencyKey; the layer
// above resends a write under its one key), 32 writes in flight together:
// each first try is held by the server past otelretry's deadline (unknown,
// as documented), the layer above sends it again under the same key, and
// the server, still applying the first, answers 409. Results.OutcomeUnknown's
// doc says to read Last when the layer above resends under one key; Last
// must not say the outcome is known while the key's first request is in
// progress, as it does not for a generated key (a122bbc).
func TestRecordedKey409AfterALostAnswerIsNotKnown(t *testing.T) {
	srv := newDraftServer(t, func(_ string, n int) draftFault { return pick(n == 1, rvHold) })
	client, _ := dialectClient(t, otelretry.WithRecordedIdempotencyKey(), otelretry.WithoutBudget(),
		otelretry.WithDeadline(300*time.Millisecond))
	const n = 32
	type outcome struct {
		statuses []int
		res      *otelretry.Results
	}
	out := make([]outcome, n)
	start := make(chan struct{})
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			<-start
			var res otelretry.Results
			ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "op-"+strconv.Itoa(i)), &res)
			var statuses []int
			for range 2 { // stripe-go's loop: again after a lost answer
				status, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", "w-"+strconv.Itoa(i),
					"Idempotency-Key", `"k-`+strconv.Itoa(i)+`"`)
				statuses = append(statuses, status)
				if err == nil {
					break
				}
			}
			out[i] = outcome{statuses, &res}
		}()
	}
	close(start)
	for range n {
		<-done
	}
	bad := 0
	for i, o := range out {
		applied := srv.appliedOf("POST /orders w-" + strconv.Itoa(i))
		last, _ := o.res.Last()
		if applied == 1 && last.StatusCode == http.StatusConflict && !last.OutcomeUnknown {
			bad++
			if bad <= 2 {
				t.Errorf("w-%d: applied %d, tries %v; Results.Last %s (%s) status %d OutcomeUnknown false (all: %+v)",
					i, applied, o.statuses, last.Outcome, last.Reason, last.StatusCode, o.res.Operations())
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d writes: told known on a 409 while the key's first request was in progress", bad, n)
	}
}
