// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

func stored(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
}

func TestStateCheckResolvesAnUnknownWrite(t *testing.T) {
	cases := []struct {
		name        string
		result      otelretry.StateResult
		hookErr     error
		wantCalls   int
		wantStatus  int // 0: want an error
		wantOutcome string
		wantResult  string
	}{
		{"applied returns the stored result", otelretry.StateResult{State: attrs.StateApplied, Response: stored(201, "order 1")}, nil, 1, 201, "return", "applied"},
		{"not applied resends the write", otelretry.StateResult{State: attrs.StateNotApplied}, nil, 2, 202, "return", "not_applied"},
		{"unknown keeps check_state", otelretry.StateResult{State: attrs.StateUnknown}, nil, 1, 0, "check_state", "unknown"},
		{"hook error keeps check_state", otelretry.StateResult{}, errors.New("state store down"), 1, 0, "check_state", "unknown"},
		{"applied without a response is not invented", otelretry.StateResult{State: attrs.StateApplied}, nil, 1, 0, "check_state", "unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var seen otelretry.StateCheck
				hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
					seen = c
					if _, ok := ctx.Deadline(); !ok {
						t.Error("state check context has no deadline")
					}
					return tc.result, tc.hookErr
				}
				h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 202}},
					otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithStateCheck(hook))
				ctx := otelretry.WithOperationID(t.Context(), "op-9")
				resp, err := h.client.Do(post(t, ctx, "http://api.test/orders", "order"))
				if tc.wantStatus == 0 {
					if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
						t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
					}
				} else {
					if err != nil || resp.StatusCode != tc.wantStatus {
						t.Fatalf("got %v, %v; want status %d", resp, err, tc.wantStatus)
					}
					resp.Body.Close()
				}
				if n := len(h.base.Calls()); n != tc.wantCalls {
					t.Fatalf("calls = %d, want %d", n, tc.wantCalls)
				}
				if seen.OperationID != "op-9" || seen.Attempt != 1 || seen.Request.Method != "POST" || seen.Err == nil {
					t.Errorf("hook saw %+v", seen)
				}
				op := h.operation(t)
				if got := attrOf(op, attrs.OutcomeKey).AsString(); got != tc.wantOutcome {
					t.Errorf("outcome = %s, want %s", got, tc.wantOutcome)
				}
				checks := spantest.Named(h.ended(), attrs.StateCheckSpanName)
				if len(checks) != 1 || checks[0].Parent().SpanID() != op.SpanContext().SpanID() {
					t.Fatalf("want one state_check span under the operation span, got %d", len(checks))
				}
				if got := attrOf(checks[0], attrs.StateCheckResultKey).AsString(); got != tc.wantResult {
					t.Errorf("state check result = %s, want %s", got, tc.wantResult)
				}
				if got := h.events(t)[0].Decision; got != "check_state" {
					t.Errorf("first attempt decision = %s, want check_state", got)
				}
			})
		})
	}
}

func TestIdempotencyKeyRetriesOnlyUnderTheContract(t *testing.T) {
	for _, optIn := range []bool{false, true} {
		t.Run(map[bool]string{false: "without", true: "with"}[optIn], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := []otelretry.Option{otelretry.WithAttemptTimeout(100 * time.Millisecond),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}
				if optIn {
					opts = append(opts, otelretry.WithIdempotencyKeyContract())
				}
				h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 201}}, opts...)
				req := post(t, t.Context(), "http://api.test/payments", "pay")
				req.Header.Set("Idempotency-Key", "8e03978e-40d5-43e8-bc93-6894a57f9324")
				resp, err := h.client.Do(req)
				calls := h.base.Calls()
				_, contract := spantest.Attr(h.operation(t), attrs.IdempotencyContractKey)
				if !optIn {
					if !errors.Is(err, otelretry.ErrOutcomeUnknown) || len(calls) != 1 || contract {
						t.Fatalf("without the contract: err=%v calls=%d contract=%v; want check_state after 1 call", err, len(calls), contract)
					}
					return
				}
				if err != nil || resp.StatusCode != 201 || len(calls) != 2 || !contract {
					t.Fatalf("with the contract: err=%v calls=%d contract=%v; want 201 after 2 calls", err, len(calls), contract)
				}
				resp.Body.Close()
				if calls[1].Header.Get("Idempotency-Key") != calls[0].Header.Get("Idempotency-Key") {
					t.Fatal("the resend changed the idempotency key")
				}
			})
		})
	}
}

func TestDeclaredIdempotentMethodRetriesAndRecordsTheContract(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 204}},
			otelretry.WithIdempotentMethods(http.MethodPut, http.MethodGet),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/items/1", strings.NewReader("v"))
		resp, err := h.client.Do(req)
		if err != nil || resp.StatusCode != 204 || len(h.base.Calls()) != 2 {
			t.Fatalf("PUT: %v %v after %d calls, want 204 after 2", resp, err, len(h.base.Calls()))
		}
		resp.Body.Close()
		if v, ok := spantest.Attr(h.operation(t), attrs.IdempotencyContractKey); !ok || !v.AsBool() {
			t.Fatal("a PUT declared idempotent must record the contract")
		}
	})
}

// A state check's lookup made through the same client is an operation of
// its own: it is not counted as a repeat of the write, and the write's
// attempts keep their numbering (1, 2).
func TestStateCheckLookupIsItsOwnOperation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h *harness
		hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/orders/by-key/"+c.OperationID, nil)
			resp, err := h.client.Do(req)
			if err != nil {
				return otelretry.StateResult{}, err
			}
			resp.Body.Close()
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		}
		h = newHarness(t, []scripted.Step{{Hang: true}, {Status: 404}, {Status: 201}},
			otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithStateCheck(hook))
		ctx := otelretry.WithOperationID(t.Context(), "op-write")
		resp, err := h.client.Do(post(t, ctx, "http://api.test/orders", "order"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var writeAttempts []int64
		for _, s := range h.attempts() {
			if attrOf(s, attrs.OperationIDKey).AsString() == "op-write" {
				writeAttempts = append(writeAttempts, attrOf(s, attrs.AttemptKey).AsInt64())
			}
		}
		if len(writeAttempts) != 2 || writeAttempts[0] != 1 || writeAttempts[1] != 2 {
			t.Errorf("the write's attempts are numbered %v, want [1 2]", writeAttempts)
		}
		for _, op := range spantest.Operations(h.ended()) {
			if v, ok := spantest.Attr(op, attrs.RepeatKey); ok {
				t.Errorf("operation %s carries retry.operation.repeat=%d: the lookup is not a repeat of the write",
					attrOf(op, attrs.OperationIDKey).AsString(), v.AsInt64())
			}
		}
	})
}

// A state check's error is recorded, sanitized, on the state_check span,
// and reachable from the returned error.
func TestStateCheckErrorIsRecordedAndReachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lookupErr := errors.New("orders DB unreachable at http://admin:hunter2@db.internal/q?token=tok-77")
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithAttemptTimeout(50*time.Millisecond),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{}, lookupErr
			}))
		_, err := h.transprt.RoundTrip(post(t, t.Context(), "http://api.test/orders", "order"))
		if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
		}
		if !errors.Is(err, lookupErr) {
			t.Errorf("err = %v: the state check's error is not reachable with errors.Is", err)
		}
		var found bool
		for _, s := range h.ended() {
			if s.Name() != attrs.StateCheckSpanName {
				continue
			}
			text := s.Status().Description
			for _, e := range s.Events() {
				for _, kv := range e.Attributes {
					text += " " + kv.Value.Emit()
				}
			}
			found = strings.Contains(text, "orders DB unreachable")
			if strings.Contains(text, "hunter2") || strings.Contains(text, "tok-77") {
				t.Errorf("the state_check span carries a secret: %s", text)
			}
		}
		if !found {
			t.Errorf("the state check's error is on no state_check span")
		}
	})
}
