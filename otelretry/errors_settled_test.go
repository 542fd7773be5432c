// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestNotAppliedSettlesAnUnknownOutcomeFromBelow: an otelretry Transport with
// WithStateCheck over another otelretry Transport; the write's answer is
// lost after its body (the inner ends check_state, its error claims
// ErrOutcomeUnknown). The outer's state check (its lookup through the
// outer) says not_applied about that very write, and the operation then
// ends without a resend answered: the caller canceled during the check
// (row 33: "unknown unless not_applied"), or the budget refused the
// resend (row 36 then a limit: "A limit that stops the resend leaves the
// write not applied, which is known"). Results says the outcome is known;
// the returned *Error must not claim ErrOutcomeUnknown. Unstacked, the
// same runs agree (the control rows).
func TestNotAppliedSettlesAnUnknownOutcomeFromBelow(t *testing.T) {
	for _, stacked := range []bool{false, true} {
		for _, how := range []string{"caller cancels during the check", "budget refuses the resend"} {
			name := how
			if stacked {
				name = "stacked/" + how
			} else {
				name = "single/" + how
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var writes atomic.Int64
					base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
						if r.Method == http.MethodGet { // the lookup: nothing stored under the key
							return &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
						}
						io.Copy(io.Discard, r.Body)
						r.Body.Close()
						writes.Add(1)
						return nil, io.ErrUnexpectedEOF // sent, its answer lost
					})
					var below http.RoundTripper = base
					if stacked {
						below = otelretry.NewTransport(base, otelretry.WithoutBudget())
					}
					ctx, cancel := context.WithCancel(t.Context())
					defer cancel()
					var client *http.Client
					hook := func(hctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
						req, _ := http.NewRequestWithContext(hctx, http.MethodGet, "http://api.test/orders/by-key/"+c.OperationID, nil)
						resp, err := client.Do(req)
						if err != nil {
							return otelretry.StateResult{}, err
						}
						resp.Body.Close()
						if how == "caller cancels during the check" {
							cancel()
						}
						return otelretry.StateResult{State: attrs.StateNotApplied}, nil
					}
					outer := otelretry.NewTransport(below, otelretry.WithStateCheck(hook))
					client = &http.Client{Transport: outer}
					var res otelretry.Results
					resp, err := outer.RoundTrip(post(t, otelretry.WithResults(ctx, &res), "http://api.test/orders", "order"))
					if resp != nil {
						resp.Body.Close()
					}
					last, _ := res.Last()
					if last.OutcomeUnknown || err == nil {
						t.Fatalf("setup: Results %+v, err %v; want a known outcome and an error", last, err)
					}
					if errors.Is(err, otelretry.ErrOutcomeUnknown) {
						t.Errorf("outcome %s/%s after the state check said not_applied (%d writes): Results.OutcomeUnknown=false, but errors.Is(err, ErrOutcomeUnknown)=true\n  err: %v",
							last.Outcome, last.Reason, writes.Load(), err)
					}
				})
			})
		}
	}
}
