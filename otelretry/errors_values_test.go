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
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The error values a caller branches on, for every way an operation ends
// without a response, through RoundTrip and through http.Client.Do (its
// *url.Error around them): the *Error's Outcome and Attempts, errors.Is
// against the sentinels, the context's errors and the caller's cause,
// net.Error's and os.IsTimeout's Timeout, RetryableError, and a message
// naming the operation and its outcome with no secret (a reviewer's
// table, adopted as it held).

type errorWant struct {
	outcome   attrs.Outcome
	attempts  int
	is        []error
	isNot     []error
	timeout   bool
	retryable bool
}

type errorCase struct {
	name string
	opts []otelretry.Option
	base roundTripFunc
	req  func(t *testing.T, ctx context.Context) *http.Request
	ctx  func(ctx context.Context) (context.Context, context.CancelFunc)
	want errorWant
}

var errTheCallersCause = errors.New("the caller's own cause")
var errTheHookFailed = errors.New("the hook failed")

func answerNever(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
	}
	<-r.Context().Done()
	return nil, r.Context().Err()
}

func errorCases() []errorCase {
	getReq := func(t *testing.T, ctx context.Context) *http.Request {
		return get(t, ctx, "http://user:pw@api.test/items?token=s3cret")
	}
	postReq := func(t *testing.T, ctx context.Context) *http.Request {
		return post(t, ctx, "http://user:pw@api.test/items?token=s3cret", "payload")
	}
	reset := func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
		}
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	}
	common := []otelretry.Option{otelretry.WithDeadline(10 * time.Second), otelretry.WithBackoff(otelretry.ConstantBackoff(10 * time.Millisecond))}
	with := func(o ...otelretry.Option) []otelretry.Option {
		return append(append([]otelretry.Option{}, common...), o...)
	}
	return []errorCase{
		{name: "read max_attempts after resets", opts: with(otelretry.WithMaxAttempts(3), otelretry.WithoutBudget()), base: reset, req: getReq,
			want: errorWant{outcome: attrs.OutcomeMaxAttempts, attempts: 3, is: []error{otelretry.ErrMaxAttempts, syscall.ECONNRESET}, isNot: []error{otelretry.ErrOutcomeUnknown, context.Canceled, context.DeadlineExceeded, otelretry.ErrBudgetExhausted}, retryable: true}},
		{name: "read max_attempts after attempt timeouts", opts: with(otelretry.WithMaxAttempts(2), otelretry.WithoutBudget(), otelretry.WithAttemptTimeout(time.Second)), base: answerNever, req: getReq,
			want: errorWant{outcome: attrs.OutcomeMaxAttempts, attempts: 2, is: []error{otelretry.ErrMaxAttempts, context.DeadlineExceeded}, isNot: []error{otelretry.ErrOutcomeUnknown, context.Canceled}, timeout: true, retryable: true}},
		{name: "read operation deadline", opts: []otelretry.Option{otelretry.WithDeadline(time.Second), otelretry.WithoutBudget()}, base: answerNever, req: getReq,
			want: errorWant{outcome: attrs.OutcomeDeadlineExceeded, attempts: 1, is: []error{context.DeadlineExceeded}, isNot: []error{otelretry.ErrOutcomeUnknown, context.Canceled, otelretry.ErrMaxAttempts}, timeout: true}},
		{name: "read caller deadline with cause", opts: with(otelretry.WithoutBudget()), base: answerNever, req: getReq,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeoutCause(ctx, time.Second, errTheCallersCause)
			},
			want: errorWant{outcome: attrs.OutcomeDeadlineExceeded, attempts: 1, is: []error{context.DeadlineExceeded, errTheCallersCause}, isNot: []error{otelretry.ErrOutcomeUnknown, context.Canceled}, timeout: true}},
		{name: "read caller cancel with cause", opts: with(otelretry.WithoutBudget()), base: answerNever, req: getReq,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancelCause(ctx)
				time.AfterFunc(time.Second, func() { cancel(errTheCallersCause) })
				return ctx, func() { cancel(nil) }
			},
			want: errorWant{outcome: attrs.OutcomeCanceled, attempts: 1, is: []error{context.Canceled, errTheCallersCause}, isNot: []error{otelretry.ErrOutcomeUnknown, context.DeadlineExceeded}}},
		{name: "read caller cancel without cause", opts: with(otelretry.WithoutBudget()), base: answerNever, req: getReq,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(time.Second, cancel)
				return ctx, cancel
			},
			want: errorWant{outcome: attrs.OutcomeCanceled, attempts: 1, is: []error{context.Canceled}, isNot: []error{otelretry.ErrOutcomeUnknown, context.DeadlineExceeded}}},
		{name: "caller canceled before the call", opts: with(otelretry.WithoutBudget()), base: answerNever, req: getReq,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancelCause(ctx)
				cancel(errTheCallersCause)
				return ctx, func() {}
			},
			want: errorWant{outcome: attrs.OutcomeCanceled, attempts: 0, is: []error{context.Canceled, errTheCallersCause}, isNot: []error{otelretry.ErrOutcomeUnknown, context.DeadlineExceeded}}},
		{name: "write reset: check_state", opts: with(otelretry.WithoutBudget()), base: reset, req: postReq,
			want: errorWant{outcome: attrs.OutcomeCheckState, attempts: 1, is: []error{otelretry.ErrOutcomeUnknown, syscall.ECONNRESET}, isNot: []error{otelretry.ErrMaxAttempts, context.Canceled, context.DeadlineExceeded}}},
		{name: "write caller deadline with cause", opts: with(otelretry.WithoutBudget()), base: answerNever, req: postReq,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeoutCause(ctx, time.Second, errTheCallersCause)
			},
			want: errorWant{outcome: attrs.OutcomeDeadlineExceeded, attempts: 1, is: []error{otelretry.ErrOutcomeUnknown, context.DeadlineExceeded, errTheCallersCause}, isNot: []error{context.Canceled}}},
		{name: "write caller cancel", opts: with(otelretry.WithoutBudget()), base: answerNever, req: postReq,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancelCause(ctx)
				time.AfterFunc(time.Second, func() { cancel(errTheCallersCause) })
				return ctx, func() { cancel(nil) }
			},
			want: errorWant{outcome: attrs.OutcomeCanceled, attempts: 1, is: []error{otelretry.ErrOutcomeUnknown, context.Canceled, errTheCallersCause}, isNot: []error{context.DeadlineExceeded}}},
		{name: "write operation deadline", opts: []otelretry.Option{otelretry.WithDeadline(time.Second), otelretry.WithoutBudget()}, base: answerNever, req: postReq,
			want: errorWant{outcome: attrs.OutcomeCheckState, attempts: 1, is: []error{otelretry.ErrOutcomeUnknown, context.DeadlineExceeded}, isNot: []error{context.Canceled}}},
		{name: "budget refusal", opts: with(otelretry.WithMaxAttempts(5), otelretry.WithBudget(&otelretry.Budget{Tokens: 2})), base: reset, req: getReq,
			want: errorWant{outcome: attrs.OutcomeBudgetExhausted, attempts: 1, is: []error{otelretry.ErrBudgetExhausted, syscall.ECONNRESET}, isNot: []error{otelretry.ErrMaxAttempts, otelretry.ErrOutcomeUnknown}}},
		{name: "budget refusal after timeout", opts: with(otelretry.WithMaxAttempts(5), otelretry.WithAttemptTimeout(time.Second), otelretry.WithBudget(&otelretry.Budget{Tokens: 2})), base: answerNever, req: getReq,
			want: errorWant{outcome: attrs.OutcomeBudgetExhausted, attempts: 1, is: []error{otelretry.ErrBudgetExhausted, context.DeadlineExceeded}, isNot: []error{otelretry.ErrMaxAttempts, otelretry.ErrOutcomeUnknown}, timeout: true}},
		{name: "prepare failed first", opts: with(otelretry.WithoutBudget(), otelretry.WithPrepareAttempt(func(*http.Request, int) error { return errTheHookFailed })), base: reset, req: getReq,
			want: errorWant{outcome: attrs.OutcomeStop, attempts: 0, is: []error{errTheHookFailed}, isNot: []error{otelretry.ErrOutcomeUnknown, otelretry.ErrMaxAttempts}}},
		{name: "getbody failed on retry", opts: with(otelretry.WithoutBudget(), otelretry.WithIdempotentMethods("POST")), base: reset,
			req: func(t *testing.T, ctx context.Context) *http.Request {
				r := postReq(t, ctx)
				r.GetBody = func() (io.ReadCloser, error) { return nil, errTheHookFailed }
				return r
			},
			want: errorWant{outcome: attrs.OutcomeStop, attempts: 1, is: []error{errTheHookFailed, otelretry.ErrOutcomeUnknown, syscall.ECONNRESET}}},
		{name: "state check error", opts: with(otelretry.WithoutBudget(), otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
			return otelretry.StateResult{}, errTheHookFailed
		})), base: reset, req: postReq,
			want: errorWant{outcome: attrs.OutcomeCheckState, attempts: 1, is: []error{otelretry.ErrOutcomeUnknown, errTheHookFailed, syscall.ECONNRESET}, isNot: []error{context.Canceled}}},
		{name: "state check unknown", opts: with(otelretry.WithoutBudget(), otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateUnknown}, nil
		})), base: reset, req: postReq,
			want: errorWant{outcome: attrs.OutcomeCheckState, attempts: 1, is: []error{otelretry.ErrOutcomeUnknown, syscall.ECONNRESET}, isNot: []error{context.Canceled}}},
		{name: "state check not_applied then max_attempts", opts: with(otelretry.WithoutBudget(), otelretry.WithMaxAttempts(2), otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		})), base: reset, req: postReq,
			want: errorWant{outcome: attrs.OutcomeMaxAttempts, attempts: 2, is: []error{otelretry.ErrMaxAttempts, syscall.ECONNRESET}, isNot: []error{otelretry.ErrOutcomeUnknown}, retryable: true}},
		{name: "caller cancel during state check", opts: with(otelretry.WithoutBudget(), otelretry.WithStateCheck(func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
			<-ctx.Done()
			return otelretry.StateResult{}, ctx.Err()
		})), base: reset, req: postReq,
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancelCause(ctx)
				time.AfterFunc(time.Second, func() { cancel(errTheCallersCause) })
				return ctx, func() { cancel(nil) }
			},
			want: errorWant{outcome: attrs.OutcomeCanceled, attempts: 1, is: []error{otelretry.ErrOutcomeUnknown, context.Canceled, errTheCallersCause}, isNot: []error{context.DeadlineExceeded}}},
		{name: "hedged race all fail", opts: with(otelretry.WithoutBudget(), otelretry.WithMaxAttempts(2), otelretry.WithHedging(otelretry.Hedging{Delay: 100 * time.Millisecond, MaxShare: 1})),
			base: func(r *http.Request) (*http.Response, error) {
				select {
				case <-time.After(300 * time.Millisecond):
				case <-r.Context().Done():
					return nil, r.Context().Err()
				}
				return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
			}, req: getReq,
			want: errorWant{outcome: attrs.OutcomeMaxAttempts, attempts: 2, is: []error{otelretry.ErrMaxAttempts, syscall.ECONNRESET}, isNot: []error{otelretry.ErrOutcomeUnknown, context.Canceled, context.DeadlineExceeded}, retryable: true}},
		{name: "body cannot be buffered", opts: with(otelretry.WithoutBudget(), otelretry.WithBodyBuffer(2, 2)), base: reset,
			req: func(t *testing.T, ctx context.Context) *http.Request {
				r, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://api.test/items?token=s3cret", io.NopCloser(strings.NewReader("a long payload")))
				if err != nil {
					t.Fatal(err)
				}
				r = r.WithContext(otelretry.WithIntent(ctx, otelretry.Intent{Repeatable: true}))
				return r
			},
			want: errorWant{outcome: attrs.OutcomeStop, attempts: 1, is: []error{otelretry.ErrNotReplayable, syscall.ECONNRESET}}},
		{name: "getbody failed with a state check", opts: with(otelretry.WithoutBudget(), otelretry.WithIdempotentMethods("POST"), otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateUnknown}, nil
		})), base: reset,
			req: func(t *testing.T, ctx context.Context) *http.Request {
				r := postReq(t, ctx)
				r.GetBody = func() (io.ReadCloser, error) { return nil, errTheHookFailed }
				return r
			},
			want: errorWant{outcome: attrs.OutcomeCheckState, attempts: 1, is: []error{otelretry.ErrOutcomeUnknown, errTheHookFailed, syscall.ECONNRESET}}},
	}
}

func checkErrorValue(t *testing.T, err error, w errorWant) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error")
	}
	var oe *otelretry.Error
	if !errors.As(err, &oe) {
		t.Fatalf("errors.As *Error: false for %v", err)
	}
	if oe.Outcome != w.outcome {
		t.Errorf("Outcome %q, want %q (%v)", oe.Outcome, w.outcome, err)
	}
	if oe.Attempts != w.attempts {
		t.Errorf("Attempts %d, want %d (%v)", oe.Attempts, w.attempts, err)
	}
	for _, s := range w.is {
		if !errors.Is(err, s) {
			t.Errorf("errors.Is(err, %v) false: %v", s, err)
		}
	}
	for _, s := range w.isNot {
		if errors.Is(err, s) {
			t.Errorf("errors.Is(err, %v) true: %v", s, err)
		}
	}
	var ne net.Error
	if !errors.As(err, &ne) {
		t.Errorf("not a net.Error")
	} else if ne.Timeout() != w.timeout {
		t.Errorf("net.Error Timeout %v, want %v (%v)", ne.Timeout(), w.timeout, err)
	}
	if os.IsTimeout(err) != w.timeout {
		t.Errorf("os.IsTimeout %v, want %v", os.IsTimeout(err), w.timeout)
	}
	if oe.RetryableError() != w.retryable {
		t.Errorf("RetryableError %v, want %v (%v)", oe.RetryableError(), w.retryable, err)
	}
	msg := oe.Error()
	if strings.Contains(msg, "s3cret") || strings.Contains(msg, "pw@") {
		t.Errorf("secret in the *Error's message: %s", msg)
	}
	if !strings.Contains(msg, oe.OperationID) || !strings.Contains(msg, string(oe.Outcome)) {
		t.Errorf("message names neither id nor outcome: %s", msg)
	}
}

func TestTheErrorValuesACallerBranchesOn(t *testing.T) {
	for _, c := range errorCases() {
		for _, via := range []string{"RoundTrip", "Client.Do"} {
			t.Run(c.name+"/"+via, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := context.Background(), context.CancelFunc(func() {})
					if c.ctx != nil {
						ctx, cancel = c.ctx(ctx)
					}
					defer cancel()
					tr := otelretry.NewTransport(c.base, c.opts...)
					req := c.req(t, ctx)
					var resp *http.Response
					var err error
					if via == "RoundTrip" {
						resp, err = tr.RoundTrip(req)
					} else {
						resp, err = (&http.Client{Transport: tr}).Do(req)
					}
					if resp != nil {
						resp.Body.Close()
						t.Fatalf("response %d, want an error", resp.StatusCode)
					}
					checkErrorValue(t, err, c.want)
				})
			})
		}
	}
}
