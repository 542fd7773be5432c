// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// An *Error is a net.Error whose Timeout says how the operation ended, by
// its outcome, through http.Client as from the Transport itself, as
// net.Error users (os.IsTimeout, client-go's IsTimeout) read it:
// deadline_exceeded is a timeout; max_attempts and budget_exhausted are
// when their last attempt timed out; an unknown write never is (a
// retryer above that resends every timeout must not resend it; errors.Is
// still tells it), nor is canceled, stop or any other end, whatever an
// earlier attempt came to. (A client-side throttle that refuses the first
// call, which the overload issue adds, gets its row here.)
func TestErrorTimeout(t *testing.T) {
	readTimedOut := []scripted.Step{{Hang: true}}
	cases := []struct {
		name        string
		steps       []scripted.Step
		method      string
		opts        []otelretry.Option
		ctx         func(context.Context) (context.Context, context.CancelFunc)
		wantOutcome attrs.Outcome
		wantReason  attrs.Reason // "": any
		wantTimeout bool
		wantUnknown bool
	}{
		{name: "reads that timed out to the attempt limit", steps: readTimedOut, method: http.MethodGet,
			wantOutcome: attrs.OutcomeMaxAttempts, wantTimeout: true},
		{name: "a read at the caller's deadline", steps: readTimedOut, method: http.MethodGet, ctx: callerDeadline(150 * time.Millisecond),
			wantOutcome: attrs.OutcomeDeadlineExceeded, wantTimeout: true},
		{name: "reads that timed out to the operation's deadline", steps: readTimedOut, method: http.MethodGet,
			ctx: intent(otelretry.Intent{Deadline: 120 * time.Millisecond, MaxAttempts: 10}), wantOutcome: attrs.OutcomeDeadlineExceeded, wantTimeout: true},
		{name: "a read refused a retry by the budget after it timed out", steps: readTimedOut, method: http.MethodGet,
			opts:        []otelretry.Option{otelretry.WithBudget(&otelretry.Budget{Tokens: 2})},
			wantOutcome: attrs.OutcomeBudgetExhausted, wantTimeout: true},
		{name: "reads whose last attempt failed otherwise after one timed out",
			steps: []scripted.Step{{Hang: true}, {Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}}, method: http.MethodGet,
			opts: []otelretry.Option{otelretry.WithMaxAttempts(2)}, wantOutcome: attrs.OutcomeMaxAttempts, wantTimeout: false},
		{name: "a read canceled by its caller in the pause after it timed out", steps: readTimedOut, method: http.MethodGet,
			opts: []otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(500 * time.Millisecond))}, ctx: callerCancel(100 * time.Millisecond),
			wantOutcome: attrs.OutcomeCanceled, wantTimeout: false},
		{name: "a read canceled by its caller in flight", steps: readTimedOut, method: http.MethodGet, ctx: callerCancel(20 * time.Millisecond),
			wantOutcome: attrs.OutcomeCanceled, wantTimeout: false},
		{name: "a read whose PrepareAttemptFunc failed after it timed out", steps: readTimedOut, method: http.MethodGet,
			opts: []otelretry.Option{otelretry.WithPrepareAttempt(func(_ *http.Request, n int) error {
				if n > 1 {
					return errors.New("token refresh failed")
				}
				return nil
			})},
			wantOutcome: attrs.OutcomeStop, wantReason: attrs.ReasonPrepareFailed, wantTimeout: false},
		{name: "a read stopped by its intent after it timed out", steps: readTimedOut, method: http.MethodGet,
			ctx: intent(otelretry.Intent{NoRetry: true}), wantOutcome: attrs.OutcomeStop, wantReason: attrs.ReasonIntent, wantTimeout: false},
		{name: "a write whose outcome is unknown", steps: []scripted.Step{{Delay: 10 * time.Millisecond, Err: errBaseTimeout}}, method: http.MethodPost,
			wantOutcome: attrs.OutcomeCheckState, wantTimeout: false, wantUnknown: true},
		{name: "a write in flight at the caller's deadline", steps: readTimedOut, method: http.MethodPost, ctx: callerDeadline(150 * time.Millisecond),
			wantOutcome: attrs.OutcomeDeadlineExceeded, wantTimeout: false, wantUnknown: true},
		{name: "dials that failed to the attempt limit", steps: []scripted.Step{{Err: &net.OpError{Op: "dial", Err: os.ErrNotExist}}}, method: http.MethodPost,
			wantOutcome: attrs.OutcomeMaxAttempts, wantTimeout: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := append([]otelretry.Option{otelretry.WithAttemptTimeout(50 * time.Millisecond), otelretry.WithDeadline(time.Second),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget()}, tc.opts...)
				h := newHarness(t, tc.steps, opts...)
				ctx := t.Context()
				if tc.ctx != nil {
					var cancel context.CancelFunc
					ctx, cancel = tc.ctx(ctx)
					defer cancel()
				}
				req, _ := http.NewRequestWithContext(ctx, tc.method, "http://api.test/orders", nil)
				_, err := h.client.Do(req)
				var oe *otelretry.Error
				if !errors.As(err, &oe) || oe.Outcome != tc.wantOutcome || (tc.wantReason != "" && oe.Reason != tc.wantReason) {
					t.Fatalf("err = %v; want outcome %s %s", err, tc.wantOutcome, tc.wantReason)
				}
				var netErr net.Error
				if !errors.As(err, &netErr) || netErr.Timeout() != tc.wantTimeout {
					t.Errorf("net.Error Timeout() = %v, want %v", netErr != nil && netErr.Timeout(), tc.wantTimeout)
				}
				if os.IsTimeout(err) != tc.wantTimeout {
					t.Errorf("os.IsTimeout = %v, want %v", os.IsTimeout(err), tc.wantTimeout)
				}
				if oe.Timeout() != tc.wantTimeout || oe.Temporary() != tc.wantTimeout {
					t.Errorf("(*Error).Timeout() = %v, Temporary() = %v, want %v", oe.Timeout(), oe.Temporary(), tc.wantTimeout)
				}
				if want := tc.wantOutcome == attrs.OutcomeMaxAttempts && !tc.wantUnknown; oe.RetryableError() != want {
					t.Errorf("RetryableError() = %v, want %v", oe.RetryableError(), want)
				}
				if errors.Is(err, otelretry.ErrOutcomeUnknown) != tc.wantUnknown {
					t.Errorf("ErrOutcomeUnknown = %v, want %v", errors.Is(err, otelretry.ErrOutcomeUnknown), tc.wantUnknown)
				}
			})
		})
	}
}

// callerDeadline gives the caller's context a deadline d from now.
func callerDeadline(d time.Duration) func(context.Context) (context.Context, context.CancelFunc) {
	return func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, d) }
}

// callerCancel cancels the caller's context d from now.
func callerCancel(d time.Duration) func(context.Context) (context.Context, context.CancelFunc) {
	return func(ctx context.Context) (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(ctx)
		timer := time.AfterFunc(d, cancel)
		return ctx, func() { timer.Stop(); cancel() }
	}
}

// intent gives the caller's context in.
func intent(in otelretry.Intent) func(context.Context) (context.Context, context.CancelFunc) {
	return func(ctx context.Context) (context.Context, context.CancelFunc) {
		return otelretry.WithIntent(ctx, in), func() {}
	}
}

// Error.Attempts counts the calls made: 0 only when none was, because the
// caller or the deadline ended the operation first or the first attempt's
// preparation failed. The retry budget never holds back a first call: a
// host whose tokens earlier failures spent still gets it. (A client-side
// throttle that refuses the first call, which the overload issue adds,
// gets its row here.)
func TestErrorAttemptsCountsTheCallsMade(t *testing.T) {
	canceled := func(ctx context.Context) (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return ctx, cancel
	}
	failPrepare := otelretry.WithPrepareAttempt(func(*http.Request, int) error { return errors.New("signer unavailable") })
	retarget := otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error { r.Method = http.MethodDelete; return nil })
	cases := []struct {
		name         string
		opts         []otelretry.Option
		ctx          func(context.Context) (context.Context, context.CancelFunc)
		spend        int // failed operations made first, spending the host's budget
		wantOutcome  attrs.Outcome
		wantAttempts int
	}{
		{name: "the caller canceled first", ctx: canceled, wantOutcome: attrs.OutcomeCanceled},
		{name: "the caller's deadline passed first", ctx: callerDeadline(-time.Millisecond), wantOutcome: attrs.OutcomeDeadlineExceeded},
		{name: "the PrepareAttemptFunc failed", opts: []otelretry.Option{failPrepare}, wantOutcome: attrs.OutcomeStop},
		{name: "the PrepareAttemptFunc changed the method", opts: []otelretry.Option{retarget}, wantOutcome: attrs.OutcomeStop},
		{name: "the budget is spent", opts: []otelretry.Option{otelretry.WithBudget(&otelretry.Budget{Tokens: 2})}, spend: 3,
			wantOutcome: attrs.OutcomeBudgetExhausted, wantAttempts: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{{Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}},
					append([]otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, tc.opts...)...)
				for range tc.spend {
					if _, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/orders")); err == nil {
						t.Fatal("an answer, want a failure")
					}
				}
				ctx := t.Context()
				if tc.ctx != nil {
					var cancel context.CancelFunc
					ctx, cancel = tc.ctx(ctx)
					defer cancel()
				}
				calls := len(h.base.Calls())
				resp, err := h.transprt.RoundTrip(get(t, ctx, "http://api.test/orders"))
				var oe *otelretry.Error
				if err == nil {
					resp.Body.Close()
					t.Fatalf("a %d response, want an error", resp.StatusCode)
				}
				made := len(h.base.Calls()) - calls
				if !errors.As(err, &oe) || oe.Outcome != tc.wantOutcome || oe.Attempts != tc.wantAttempts || made != tc.wantAttempts {
					t.Errorf("err = %v (%d calls made); want outcome %s after %d attempts", err, made, tc.wantOutcome, tc.wantAttempts)
				}
			})
		})
	}
}

// An unknown write's error says what otelretry did with it: a plain POST
// that timed out was not resent; one under an idempotency contract (a
// generated key, a declared method) was, on every attempt. Before, both
// said "not resent by otelretry", the keyed one after three sends.
func TestAnUnknownWritesErrorSaysWhetherOtelretryResentIt(t *testing.T) {
	for name, tc := range map[string]struct {
		method string
		opts   []otelretry.Option
		sends  int
		says   string
	}{
		"a plain POST":   {http.MethodPost, nil, 1, "not resent by otelretry"},
		"a keyed POST":   {http.MethodPost, []otelretry.Option{otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())}, 3, "resent by otelretry under its idempotency contract"},
		"a declared PUT": {http.MethodPut, []otelretry.Option{otelretry.WithIdempotentMethods(http.MethodPut)}, 3, "resent by otelretry under its idempotency contract"},
		// The first attempt refused at dial, proven never sent: the second,
		// the only one the server can have seen, was not resent.
		"a keyed POST refused, then sent once": {http.MethodPost, []otelretry.Option{otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())},
			2, "not resent by otelretry"},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				steps := []scripted.Step{{Hang: true}, {Hang: true}, {Hang: true}}
				if strings.Contains(name, "refused") {
					steps = []scripted.Step{{Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}, {Hang: true}}
					tc.opts = append(tc.opts, otelretry.WithMaxAttempts(2))
				}
				h := newHarness(t, steps, append([]otelretry.Option{
					otelretry.WithoutBudget(), otelretry.WithAttemptTimeout(50 * time.Millisecond),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, tc.opts...)...)
				req, _ := http.NewRequestWithContext(t.Context(), tc.method, "http://api.test/orders", strings.NewReader(`{"sku":"A1"}`))
				_, err := h.transprt.RoundTrip(req)
				var oe *otelretry.Error
				if !errors.As(err, &oe) || !errors.Is(err, otelretry.ErrOutcomeUnknown) || len(h.base.Calls()) != tc.sends {
					t.Fatalf("err = %v after %d sends; want the write's outcome unknown after %d", err, len(h.base.Calls()), tc.sends)
				}
				if !strings.Contains(err.Error(), "; outcome of the write unknown, "+tc.says) {
					t.Errorf("err = %q, want it to say %q", err, tc.says)
				}
			})
		})
	}
}

// The error of an attempt that got no answer names what ended it: the
// operation's deadline, the caller (its cancellation or its deadline), the
// attempt timeout, or the base (its own error, as it is). Each stays
// matchable by type: context.DeadlineExceeded for a deadline or a timeout,
// context.Canceled for the caller's cancellation, the base's error for
// the base. Before, a POST cut by the operation's 2s deadline said
// "attempt timed out", though the attempt timeout (10s) does not bound a
// written write's wait for its answer.
func TestAttemptErrorNamesWhatEndedIt(t *testing.T) {
	const byDeadline, byCaller, byTimeout = "the operation's deadline", "the caller", "the attempt timeout"
	names := []string{byDeadline, byCaller, byTimeout}
	cases := []struct {
		name         string
		method       string
		step         scripted.Step
		opts         []otelretry.Option
		cancelAt     time.Duration // the caller cancels then; 0: never
		callerLimit  time.Duration // the caller's deadline; 0: none
		wantName     string        // "": none of the names (the base)
		wantMatching error
	}{
		{"a POST waiting for its answer, at the operation's deadline", http.MethodPost, scripted.Step{Hang: true},
			[]otelretry.Option{otelretry.WithDeadline(2 * time.Second), otelretry.WithAttemptTimeout(10 * time.Second)}, 0, 0, byDeadline, context.DeadlineExceeded},
		{"a GET with less time left than its attempt timeout", http.MethodGet, scripted.Step{Hang: true},
			[]otelretry.Option{otelretry.WithDeadline(150 * time.Millisecond), otelretry.WithAttemptTimeout(10 * time.Second)}, 0, 0, byDeadline, context.DeadlineExceeded},
		{"a GET cut by its attempt timeout", http.MethodGet, scripted.Step{Hang: true},
			[]otelretry.Option{otelretry.WithAttemptTimeout(100 * time.Millisecond), otelretry.WithMaxAttempts(1)}, 0, 0, byTimeout, context.DeadlineExceeded},
		{"a GET the caller canceled", http.MethodGet, scripted.Step{Hang: true}, nil, 50 * time.Millisecond, 0, byCaller, context.Canceled},
		{"a POST at the caller's deadline", http.MethodPost, scripted.Step{Hang: true}, nil, 0, 150 * time.Millisecond, byCaller, context.DeadlineExceeded},
		{"a GET at the caller's deadline", http.MethodGet, scripted.Step{Hang: true}, nil, 0, 150 * time.Millisecond, byCaller, context.DeadlineExceeded},
		{"a GET the base failed", http.MethodGet, scripted.Step{Delay: 10 * time.Millisecond, Err: errBaseTimeout},
			[]otelretry.Option{otelretry.WithMaxAttempts(1)}, 0, 0, "", errBaseTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, []scripted.Step{tc.step}, append([]otelretry.Option{otelretry.WithoutBudget()}, tc.opts...)...)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				if tc.callerLimit > 0 {
					ctx, cancel = context.WithTimeout(ctx, tc.callerLimit)
					defer cancel()
				}
				req, _ := http.NewRequestWithContext(ctx, tc.method, "http://api.test/orders", nil)
				_, err := h.transprt.RoundTrip(req)
				var oe *otelretry.Error
				if !errors.As(err, &oe) || oe.Err == nil {
					t.Fatalf("err = %v; want an *Error with its attempt's cause", err)
				}
				msg := oe.Err.Error()
				for _, name := range names {
					if strings.Contains(msg, name) != (name == tc.wantName) {
						t.Errorf("the attempt's error %q names %q: %v, want %v", msg, name, strings.Contains(msg, name), name == tc.wantName)
					}
				}
				if tc.wantName == "" && !strings.Contains(msg, errBaseTimeout.Error()) {
					t.Errorf("the attempt's error %q does not carry the base's %q", msg, errBaseTimeout)
				}
				if !errors.Is(err, tc.wantMatching) || !errors.Is(oe.Err, tc.wantMatching) {
					t.Errorf("err %v does not match %v", err, tc.wantMatching)
				}
			})
		})
	}
}

// The cause a caller gives its context (context.WithCancelCause,
// context.WithTimeoutCause) is what net/http's Transport returns when the
// context ends a request. Wrapped in otelretry, the error keeps it
// reachable with errors.Is on every path: a cancellation before the call
// and during an attempt, and a deadline with a cause, whichever of
// otelretry's timer and the context's fires first; its URLs sanitized.
func TestTheCallersContextCauseIsReachable(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	cause := &url.Error{Op: "Get", URL: "http://alice:SECRET@peer.test/x?token=SECRET", Err: errors.New("shutting down")}
	paths := map[string]func() (context.Context, context.CancelFunc){
		"canceled during the attempt": func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
			return ctx, func() { cancel(nil) }
		},
		"canceled before the call": func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(cause)
			return ctx, func() {}
		},
		"a deadline with a cause during the attempt": func() (context.Context, context.CancelFunc) {
			return context.WithTimeoutCause(context.Background(), 50*time.Millisecond, cause)
		},
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rt := otelretry.NewTransport(base)
	for name, mk := range paths {
		t.Run(name, func(t *testing.T) {
			for range 3 { // which timer fires first varies from run to run
				ctx, cancel := mk()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
				resp, err := rt.RoundTrip(req)
				cancel()
				if resp != nil {
					resp.Body.Close()
				}
				if !errors.Is(err, cause.Err) || !errors.Is(err, ctx.Err()) {
					t.Fatalf("err %v: want the caller's cause and %v", err, ctx.Err())
				}
				if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "alice") {
					t.Errorf("err %q repeats the cause's userinfo or query", err)
				}
			}
		})
	}
}

// An unknown write's error says what let otelretry resend it, and only
// when two copies may have reached the server: a resend of a copy proven
// unsent (refused at dial, in either order) or found not applied by a
// state check is none, and a key only recorded is no contract (otelretry
// never resends on it); a should-retry header's true is the service's
// word. Each of these read "resent by otelretry under its idempotency
// contract", or "not resent" where the service's word had resent it.
func TestAnUnknownWritesErrorSaysWhatLetItBeResent(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}
	notAppliedThenUnknown := func() otelretry.Option {
		checks := 0
		return otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
			if checks++; checks == 1 {
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}
			return otelretry.StateResult{State: attrs.StateUnknown}, nil
		})
	}
	keyed := otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())
	for name, tc := range map[string]struct {
		steps []scripted.Step
		opts  []otelretry.Option
		key   string // a key the caller set
		says  string
	}{
		"keyed, timed out, then refused at dial": {[]scripted.Step{{Hang: true}, {Err: refused}}, []otelretry.Option{keyed}, "", "not resent by otelretry"},
		"keyed, refused at dial, then timed out": {[]scripted.Step{{Err: refused}, {Hang: true}}, []otelretry.Option{keyed}, "", "not resent by otelretry"},
		"keyed, 503, then timed out":             {[]scripted.Step{{Status: 503}, {Hang: true}}, []otelretry.Option{keyed}, "", "resent by otelretry under its idempotency contract"},
		"a recorded key, found not applied, then unknown": {[]scripted.Step{{Err: reset}, {Err: reset}},
			[]otelretry.Option{notAppliedThenUnknown(), otelretry.WithRecordedIdempotencyKey()}, "k-1", "not resent by otelretry"},
		"a recorded key, resent on the service's word": {[]scripted.Step{{Status: 503, Header: http.Header{"X-Should-Retry": {"true"}}}, {Hang: true}},
			[]otelretry.Option{otelretry.WithShouldRetryWrites(), otelretry.WithRecordedIdempotencyKey()}, "k-1", "resent by otelretry on the service's word"},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tc.steps, append([]otelretry.Option{otelretry.WithoutBudget(), otelretry.WithMaxAttempts(2),
					otelretry.WithAttemptTimeout(50 * time.Millisecond), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, tc.opts...)...)
				req := postReq(t, t.Context())
				if tc.key != "" {
					req.Header.Set("Idempotency-Key", tc.key)
				}
				_, err := h.transprt.RoundTrip(req)
				if !errors.Is(err, otelretry.ErrOutcomeUnknown) || len(h.base.Calls()) != 2 || !strings.Contains(err.Error(), "; outcome of the write unknown, "+tc.says) {
					t.Errorf("err = %v after %d calls; want the outcome unknown after 2, saying %q", err, len(h.base.Calls()), tc.says)
				}
			})
		})
	}
}
