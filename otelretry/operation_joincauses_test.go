// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A keyed write answered 409 (its key in progress: no transport error)
// whose resend's PrepareAttemptFunc fails has one cause, the hook's (the
// 409 is no error): the
// CHANGELOG says Error.Err "is the hook's own error again, and a join
// only where two causes are".
func TestALoneCauseIsErrItselfAfterA409(t *testing.T) {
	for _, withCheck := range []bool{false, true} {
		name := "no state check"
		if withCheck {
			name = "state check unknown"
		}
		t.Run(name, func(t *testing.T) {
			var sent atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent.Add(1)
				if r.Body != nil {
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
				}
				return &http.Response{StatusCode: http.StatusConflict, Header: http.Header{}, Request: r,
					Body: io.NopCloser(strings.NewReader("in progress"))}, nil
			})
			hookErr := errors.New("prepare failed")
			opts := []otelretry.Option{
				otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
				otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
				otelretry.WithoutBudget(),
				otelretry.WithPrepareAttempt(func(r *http.Request, n int) error {
					if n >= 2 {
						return hookErr
					}
					return nil
				}),
			}
			if withCheck {
				opts = append(opts, otelretry.WithStateCheck(func(ctx context.Context, sc otelretry.StateCheck) (otelretry.StateResult, error) {
					return otelretry.StateResult{State: attrs.StateUnknown}, nil
				}))
			}
			tr := otelretry.NewTransport(base, opts...)
			resp, err := tr.RoundTrip(post(t, t.Context(), "http://api.test/orders", `{"sku":"A1"}`))
			if resp != nil {
				resp.Body.Close()
				t.Fatalf("answered %d after %d sends", resp.StatusCode, sent.Load())
			}
			var oe *otelretry.Error
			if !errors.As(err, &oe) {
				t.Fatalf("err %v", err)
			}
			t.Logf("err %v (%s/%s, %d attempts, %d sends); Err %T", err, oe.Outcome, oe.Reason, oe.Attempts, sent.Load(), oe.Err)
			if !errors.Is(oe.Err, hookErr) {
				t.Errorf("Error.Err %v does not hold the hook's error", oe.Err)
			}
			if j, ok := oe.Err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) == 1 {
				t.Errorf("Error.Err is a one-element join (%T) of %T; want the hook's error itself, as where it fails on the first attempt (a join only where two causes are)", oe.Err, j.Unwrap()[0])
			}
		})
	}
}
