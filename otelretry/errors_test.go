// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// An *Error is a net.Error whose Timeout says whether the operation ended
// for lack of time, through http.Client as from the Transport itself, as
// net.Error users (os.IsTimeout, client-go's IsTimeout) read it. A write
// whose outcome is unknown is never a timeout: a retryer above that
// resends every timeout must not resend it; errors.Is still tells it.
func TestErrorTimeout(t *testing.T) {
	cases := []struct {
		name        string
		steps       []scripted.Step
		method      string
		callerLimit time.Duration // 0: none
		wantOutcome attrs.Outcome
		wantTimeout bool
		wantUnknown bool
	}{
		{"reads that timed out to the attempt limit", []scripted.Step{{Hang: true}}, http.MethodGet, 0, attrs.OutcomeMaxAttempts, true, false},
		{"a read at the caller's deadline", []scripted.Step{{Hang: true}}, http.MethodGet, 150 * time.Millisecond, attrs.OutcomeDeadlineExceeded, true, false},
		{"reads that timed out to the operation's deadline", []scripted.Step{{Hang: true}}, http.MethodGet, 0, attrs.OutcomeDeadlineExceeded, true, false},
		{"a write whose outcome is unknown", []scripted.Step{{Delay: 10 * time.Millisecond, Err: errBaseTimeout}}, http.MethodPost, 0, attrs.OutcomeCheckState, false, true},
		{"a write in flight at the caller's deadline", []scripted.Step{{Hang: true}}, http.MethodPost, 150 * time.Millisecond, attrs.OutcomeDeadlineExceeded, false, true},
		{"dials that failed to the attempt limit", []scripted.Step{{Err: &net.OpError{Op: "dial", Err: os.ErrNotExist}}}, http.MethodPost, 0, attrs.OutcomeMaxAttempts, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tc.steps, otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithDeadline(time.Second),
					otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget())
				ctx := t.Context()
				if tc.wantOutcome == attrs.OutcomeDeadlineExceeded && tc.callerLimit == 0 {
					ctx = otelretry.WithIntent(ctx, otelretry.Intent{Deadline: 120 * time.Millisecond, MaxAttempts: 10})
				}
				if tc.callerLimit > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.callerLimit)
					defer cancel()
				}
				req, _ := http.NewRequestWithContext(ctx, tc.method, "http://api.test/orders", nil)
				_, err := h.client.Do(req)
				var oe *otelretry.Error
				if !errors.As(err, &oe) || oe.Outcome != tc.wantOutcome {
					t.Fatalf("err = %v; want outcome %s", err, tc.wantOutcome)
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
