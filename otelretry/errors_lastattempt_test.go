// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Error.Err's doc: "Where something else stopped what followed it (GetBody
// failing on the resend, the body's buffering), both are joined". A GET
// whose first attempt was reset and whose resend's GetBody fails must keep
// the reset in Err.
func TestGetBodyFailingOnResendKeepsTheLastAttemptsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
		getBodyErr := errors.New("getbody: source gone")
		h := newHarness(t, []scripted.Step{{Err: reset}, {Status: 200}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/orders/1", strings.NewReader("x"))
		req.GetBody = func() (io.ReadCloser, error) { return nil, getBodyErr }
		_, err := h.transprt.RoundTrip(req)
		var oe *otelretry.Error
		if !errors.As(err, &oe) {
			t.Fatalf("err = %v; want an *otelretry.Error", err)
		}
		t.Logf("calls=%d err=%v", len(h.base.Calls()), err)
		if len(h.base.Calls()) != 1 || oe.Attempts != 1 {
			t.Fatalf("calls = %d, Attempts = %d; want 1 (the resend was not prepared)", len(h.base.Calls()), oe.Attempts)
		}
		var op *net.OpError
		if !errors.As(oe.Err, &op) {
			t.Errorf("Error.Err = %q; want the last attempt's transport error %v joined with GetBody's", oe.Err, reset)
		}
		if !errors.Is(err, getBodyErr) {
			t.Errorf("errors.Is(err, getBodyErr) = false: %v", err)
		}
	})
}

// The same when the PrepareAttemptFunc fails on the retry: the operation
// ends after 1 attempt whose transport error Err is documented to hold.
func TestPrepareFailingOnRetryKeepsTheLastAttemptsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
		prepErr := errors.New("signer unavailable")
		h := newHarness(t, []scripted.Step{{Err: reset}, {Status: 200}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
				if n > 1 {
					return prepErr
				}
				return nil
			}))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/orders", nil)
		_, err := h.transprt.RoundTrip(req)
		var oe *otelretry.Error
		if !errors.As(err, &oe) {
			t.Fatalf("err = %v; want an *otelretry.Error", err)
		}
		t.Logf("calls=%d err=%v", len(h.base.Calls()), err)
		var op *net.OpError
		if !errors.As(oe.Err, &op) {
			t.Errorf("Error.Err = %q; want the last attempt's transport error %v (joined with the hook's)", oe.Err, reset)
		}
	})
}

// cancelOnEnd cancels when a span of the given name ends.
type cancelOnEnd struct {
	sdktrace.SpanProcessor
	name   string
	cancel context.CancelFunc
}

func (c cancelOnEnd) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.Name() == c.name {
		c.cancel()
	}
}

// A write refused at dial (retried: not sent), then reset after it was
// sent (check_state): the state check finds it not applied and admits the
// resend, and the caller gives up before that resend's call. Err must be
// the last attempt's error (the reset), not attempt 1's refusal, which
// the retry before the check left in the operation's memory.
func TestStateCheckResendRefusedKeepsTheLastAttemptsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(cancelOnEnd{tracetest.NewSpanRecorder(), attrs.StateCheckSpanName, cancel}))
		base := scripted.New(scripted.Step{Err: refused}, scripted.Step{Err: reset}, scripted.Step{Status: 201})
		checks := 0
		tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithoutBudget(),
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithStateCheck(func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				checks++
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		var res otelretry.Results
		req, _ := http.NewRequestWithContext(otelretry.WithResults(ctx, &res), http.MethodPost, "http://api.test/orders", strings.NewReader("x"))
		_, err := tr.RoundTrip(req)
		var oe *otelretry.Error
		if !errors.As(err, &oe) {
			t.Fatalf("err = %v; want an *otelretry.Error", err)
		}
		t.Logf("calls=%d checks=%d err=%v", len(base.Calls()), checks, err)
		if len(base.Calls()) != 2 || checks != 1 || oe.Outcome != attrs.OutcomeCanceled {
			t.Fatalf("calls = %d, checks = %d, outcome %s; want 2 calls, 1 check, canceled before the resend", len(base.Calls()), checks, oe.Outcome)
		}
		if errors.Is(oe.Err, syscall.ECONNREFUSED) {
			t.Errorf("Error.Err = %q: attempt 1's refusal, not the last attempt's (2) reset", oe.Err)
		}
	})
}

// Held check: the pause-cancel path keeps no secret of the attempt's error.
func TestPauseCancelKeepsNoSecret(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const secretURL = "http://user:hunter2@api.test/orders?token=s3cr3t"
		leak := &urlErr{u: secretURL}
		h := newHarness(t, []scripted.Step{{Err: leak}}, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Second)))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		time.AfterFunc(100*time.Millisecond, cancel)
		var res otelretry.Results
		req, _ := http.NewRequestWithContext(otelretry.WithResults(ctx, &res), http.MethodGet, secretURL, nil)
		_, err := h.transprt.RoundTrip(req)
		t.Logf("err=%v", err)
		if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("err = %v", err)
		}
		for _, s := range h.ended() {
			if strings.Contains(s.Status().Description, "hunter2") || strings.Contains(s.Status().Description, "s3cr3t") {
				t.Errorf("span %s status %q", s.Name(), s.Status().Description)
			}
			for _, kv := range s.Attributes() {
				if v := kv.Value.Emit(); strings.Contains(v, "hunter2") || strings.Contains(v, "s3cr3t") {
					t.Errorf("span %s attr %s=%q", s.Name(), kv.Key, v)
				}
			}
			for _, e := range s.Events() {
				for _, kv := range e.Attributes {
					if v := kv.Value.Emit(); strings.Contains(v, "hunter2") || strings.Contains(v, "s3cr3t") {
						t.Errorf("span %s event %s attr %s=%q", s.Name(), e.Name, kv.Key, v)
					}
				}
			}
		}
		if rs := res.Operations(); len(rs) != 1 || rs[0].Outcome != attrs.OutcomeCanceled || rs[0].Attempts != 1 {
			t.Errorf("results = %+v", rs)
		}
	})
}

type urlErr struct{ u string }

func (e *urlErr) Error() string   { return "Get \"" + e.u + "\": read tcp: connection reset by peer" }
func (e *urlErr) Unwrap() error   { return syscall.ECONNRESET }
func (e *urlErr) Timeout() bool   { return false }
func (e *urlErr) Temporary() bool { return false }
