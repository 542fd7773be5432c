// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// errRefusedDial is an error that leaves nothing unknown: the request
// never left (an error of a base that reports nothing through httptrace
// proves nothing otherwise; decisions.md row 15).
var errRefusedDial = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

// A newcomer configures both halves of "Writes that succeed" (README):
// WithIdempotencyKeys, so that a write is resent under its key, and
// WithStateCheck, which the README says looks the write up "elsewhere"
// and whose godoc says it "resolves an unknown write outcome". The
// server applies the write and loses its answer. Without keys, the state
// check is asked and its stored answer returned. With keys, when the
// write cannot be resent under its key (its body cannot be replayed, or no
// attempt is left), the operation ends with ErrOutcomeUnknown and the
// state check the user configured is never asked: turning keys on loses
// the resolution the user set up.
func TestAKeyedWriteThatCannotBeResentIsStillLookedUp(t *testing.T) {
	cases := []struct {
		name          string
		keys          bool
		unknownLength bool
		opts          []otelretry.Option
		getBodyFails  bool
	}{
		{"no keys, one attempt (control)", false, false, []otelretry.Option{otelretry.WithMaxAttempts(1)}, false},
		{"no keys, body of unknown length (control)", false, true, nil, false},
		{"keys, one attempt", true, false, []otelretry.Option{otelretry.WithMaxAttempts(1)}, false},
		{"keys, body of unknown length", true, true, nil, false},
		// The limit stops the resend whatever the pause, which the deadline
		// checks first: the check needs none (decisions.md, footnote ²).
		{"keys, one attempt, a pause longer than the deadline", true, false,
			[]otelretry.Option{otelretry.WithMaxAttempts(1), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Hour))}, false},
		{"keys, body of unknown length, a pause longer than the deadline", true, true,
			[]otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Hour))}, false},
		// The resend's GetBody fails as it is prepared (a file gone; no
		// buffer stands for it).
		{"keys, GetBody fails", true, false, []otelretry.Option{otelretry.WithBodyBuffer(0, 0)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newKeyStore(t, lostOnce) // applies request 1, then closes the connection unanswered
			var checks atomic.Int32
			check := func(ctx context.Context, sc otelretry.StateCheck) (otelretry.StateResult, error) {
				checks.Add(1)
				stored := &http.Response{StatusCode: http.StatusCreated, Header: http.Header{},
					Body: io.NopCloser(strings.NewReader("order 1"))}
				return otelretry.StateResult{State: attrs.StateApplied, Response: stored}, nil
			}
			opts := append([]otelretry.Option{otelretry.WithStateCheck(check), otelretry.WithoutBudget()}, c.opts...)
			if c.keys {
				opts = append(opts, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))
			}
			base := http.DefaultTransport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: otelretry.NewTransport(base, opts...)}
			var res otelretry.Results
			ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "order-42"), &res)
			var body io.Reader = strings.NewReader(`{"sku":"A1"}`)
			if c.unknownLength {
				body = io.NopCloser(body) // net/http knows neither its length nor a GetBody
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", body)
			if err != nil {
				t.Fatal(err)
			}
			if c.getBodyFails {
				req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("the file is gone") }
			}
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			last, _ := res.Last()
			if n := len(srv.appliedPayloads()); n != 1 {
				t.Fatalf("applied %d, want 1", n)
			}
			if checks.Load() == 0 {
				t.Errorf("the write was applied and its answer lost; WithStateCheck was never asked: ended %s (%s), ErrOutcomeUnknown %v, err: %v",
					last.Outcome, last.Reason, errors.Is(err, otelretry.ErrOutcomeUnknown), err)
			}
			if err != nil || resp.StatusCode != http.StatusCreated {
				t.Errorf("want the state check's stored 201, got %+v", last)
			}
		})
	}
}

// A keyed write whose only attempt the operation's own deadline cuts has
// no time left for anything: it keeps the deadline's end (decisions.md,
// footnote ²), whatever WithMaxAttempts allows or its body: with no time
// left neither a resend nor a lookup can be made.
func TestAKeyedWriteCutByTheDeadlineEndsTheSameWhateverTheAttemptLimit(t *testing.T) {
	ends := map[string]string{}
	checksBy := map[string]int32{}
	for _, c := range []struct {
		name          string
		maxAttempts   int
		unknownLength bool
	}{{"3 attempts, replayable body", 3, false}, {"1 attempt, replayable body", 1, false}, {"3 attempts, body of unknown length", 3, true}} {
		maxAttempts := c.maxAttempts
		synctest.Test(t, func(t *testing.T) {
			var checks atomic.Int32
			check := func(ctx context.Context, sc otelretry.StateCheck) (otelretry.StateResult, error) {
				checks.Add(1)
				return otelretry.StateResult{State: attrs.StateUnknown}, nil
			}
			h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 201}, {Status: 201}},
				otelretry.WithDeadline(time.Second), otelretry.WithAttemptTimeout(10*time.Second),
				otelretry.WithMaxAttempts(maxAttempts), otelretry.WithoutBudget(),
				otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithStateCheck(check))
			var res otelretry.Results
			ctx := otelretry.WithResults(t.Context(), &res)
			req := post(t, ctx, "http://api.test/orders", `{"sku":"A1"}`)
			if c.unknownLength {
				req.Body, req.GetBody, req.ContentLength = io.NopCloser(strings.NewReader(`{"sku":"A1"}`)), nil, -1
			}
			resp, err := h.transprt.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			last, _ := res.Last()
			op := attrOf(h.operation(t), attrs.OutcomeKey).AsString()
			ends[c.name] = op + "/" + string(last.Reason)
			checksBy[c.name] = checks.Load()
			t.Logf("%s, WithMaxAttempts(%d): operation %s, Results %s (%s), checks %d, ErrOutcomeUnknown %v, calls %d",
				c.name, maxAttempts, op, last.Outcome, last.Reason, checks.Load(), errors.Is(err, otelretry.ErrOutcomeUnknown), len(h.base.Calls()))
		})
	}
	base := "3 attempts, replayable body"
	for name, end := range ends {
		if end != ends[base] {
			t.Errorf("a keyed write cut by the operation's deadline (no time left) ends %s with %s but %s with %s; state checks made: %d and %d",
				end, name, ends[base], base, checksBy[name], checksBy[base])
		}
	}
}

// checks is a state check that answers state (with a stored 201 when
// applied) and keeps what it was told.
type checks struct{ told []otelretry.StateCheck }

func (c *checks) answering(state attrs.StateCheckResult) otelretry.Option {
	return otelretry.WithStateCheck(func(ctx context.Context, sc otelretry.StateCheck) (otelretry.StateResult, error) {
		c.told = append(c.told, sc)
		if state != attrs.StateApplied {
			return otelretry.StateResult{State: state}, nil
		}
		stored := &http.Response{StatusCode: http.StatusCreated, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("order 1"))}
		return otelretry.StateResult{State: attrs.StateApplied, Response: stored}, nil
	})
}

// keyedWrite sends a keyed POST (no body buffer, attempts cut after
// 100 ms, no budget) through a harness playing steps, whose GetBody fails
// on the calls fails says (counting from 1). It returns the harness, the
// operation's result, its status (0 for an error), the error, and how
// many times GetBody was called.
func keyedWrite(t *testing.T, steps []scripted.Step, fails func(call int) bool, opts ...otelretry.Option) (h *harness, last otelretry.OperationResult, status int, err error, bodies int) {
	t.Helper()
	h = newHarness(t, steps, append([]otelretry.Option{otelretry.WithAttemptTimeout(100 * time.Millisecond), otelretry.WithoutBudget(),
		otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithBodyBuffer(0, 0)}, opts...)...)
	var res otelretry.Results
	req := post(t, otelretry.WithResults(t.Context(), &res), "http://api.test/orders", `{"sku":"A1"}`)
	req.GetBody = func() (io.ReadCloser, error) {
		bodies++
		if fails(bodies) {
			return nil, errors.New("the file is gone")
		}
		return io.NopCloser(strings.NewReader(`{"sku":"A1"}`)), nil
	}
	resp, err := h.transprt.RoundTrip(req)
	if err == nil {
		status = resp.StatusCode
		resp.Body.Close()
	}
	last, _ = res.Last()
	return h, last, status, err, bodies
}

func failsAlways(int) bool             { return true }
func failsOnce(call int) bool          { return call == 1 }
func failsFromTheSecond(call int) bool { return call >= 2 }

// A keyed write whose attempt timed out, and whose resend's GetBody then
// fails, is looked up (decisions.md, row 6 and footnote ²), and the
// check's answer decides: applied, its stored answer; not applied, the
// resend is tried again and its body still cannot be had (the write
// known not applied); unknown, it stays unknown, its error telling what
// stopped the resend. Without a check it ends stop/not_replayable,
// unknown.
func TestAKeyedWriteWhoseResendsGetBodyFailsIsLookedUp(t *testing.T) {
	for _, tc := range []struct {
		state          attrs.StateCheckResult // "": no state check
		status         int
		outcome        attrs.Outcome
		reason         attrs.Reason
		unknown        bool
		checks, bodies int
	}{
		{attrs.StateApplied, 201, attrs.OutcomeReturn, attrs.ReasonStateApplied, false, 1, 1},
		{attrs.StateNotApplied, 0, attrs.OutcomeStop, attrs.ReasonNotReplayable, false, 1, 2},
		{attrs.StateUnknown, 0, attrs.OutcomeCheckState, attrs.ReasonStateUnknown, true, 1, 1},
		{"", 0, attrs.OutcomeStop, attrs.ReasonNotReplayable, true, 0, 1},
	} {
		t.Run(string(tc.state), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var c checks
				var opts []otelretry.Option
				if tc.state != "" {
					opts = append(opts, c.answering(tc.state))
				}
				h, last, status, err, bodies := keyedWrite(t, []scripted.Step{{Hang: true}, {Status: 201}}, failsAlways, opts...)
				if last.Outcome != tc.outcome || last.Reason != tc.reason || last.OutcomeUnknown != tc.unknown || status != tc.status ||
					errors.Is(err, otelretry.ErrOutcomeUnknown) != tc.unknown || len(c.told) != tc.checks || bodies != tc.bodies || len(h.base.Calls()) != 1 {
					t.Errorf("ended %s (%s), unknown %v, status %d, %d checks, %d GetBody calls, %d calls, err %v; want %s (%s), unknown %v, status %d, %d checks, %d GetBody calls, 1 call",
						last.Outcome, last.Reason, last.OutcomeUnknown, status, len(c.told), bodies, len(h.base.Calls()), err,
						tc.outcome, tc.reason, tc.unknown, tc.status, tc.checks, tc.bodies)
				}
				if tc.unknown && (err == nil || !strings.Contains(err.Error(), "the file is gone")) {
					t.Errorf("the error does not tell what stopped the resend: %v", err)
				}
			})
		})
	}
}

// A keyed write whose first attempt timed out, whose resend's GetBody
// failed once (looked up: not_applied) and then succeeded, makes two
// network calls: Results.Attempts and retry.attempts say 2 (within
// WithMaxAttempts(2)), the attempt spans and headers are numbered 1 and
// 2, and no call is left recorded abandoned.
func TestALookedUpResendCountsTheCallsMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c checks
		h, last, status, _, _ := keyedWrite(t, []scripted.Step{{Hang: true}, {Status: 201}}, failsOnce,
			c.answering(attrs.StateNotApplied), otelretry.WithMaxAttempts(2), otelretry.WithAttemptHeader("X-Attempt"))
		calls := h.base.Calls()
		if status != 201 || len(calls) != 2 || len(c.told) != 1 {
			t.Fatalf("status %d, %d calls, %d checks; want 201, 2 calls, 1 check", status, len(calls), len(c.told))
		}
		var numbers []string
		for _, call := range calls {
			numbers = append(numbers, call.Header.Get("X-Attempt"))
		}
		var spanNumbers []int64
		for _, e := range h.events(t) {
			spanNumbers = append(spanNumbers, e.Attempt)
		}
		if opAttempts := attrOf(h.operation(t), "retry.attempts").AsInt64(); last.Attempts != 2 || opAttempts != 2 {
			t.Errorf("Results.Attempts %d, retry.attempts %d for 2 network calls; want 2", last.Attempts, opAttempts)
		}
		if ab := attrOf(h.operation(t), "retry.abandoned_attempt"); ab.AsInt64() != 0 {
			t.Errorf("operation span carries retry.abandoned_attempt %d though the resend was then made", ab.AsInt64())
		}
		if !slices.Equal(spanNumbers, []int64{1, 2}) || !slices.Equal(numbers, []string{"1", "2"}) {
			t.Errorf("attempt spans numbered %v, calls %v; want 1 and 2", spanNumbers, numbers)
		}
	})
}

// A keyed write whose first attempt timed out, whose resend was answered
// 503 or 409 (the write still unknown), and whose next resend's GetBody
// fails, is looked up: the check is told of the attempt whose outcome is
// unknown and its error (StateCheck godoc: "Attempt is the number of the
// attempt whose outcome is unknown. Err is that attempt's error (a
// timeout or a broken connection)"), and the operation's error tells what
// left it unknown, not only what stopped the resend.
func TestALookUpAfterAnAnsweredResendNamesTheUnknownAttempt(t *testing.T) {
	for _, status := range []int{503, 409} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var c checks
				h, last, _, err, _ := keyedWrite(t, []scripted.Step{{Hang: true}, {Status: status}, {Status: 201}}, failsFromTheSecond,
					c.answering(attrs.StateUnknown), otelretry.WithMaxAttempts(5))
				if len(c.told) != 1 {
					t.Fatalf("%d checks (outcome %s (%s), calls %d, err %v); want 1", len(c.told), last.Outcome, last.Reason, len(h.base.Calls()), err)
				}
				if c.told[0].Attempt != 1 || c.told[0].Err == nil {
					t.Errorf("the check was told attempt %d, err %v; want attempt 1 (the one that timed out) and its error", c.told[0].Attempt, c.told[0].Err)
				}
				if err == nil || !strings.Contains(err.Error(), "timeout") && !strings.Contains(err.Error(), "deadline") {
					t.Errorf("the operation's error does not tell what left the write unknown: %v", err)
				}
			})
		})
	}
}

// The same when the resend's PrepareAttemptFunc fails (a signer down):
// the write is looked up, and its stored answer returned.
func TestAKeyedWriteWhoseResendCannotBePreparedIsLookedUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c checks
		prepare := otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
			if n > 1 {
				return errors.New("signer down")
			}
			return nil
		})
		h, last, status, err, _ := keyedWrite(t, []scripted.Step{{Hang: true}, {Status: 201}}, func(int) bool { return false },
			c.answering(attrs.StateApplied), prepare)
		if err != nil || status != http.StatusCreated || len(c.told) != 1 || len(h.base.Calls()) != 1 {
			t.Fatalf("ended %s (%s), %d checks, %d calls, err %v; want the check's stored 201 after 1 call and 1 check",
				last.Outcome, last.Reason, len(c.told), len(h.base.Calls()), err)
		}
	})
}

// A keyed write answered 503 (retried: nothing left unresolved), then 409
// under its key (a request under its key is in progress: unresolved),
// whose next resend's GetBody fails, is looked up: the check is told of
// the 409's attempt, the one that left the write unresolved.
func TestALookUpAfterA503ThenA409NamesThe409(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c checks
		_, _, _, _, _ = keyedWrite(t, []scripted.Step{{Status: 503}, {Status: 409}, {Status: 201}}, failsFromTheSecond,
			c.answering(attrs.StateUnknown), otelretry.WithMaxAttempts(5))
		if len(c.told) != 1 || c.told[0].Attempt != 2 {
			t.Errorf("checks told of %+v; want one, of attempt 2 (the 409; attempt 1 got a 503)", c.told)
		}
	})
}

// A keyed write whose first attempt fails with an error that leaves
// nothing unknown (no write reported, no timeout, no broken connection:
// the policy does not hold the write unresolved after it), whose resend
// is answered 409 under its key (in progress: unresolved), and whose next
// resend's GetBody fails, is looked up. The check must be told of the
// attempt whose outcome is unknown (StateCheck godoc), the 409's: attempt
// 2, as TestALookUpAfterA503ThenA409NamesThe409 wants after a 503.
func TestALookUpAfterAnErrorThatLeftNothingUnknownThenA409NamesThe409(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c checks
		_, last, _, err, _ := keyedWrite(t, []scripted.Step{{Err: errRefusedDial}, {Status: 409}, {Status: 201}}, failsFromTheSecond,
			c.answering(attrs.StateUnknown), otelretry.WithMaxAttempts(5))
		if len(c.told) != 1 || c.told[0].Attempt != 2 {
			var told []int
			for _, sc := range c.told {
				told = append(told, sc.Attempt)
			}
			t.Errorf("checks told of attempts %v (ended %s (%s), err %v); want one, of attempt 2 (the 409; attempt 1's error left nothing unknown)",
				told, last.Outcome, last.Reason, err)
		}
	})
}

// Control: the same error alone, then the resend's GetBody fails: no
// lookup (the write is not unresolved after that error).
func TestAnErrorThatLeftNothingUnknownIsNotLookedUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c checks
		_, last, _, err, _ := keyedWrite(t, []scripted.Step{{Err: errRefusedDial}, {Status: 201}}, failsAlways,
			c.answering(attrs.StateUnknown), otelretry.WithMaxAttempts(5))
		if len(c.told) != 0 || last.OutcomeUnknown {
			t.Errorf("checks %d, ended %s (%s), unknown %v, err %v; want no check, the write not unknown", len(c.told), last.Outcome, last.Reason, last.OutcomeUnknown, err)
		}
	})
}

// A keyed write whose first attempt timed out (its outcome unknown) is
// retried; the retry fails with an error that leaves nothing unknown
// (a refused dial, as in TestAnErrorThatLeftNothingUnknownIsNotLookedUp), and the
// attempt limit (2) stops the next resend: the write is looked up
// (decisions.md footnote ²). The check must be told of attempt 1, the one
// whose outcome is unknown (StateCheck.Attempt godoc; "the check told of
// the attempt that left it unknown (the latest that lost its answer)"),
// with its timeout, not of attempt 2 and its refused dial.
func TestALookUpAtTheAttemptLimitAfterTimeoutThenBoomNamesTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c checks
		_, last, _, err, _ := keyedWrite(t, []scripted.Step{{Hang: true}, {Err: errRefusedDial}}, func(int) bool { return false },
			c.answering(attrs.StateUnknown), otelretry.WithMaxAttempts(2))
		if len(c.told) != 1 {
			t.Fatalf("%d checks (ended %s (%s), err %v); want one", len(c.told), last.Outcome, last.Reason, err)
		}
		if c.told[0].Attempt != 1 {
			t.Errorf("check told of attempt %d (err %v); want attempt 1, the one that timed out (attempt 2's error left nothing unknown)",
				c.told[0].Attempt, c.told[0].Err)
		}
	})
}

// The same after a 409 under the key (attempt 1: a request under its key
// in progress, the write unresolved), then a refused dial (attempt 2), at the
// attempt limit: the check must be told of attempt 1, as
// TestALookUpAfterA503ThenA409NamesThe409 wants of a 409.
func TestALookUpAtTheAttemptLimitAfter409ThenBoomNamesThe409(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c checks
		_, last, _, err, _ := keyedWrite(t, []scripted.Step{{Status: 409}, {Err: errRefusedDial}}, func(int) bool { return false },
			c.answering(attrs.StateUnknown), otelretry.WithMaxAttempts(2))
		if len(c.told) != 1 {
			t.Fatalf("%d checks (ended %s (%s), err %v); want one", len(c.told), last.Outcome, last.Reason, err)
		}
		if c.told[0].Attempt != 1 {
			t.Errorf("check told of attempt %d (err %v); want attempt 1, the 409 (attempt 2's error left nothing unknown)",
				c.told[0].Attempt, c.told[0].Err)
		}
	})
}
