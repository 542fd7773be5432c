// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// opOutcome is the operation span's outcome and the reason of the error
// RoundTrip returned (the operation span carries no reason).
func opOutcome(t *testing.T, h *harness, err error) string {
	t.Helper()
	op := h.operation(t)
	var e *otelretry.Error
	reason := ""
	if errors.As(err, &e) {
		reason = string(e.Reason)
	}
	return attrOf(op, attrs.OutcomeKey).AsString() + " " + reason
}

// Rows 1 and 2: the caller gone before the first call; no call made.
func TestDecisionTableBeforeACallRows(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func(context.Context) (context.Context, context.CancelFunc)
		want string
	}{
		{"row1 canceled", func(c context.Context) (context.Context, context.CancelFunc) {
			c, cancel := context.WithCancel(c)
			cancel()
			return c, cancel
		}, "canceled caller"},
		{"row2 deadline", func(c context.Context) (context.Context, context.CancelFunc) {
			return context.WithDeadline(c, time.Now().Add(-time.Millisecond))
		}, "deadline_exceeded caller"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Status: 200}}, seedLike...)
				ctx, cancel := tc.ctx(t.Context())
				defer cancel()
				_, _, err := roundTrip(t, h, get(t, ctx, "http://api.test/orders"))
				if err == nil {
					t.Fatal("no error")
				}
				if n := len(h.base.Calls()); n != 0 {
					t.Errorf("calls %d, want 0", n)
				}
				if got := opOutcome(t, h, err); got != tc.want {
					t.Errorf("operation %q, want %q (tuples %q)", got, tc.want, tuples(t, h))
				}
			})
		})
	}
}

// Rows 10, 11, 14, 15, 17, 25, 27 after an attempt, end to end.
func TestDecisionTableMoreAfterAnAttemptRows(t *testing.T) {
	classify := func(c otelretry.Classification) otelretry.Option {
		return otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification { return c })
	}
	for _, tc := range []struct {
		name    string
		method  string
		steps   []scripted.Step
		opts    []otelretry.Option
		want    []string
		outcome string
	}{
		{"row15 timeout write", "POST", []scripted.Step{{Err: errBaseTimeout}, {Status: 200}}, nil,
			[]string{"timeout check_state unknown_write"}, "check_state"},
		{"row15 broken write", "POST", []scripted.Step{{Err: errors.New("broken pipe-ish")}, {Status: 200}}, nil,
			[]string{"error check_state unknown_write"}, "check_state"},
		{"row17 classifier not processed", "POST", []scripted.Step{{Err: errors.New("boom")}, {Status: 200}},
			[]otelretry.Option{classify(otelretry.NotProcessed(otelretry.Evidence{}))},
			[]string{"error retry classifier", "200 return response"}, "return"},
		// The user's word without evidence overrides row 15's unknown
		// outcome of a timed-out write too (docs/decisions.md's hooks table).
		{"row17 classifier not processed over a timeout", "POST", []scripted.Step{{Err: errBaseTimeout}, {Status: 200}},
			[]otelretry.Option{classify(otelretry.NotProcessed(otelretry.Evidence{}))},
			[]string{"timeout retry classifier", "200 return response"}, "return"},
		{"row25 certificate", "GET", []scripted.Step{{Err: &tls.CertificateVerificationError{Err: errors.New("x509: unknown authority")}}, {Status: 200}}, nil,
			[]string{"error stop certificate"}, "stop"},
		{"row27 other error read", "GET", []scripted.Step{{Err: errors.New("boom")}, {Status: 200}}, nil,
			[]string{"error retry retryable_error", "200 return response"}, "return"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tc.steps, append(append([]otelretry.Option{}, seedLike...), tc.opts...)...)
				req := rowRequest(t, tc.method)
				_, _, err := roundTrip(t, h, req)
				got := tuples(t, h)
				// the error class names vary: compare decision and reason, and the class loosely
				if len(got) != len(tc.want) {
					t.Fatalf("attempts %q, want %q (err %v)", got, tc.want, err)
				}
				for i := range got {
					g, w := strings.SplitN(got[i], " ", 2), strings.SplitN(tc.want[i], " ", 2)
					if g[1] != w[1] {
						t.Errorf("attempt %d: %q, want %q (err %v)", i+1, got[i], tc.want[i], err)
					}
					if w[0] != "error" && g[0] != w[0] {
						t.Errorf("attempt %d: class %q, want %q", i+1, g[0], w[0])
					}
				}
				if o := attrOf(h.operation(t), attrs.OutcomeKey).AsString(); o != tc.outcome {
					t.Errorf("outcome %q, want %q", o, tc.outcome)
				}
			})
		})
	}
}

// Rows 10 and 11: no response and the caller gave up; a write in flight
// matches ErrOutcomeUnknown, and no state check runs.
func TestDecisionTableNoResponseCallerGoneRows(t *testing.T) {
	for _, deadline := range []bool{false, true} {
		for _, method := range []string{"GET", "POST"} {
			t.Run(method+map[bool]string{false: " canceled", true: " deadline"}[deadline], func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					checks := 0
					h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}}, append(append([]otelretry.Option{}, seedLike...),
						otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
							checks++
							return otelretry.StateResult{State: attrs.StateUnknown}, nil
						}))...)
					var ctx context.Context
					var cancel context.CancelFunc
					want := "canceled caller"
					if deadline {
						ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
						want = "deadline_exceeded caller"
					} else {
						ctx, cancel = context.WithCancel(t.Context())
						time.AfterFunc(50*time.Millisecond, cancel)
					}
					defer cancel()
					var req *http.Request
					if method == "GET" {
						req = get(t, ctx, "http://api.test/orders")
					} else {
						req = post(t, ctx, "http://api.test/orders", "x")
					}
					_, _, err := roundTrip(t, h, req)
					got := tuples(t, h)
					if len(got) != 1 || !strings.HasSuffix(got[0], " "+want) {
						t.Errorf("tuples %q, want one ending %q (err %v)", got, want, err)
					}
					if method == "POST" && !errors.Is(err, otelretry.ErrOutcomeUnknown) {
						t.Errorf("err %v, want ErrOutcomeUnknown", err)
					}
					if method == "GET" && errors.Is(err, otelretry.ErrOutcomeUnknown) {
						t.Errorf("err %v matches ErrOutcomeUnknown for a read", err)
					}
					if checks != 0 {
						t.Errorf("state checks %d, want 0", checks)
					}
				})
			})
		}
	}
}

// Row 14: a failed answer after the caller's deadline passed:
// deadline_exceeded, reason caller, the answer returned.
func TestDecisionTableFailedAnswerAfterTheDeadlineRow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		// the answer comes at once; the classifier (the last hook before
		// the decision) takes the caller's deadline: the clock is read
		// again after it (docs/decisions.md).
		slow := otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			time.Sleep(60 * time.Millisecond)
			return otelretry.Classification{}
		})
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, append(append([]otelretry.Option{}, seedLike...), slow)...)
		resp, err := h.transprt.RoundTrip(get(t, ctx, "http://api.test/orders"))
		if err == nil {
			resp.Body.Close()
		}
		if got := tuples(t, h); len(got) != 1 || got[0] != "503 deadline_exceeded caller" {
			t.Errorf("tuples %q, want [\"503 deadline_exceeded caller\"] (err %v)", got, err)
		}
		if resp == nil {
			t.Errorf("the answer was not returned (err %v)", err)
		}
	})
}

// Rows 32 and 33: the state check says applied; the caller gives up
// during the check.
func TestDecisionTableMoreStateCheckRows(t *testing.T) {
	t.Run("row32 applied", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			check := otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateApplied, Response: &http.Response{StatusCode: 201, Header: http.Header{},
					Body: io.NopCloser(strings.NewReader("stored"))}}, nil
			})
			h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}},
				append(append([]otelretry.Option{}, seedLike...), check, otelretry.WithAttemptTimeout(100*time.Millisecond))...)
			status, body, err := roundTrip(t, h, post(t, t.Context(), "http://api.test/orders", "x"))
			if err != nil || status != 201 || body != "stored" {
				t.Errorf("got %d %q %v, want the stored 201", status, body, err)
			}
			if got := opOutcome(t, h, err); got != "return " {
				t.Errorf("operation %q, want return (tuples %q)", got, tuples(t, h))
			}
			if got := attrOf(h.operation(t), attrs.StateCheckResultKey).AsString(); got != "applied" {
				t.Logf("state check result attribute %q", got)
			}
			if n := len(h.base.Calls()); n != 1 {
				t.Errorf("calls %d, want 1", n)
			}
		})
	})
	for _, deadline := range []bool{false, true} {
		t.Run(map[bool]string{false: "row33 canceled", true: "row33 deadline"}[deadline], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				want := "canceled caller"
				if deadline {
					var c2 context.CancelFunc
					ctx, c2 = context.WithTimeout(ctx, 150*time.Millisecond)
					defer c2()
					want = "deadline_exceeded caller"
				}
				check := otelretry.WithStateCheck(func(cctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
					if !deadline {
						cancel()
					}
					<-cctx.Done()
					return otelretry.StateResult{}, cctx.Err()
				})
				h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}},
					append(append([]otelretry.Option{}, seedLike...), check, otelretry.WithAttemptTimeout(100*time.Millisecond))...)
				_, _, err := roundTrip(t, h, post(t, ctx, "http://api.test/orders", "x"))
				if got := opOutcome(t, h, err); got != want {
					t.Errorf("operation %q, want %q (tuples %q, err %v)", got, want, tuples(t, h), err)
				}
				if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("err %v, want ErrOutcomeUnknown", err)
				}
				if n := len(h.base.Calls()); n != 1 {
					t.Errorf("calls %d, want 1", n)
				}
			})
		})
	}
}

// Rows 39, 41 and 47 at the hedge delay.
func TestDecisionTableHedgeRowsEndToEnd(t *testing.T) {
	hedging := otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 0.01})
	t.Run("row39 write not raced", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Status: 200}, {Status: 200}},
				append(append([]otelretry.Option{}, seedLike...), hedging, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))...)
			if _, _, err := roundTrip(t, h, post(t, t.Context(), "http://api.test/orders", "x")); err != nil {
				t.Fatal(err)
			}
			if n := len(h.base.Calls()); n != 1 {
				t.Errorf("calls %d, want 1", n)
			}
			if ev := hedgeEvents(t, h); len(ev) != 0 {
				t.Errorf("hedge events %q, want none", ev)
			}
		})
	})
	t.Run("row41 NoRetry not raced", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Status: 200}, {Status: 200}},
				append(append([]otelretry.Option{}, seedLike...), hedging)...)
			ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{NoRetry: true})
			if _, _, err := roundTrip(t, h, get(t, ctx, "http://api.test/orders")); err != nil {
				t.Fatal(err)
			}
			if n := len(h.base.Calls()); n != 1 {
				t.Errorf("calls %d, want 1", n)
			}
			if ev := hedgeEvents(t, h); len(ev) != 0 {
				t.Errorf("hedge events %q, want none", ev)
			}
		})
	})
	t.Run("row47 hedge rate", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Delay: 50 * time.Millisecond, Status: 200}, {Status: 200},
				{Delay: 50 * time.Millisecond, Status: 200}, {Status: 200}},
				append(append([]otelretry.Option{}, seedLike...), hedging)...)
			for range 2 {
				if _, _, err := roundTrip(t, h, get(t, t.Context(), "http://api.test/orders")); err != nil {
					t.Fatal(err)
				}
			}
			var refused []string
			for _, op := range h.ended() {
				for _, ev := range op.Events() {
					if ev.Name == attrs.EventHedgeRefused {
						r, _ := attrValue(ev.Attributes, attrs.ReasonKey)
						refused = append(refused, r)
					}
				}
			}
			if n := len(h.base.Calls()); n != 3 {
				t.Errorf("calls %d, want 3 (one hedge, then its rate spent)", n)
			}
			if len(refused) != 1 || refused[0] != "hedge_limit" {
				t.Errorf("hedge_refused reasons %q, want [hedge_limit]", refused)
			}
		})
	})
}
