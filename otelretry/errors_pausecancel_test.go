// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Error.Err is documented as "the last cause: the last attempt's transport
// error, or nil". When the caller cancels during the pause after a failed
// attempt, the operation ends canceled after 1 attempt, and Err should
// still be that attempt's transport error (as it is when the caller gives
// up during a state check, row 33, where Err keeps the attempt's error).
// It was the caller's context.Canceled alone: the reset that left the
// keyed POST unknown was unreachable.
func TestErrKeepsTheLastAttemptsErrorWhenCanceledInThePause(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
				opts := []otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Second))}
				if method == http.MethodPost {
					opts = append(opts, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))
				}
				h := newHarness(t, []scripted.Step{{Err: reset}}, opts...)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				time.AfterFunc(100*time.Millisecond, cancel) // inside the 1 s pause
				var res otelretry.Results
				req, _ := http.NewRequestWithContext(otelretry.WithResults(ctx, &res), method, "http://api.test/orders", strings.NewReader("x"))
				_, err := h.transprt.RoundTrip(req)
				var oe *otelretry.Error
				if !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeCanceled || oe.Attempts != 1 || len(h.base.Calls()) != 1 {
					t.Fatalf("err = %v after %d calls; want canceled after 1 attempt", err, len(h.base.Calls()))
				}
				var op *net.OpError
				if !errors.As(oe.Err, &op) {
					t.Errorf("Error.Err = %#v (%v); want the last attempt's transport error %v", oe.Err, oe.Err, reset)
				}
				if !errors.As(err, &op) {
					t.Errorf("errors.As(err, *net.OpError) = false; the last attempt's transport error is unreachable from %q", err)
				}
			})
		})
	}
}
