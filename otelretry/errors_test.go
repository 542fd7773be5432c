// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
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
