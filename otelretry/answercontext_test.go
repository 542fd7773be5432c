// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A call a Classifier or a Backoff makes with the context it was given
// (Answer.Request.Context(), as docs/layers.md names it) is bounded by
// the calling operation's deadline, as a PrepareAttemptFunc's token fetch
// and a state check's lookup are: WithDeadline is "the deadline of a
// whole operation". Here the operation's deadline is 1 s and the hook's
// lookup goes to a dependency that never answers; the clock is
// synctest's, so the figures are exact.
func TestAHooksCallWithAnswerRequestsContextEndsAtTheOperationsDeadline(t *testing.T) {
	const deadline = time.Second
	for _, hook := range []string{"Classifier", "Backoff"} {
		t.Run(hook, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				side := newHarness(t, []scripted.Step{{Hang: true}}) // the lookup's dependency hangs
				var sideEnded time.Time
				lookup := func(ctx context.Context) {
					resp, err := side.client.Do(get(t, ctx, "http://side.test/health"))
					if err == nil {
						resp.Body.Close()
					}
					sideEnded = time.Now()
				}
				opts := []otelretry.Option{otelretry.WithDeadline(deadline)}
				switch hook {
				case "Classifier":
					opts = append(opts, otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						lookup(a.Request.Context())
						return otelretry.Classification{}
					}))
				case "Backoff":
					opts = append(opts, otelretry.WithBackoff(otelretry.Backoff(func(_ int, a otelretry.Answer) time.Duration {
						lookup(a.Request.Context())
						return time.Millisecond
					})))
				}
				h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, opts...)
				start := time.Now()
				resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
				if err == nil {
					resp.Body.Close()
				}
				took := time.Since(start)
				if sideEnded.Sub(start) > deadline || took > deadline {
					t.Errorf("the hook's lookup ended %v and RoundTrip returned %v after the start, with WithDeadline(%v): "+
						"the operation outlived its deadline by its hook's call (%d lookup attempts sent)",
						sideEnded.Sub(start), took, deadline, len(side.base.Calls()))
				}
			})
		})
	}
}

// An attempt cut by its timeout ends its own context before the hooks
// judge it: a Classifier's call made with Answer.Request's context is
// still sent, and its Results blame no caller that never canceled.
func TestAClassifiersCallAfterAnAttemptTimeoutIsSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		side := newHarness(t, []scripted.Step{{Status: 200}})
		var sideErr error
		classify := otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			resp, err := side.client.Do(get(t, a.Request.Context(), "http://side.test/health"))
			if err == nil {
				resp.Body.Close()
			}
			sideErr = err
			return otelretry.Classification{}
		})
		h := newHarness(t, []scripted.Step{{Hang: true}, {Status: 200}},
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(time.Second), classify)
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if sideErr != nil || len(side.base.Calls()) != 2 {
			t.Errorf("the Classifier's lookups: %d sent for 2 answers judged, last error %v", len(side.base.Calls()), sideErr)
		}
	})
}

// The context a Classifier is shown ends at the operation's deadline with
// DeadlineExceeded, as a PrepareAttemptFunc's does, and a context derived
// from it ends once the hooks returned: a goroutine of the hook's that
// outlives it has no more time than the hook had.
func TestAClassifiersContextEndsAtTheDeadlineAndWithTheHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var atDeadline error
		var derived context.Context
		var cancelDerived context.CancelFunc
		var shownDeadline time.Duration
		start := time.Now()
		classify := otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			ctx := a.Request.Context()
			if a.Attempt == 1 {
				d, _ := ctx.Deadline()
				shownDeadline = d.Sub(start)
				<-ctx.Done()
				atDeadline = ctx.Err()
				return otelretry.Classification{}
			}
			return otelretry.Classification{}
		})
		h := newHarness(t, []scripted.Step{{Status: 503}}, otelretry.WithDeadline(time.Second), classify)
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
		if err == nil {
			resp.Body.Close()
		}
		if shownDeadline != time.Second || !errors.Is(atDeadline, context.DeadlineExceeded) {
			t.Errorf("the Classifier's context: deadline %v after the start, ended with %v; want 1s and DeadlineExceeded", shownDeadline, atDeadline)
		}

		h = newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
			derived, cancelDerived = context.WithTimeout(a.Request.Context(), time.Hour)
			return otelretry.Classification{}
		}))
		resp, err = h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		defer cancelDerived()
		select {
		case <-derived.Done():
		default:
			t.Error("a context derived from the Classifier's did not end once the hooks returned")
		}
	})
}
