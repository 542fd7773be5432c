// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestTheCallerIsReadAgainAfterTheBackoff: the Backoff is the last hook
// before the decision, and the caller may give up while it runs, as while
// a Classifier does. A 503 judged after the caller's deadline passed is
// deadline_exceeded (caller), and RoundTrip returns once that context is
// done (decisions.md row 14); after the caller canceled, canceled
// (caller) with the answer returned (row 13). After a slow Backoff, the
// caller was read as it was before the hook: its deadline was recorded as
// otelretry's own (reason deadline, RoundTrip returning before the
// caller's context was done), its cancel as a retry never made.
func TestTheCallerIsReadAgainAfterTheBackoff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stop   func(context.Context) (context.Context, context.CancelFunc)
		want   attrs.Outcome
		status int
	}{
		{"deadline", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 100*time.Millisecond)
		}, attrs.OutcomeDeadlineExceeded, 503},
		{"cancel", func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, attrs.OutcomeCanceled, 503},
	} {
		for _, hook := range []string{"classifier", "backoff"} {
			t.Run(tc.name+" during the "+hook, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					slow := func() { time.Sleep(150 * time.Millisecond) }
					opts := []otelretry.Option{otelretry.WithoutBudget(), otelretry.WithDeadline(5 * time.Second),
						otelretry.WithBackoff(func(int, otelretry.Answer) time.Duration {
							if hook == "backoff" {
								slow()
							}
							return 10 * time.Millisecond
						})}
					if hook == "classifier" {
						opts = append(opts, otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification { slow(); return otelretry.Classification{} }))
					}
					h := newHarness(t, []scripted.Step{{Delay: 10 * time.Millisecond, Status: 503}, {Status: 200}}, opts...)
					ctx, cancel := tc.stop(t.Context())
					defer cancel()
					var results otelretry.Results
					resp, err := h.transprt.RoundTrip(get(t, otelretry.WithResults(ctx, &results), "http://api.test/"))
					status := 0
					if resp != nil {
						status = resp.StatusCode
						resp.Body.Close()
					}
					if ctx.Err() == nil {
						t.Errorf("RoundTrip returned before the caller's context was done")
					}
					last, _ := results.Last()
					if last.Outcome != tc.want || last.Reason != attrs.ReasonCaller || status != tc.status {
						t.Errorf("ended %s (%s) with status %d, err %v; want %s (caller), status %d", last.Outcome, last.Reason, status, err, tc.want, tc.status)
					}
					if e := h.events(t); len(e) != 1 || e[0].Decision != string(tc.want) {
						t.Errorf("attempts recorded %+v; want one, decided %s", e, tc.want)
					}
				})
			})
		}
	}
}

// A Backoff that returns at the instant of the caller's deadline (its own
// timer and the context's due together, fired in either order): RoundTrip
// returns only once the caller's context is done (in 13 of 200 runs it
// returned before).
func TestABackoffEndingAtTheCallersDeadlineReturnsOnceItIsDone(t *testing.T) {
	early := 0
	for range 200 {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Delay: 10 * time.Millisecond, Status: 503}, {Status: 200}}, otelretry.WithoutBudget(),
				otelretry.WithBackoff(func(int, otelretry.Answer) time.Duration {
					time.Sleep(90 * time.Millisecond)
					return 5 * time.Millisecond
				}))
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			resp, _ := h.transprt.RoundTrip(get(t, ctx, "http://api.test/"))
			if ctx.Err() == nil {
				early++
			}
			if resp != nil {
				resp.Body.Close()
			}
		})
	}
	if early > 0 {
		t.Errorf("RoundTrip returned %d times in 200 before the caller's context was done", early)
	}
}
