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
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

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
	}{
		{"no keys, one attempt (control)", false, false, []otelretry.Option{otelretry.WithMaxAttempts(1)}},
		{"no keys, body of unknown length (control)", false, true, nil},
		{"keys, one attempt", true, false, []otelretry.Option{otelretry.WithMaxAttempts(1)}},
		{"keys, body of unknown length", true, true, nil},
		// The limit stops the resend whatever the pause, which the deadline
		// checks first: the check needs none (decisions.md, footnote ²).
		{"keys, one attempt, a pause longer than the deadline", true, false,
			[]otelretry.Option{otelretry.WithMaxAttempts(1), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Hour))}},
		{"keys, body of unknown length, a pause longer than the deadline", true, true,
			[]otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Hour))}},
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
