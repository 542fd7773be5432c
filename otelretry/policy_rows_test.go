// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Rows of docs/decisions.md's decision table, end to end through the
// Transport over a scripted base (the table's own test checks only that
// its text is generated; these rows had no end-to-end test: a
// reviewer's).
func TestDecisionTableRowsEndToEnd(t *testing.T) {
	keys := otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())
	classify := func(c otelretry.Classification) otelretry.Option {
		return otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification { return c })
	}
	hdr := func(k, v string) http.Header { return http.Header{k: {v}} }
	for _, tc := range []struct {
		name   string
		method string
		steps  []scripted.Step
		opts   []otelretry.Option
		want   []string
	}{
		{"row12 3xx", "GET", []scripted.Step{{Status: 304}}, nil, []string{"304 return response"}},
		{"row16 classifier stop", "GET", []scripted.Step{{Status: 503}}, []otelretry.Option{classify(otelretry.NotRetryable())},
			[]string{"503 stop classifier"}},
		{"row18 classifier retry", "GET", []scripted.Step{{Status: 500}, {Status: 200}}, []otelretry.Option{classify(otelretry.Retryable(0))},
			[]string{"500 retry classifier", "200 return response"}},
		{"row19 classifier retry write", "POST", []scripted.Step{{Status: 500}}, []otelretry.Option{classify(otelretry.Retryable(0))},
			[]string{"500 stop not_idempotent"}},
		{"row20 false", "GET", []scripted.Step{{Status: 503, Header: hdr("X-Should-Retry", "false")}}, nil,
			[]string{"503 stop server_no_retry"}},
		{"row20 before row21", "POST", []scripted.Step{{Status: 409, Header: hdr("Stripe-Should-Retry", "false")}}, []otelretry.Option{keys},
			[]string{"409 stop server_no_retry"}},
		{"row21 409 key", "POST", []scripted.Step{{Status: 409}, {Status: 200}}, []otelretry.Option{keys},
			[]string{"409 retry key_in_progress", "200 return response"}},
		{"row22 422 key", "POST", []scripted.Step{{Status: 422}}, []otelretry.Option{keys},
			[]string{"422 stop key_reused"}},
		{"row22 422 no key", "POST", []scripted.Step{{Status: 422}}, nil,
			[]string{"422 stop status"}},
		{"row23 true read", "GET", []scripted.Step{{Status: 500, Header: hdr("X-Should-Retry", "true")}, {Status: 200}}, nil,
			[]string{"500 retry server_retry", "200 return response"}},
		{"row23 true write with option", "POST", []scripted.Step{{Status: 500, Header: hdr("X-Should-Retry", "true")}, {Status: 200}},
			[]otelretry.Option{otelretry.WithShouldRetryWrites()},
			[]string{"500 retry server_retry", "200 return response"}},
		{"row23 true write without option", "POST", []scripted.Step{{Status: 503, Header: hdr("X-Should-Retry", "true")}}, nil,
			[]string{"503 stop not_idempotent"}},
		{"row26 refused write", "POST", []scripted.Step{{Err: syscall.ECONNREFUSED}, {Status: 200}}, nil,
			[]string{"connection_refused retry not_processed", "200 return response"}},
		{"row29 503 read", "GET", []scripted.Step{{Status: 503}, {Status: 200}}, nil,
			[]string{"503 retry retryable_status", "200 return response"}},
		{"row30 503 write", "POST", []scripted.Step{{Status: 503}}, nil, []string{"503 stop not_idempotent"}},
		{"row31 500 read", "GET", []scripted.Step{{Status: 500}}, nil, []string{"500 stop status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tc.steps, append(append([]otelretry.Option{}, seedLike...), tc.opts...)...)
				req := rowRequest(t, tc.method)
				resp, err := h.client.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				got := tuples(t, h)
				if len(got) != len(tc.want) {
					t.Fatalf("attempts %q, want %q (err %v)", got, tc.want, err)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("attempt %d: %q, want %q (err %v)", i+1, got[i], tc.want[i], err)
					}
				}
			})
		})
	}
}

// Rows 32-36: the state check's answer decides.
func TestDecisionTableStateCheckRowsEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		result  otelretry.StateResult
		err     error
		intent  otelretry.Intent
		outcome string
		calls   int
	}{
		{"row34 error", otelretry.StateResult{}, errors.New("lookup failed"), otelretry.Intent{}, "check_state", 1},
		{"row34 unknown", otelretry.StateResult{State: attrs.StateUnknown}, nil, otelretry.Intent{}, "check_state", 1},
		{"row34 outside", otelretry.StateResult{State: "maybe"}, nil, otelretry.Intent{}, "check_state", 1},
		{"row36 not applied", otelretry.StateResult{State: attrs.StateNotApplied}, nil, otelretry.Intent{}, "return", 2},
		{"row35 not applied NoRetry", otelretry.StateResult{State: attrs.StateNotApplied}, nil, otelretry.Intent{NoRetry: true}, "stop", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				check := otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
					return tc.result, tc.err
				})
				h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}},
					append(append([]otelretry.Option{}, seedLike...), check, otelretry.WithAttemptTimeout(100*time.Millisecond))...)
				ctx := otelretry.WithIntent(t.Context(), tc.intent)
				resp, err := h.client.Do(post(t, ctx, "http://api.test/orders", "x"))
				if err == nil {
					resp.Body.Close()
				}
				if got := attrOf(h.operation(t), attrs.OutcomeKey).AsString(); got != tc.outcome {
					t.Errorf("outcome %q, want %q (tuples %q, err %v)", got, tc.outcome, tuples(t, h), err)
				}
				if n := len(h.base.Calls()); n != tc.calls {
					t.Errorf("calls %d, want %d (tuples %q)", n, tc.calls, tuples(t, h))
				}
				t.Logf("tuples %q err %v", tuples(t, h), err)
			})
		})
	}
}

// Rows 6 and 7 for a repeatable write whose outcome is unresolved: its
// resend, stopped by GetBody or the PrepareAttemptFunc, goes to the state
// check (note ²), which is asked once and, answering unknown, ends it
// check_state, reason state_unknown (row 34), with no second call.
func TestDecisionTablePreparedUnresolvedWriteRows(t *testing.T) {
	keys := otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())
	for _, tc := range []struct {
		name string
		opt  otelretry.Option
		gb   bool
	}{
		{"row7 prepare failed", otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
			if n > 1 {
				return errors.New("no signature")
			}
			return nil
		}), false},
		{"row6 GetBody failed", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				checks := 0
				opts := append(append([]otelretry.Option{}, seedLike...), keys, otelretry.WithAttemptTimeout(100*time.Millisecond),
					otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
						checks++
						return otelretry.StateResult{State: attrs.StateUnknown}, nil
					}))
				if tc.opt != nil {
					opts = append(opts, tc.opt)
				}
				h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}}, opts...)
				req := post(t, t.Context(), "http://api.test/orders", "x")
				if tc.gb {
					req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("gone") }
				}
				resp, err := h.client.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				if got := attrOf(h.operation(t), attrs.OutcomeKey).AsString(); got != "check_state" {
					t.Errorf("outcome %q, want check_state (tuples %q, err %v)", got, tuples(t, h), err)
				}
				var oe *otelretry.Error
				if !errors.Is(err, otelretry.ErrOutcomeUnknown) || !errors.As(err, &oe) || oe.Reason != attrs.ReasonStateUnknown {
					t.Errorf("err %v, want ErrOutcomeUnknown, reason state_unknown", err)
				}
				if checks != 1 || len(h.base.Calls()) != 1 {
					t.Errorf("%d state checks and %d calls, want 1 and 1", checks, len(h.base.Calls()))
				}
			})
		})
	}
}

// Row 13: a failed answer after the caller canceled is recorded with the
// caller's end (row 14, the caller's deadline passing as the answer is
// judged, is in policy_rowsmore_test.go).
func TestDecisionTableFailedAnswerAfterTheCallerRow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			cancel()
			return &http.Response{StatusCode: 503, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		h := newHarness(t, nil, seedLike...)
		tr := otelretry.NewTransport(base, append(append([]otelretry.Option{}, seedLike...), otelretry.WithTracerProvider(h.tp))...)
		resp, err := (&http.Client{Transport: tr}).Do(get(t, ctx, "http://api.test/orders"))
		if err == nil {
			resp.Body.Close()
		}
		if got := tuples(t, h); len(got) != 1 || got[0] != "503 canceled caller" {
			t.Errorf("tuples %q, want [503 canceled caller] (err %v)", got, err)
		}
	})
}

// rowRequest is a row's request: a GET, or a POST with a body.
func rowRequest(t *testing.T, method string) *http.Request {
	t.Helper()
	if method == http.MethodGet {
		return get(t, t.Context(), "http://api.test/orders")
	}
	return post(t, t.Context(), "http://api.test/orders", "x")
}
