// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The context a Classifier or a Backoff is shown ends once the hooks
// returned (answercontext.go: "ending ... once the hooks returned, as a
// PrepareAttemptFunc's does"), also when the hook only kept it, or derived
// it by a value, and nothing asked for its Done before the hooks returned:
// a goroutine the hook started that first reads it later has no more time
// than the hook had. The operation's deadline is an hour away, so only the
// end of the hooks can have ended it.
func TestAHooksContextFirstReadAfterTheHooksReturnedHasEnded(t *testing.T) {
	for _, hook := range []string{"Classifier", "Backoff"} {
		t.Run(hook, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				type key struct{}
				var kept []context.Context
				keep := func(ctx context.Context) {
					kept = append(kept, ctx, context.WithValue(ctx, key{}, 1)) // neither calls Done
				}
				opts := []otelretry.Option{otelretry.WithDeadline(time.Hour)}
				switch hook {
				case "Classifier":
					opts = append(opts, otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						keep(a.Request.Context())
						return otelretry.Classification{}
					}))
				case "Backoff":
					opts = append(opts, otelretry.WithBackoff(otelretry.Backoff(func(_ int, a otelretry.Answer) time.Duration {
						keep(a.Request.Context())
						return time.Millisecond
					})))
				}
				h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, opts...)
				resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if len(kept) == 0 {
					t.Fatalf("the %s was never called", hook)
				}
				for i, ctx := range kept {
					select {
					case <-ctx.Done():
					default:
						t.Errorf("context %d the %s kept, first read after RoundTrip returned: not ended (Err %v); "+
							"the hooks' context must end once they returned", i, hook, ctx.Err())
					}
					if ctx.Err() == nil {
						t.Errorf("context %d the %s kept: Err nil after the hooks returned", i, hook)
					}
				}
			})
		})
	}
}

// The hooks' context has a deadline (answercontext.go: "ending at the
// operation's deadline"): Deadline says so, as context.Context's contract
// asks of a context that has one (ok true), not only its instant.
func TestAClassifiersContextReportsItHasADeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ok, called bool
		var at time.Duration
		start := time.Now()
		h := newHarness(t, []scripted.Step{{Status: 200}}, otelretry.WithDeadline(time.Second),
			otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				var d time.Time
				d, ok = a.Request.Context().Deadline()
				at, called = d.Sub(start), true
				return otelretry.Classification{}
			}))
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if !called || !ok || at != time.Second {
			t.Errorf("the Classifier's context: Deadline() = %v after the start, ok %v (called %v); want 1s, true", at, ok, called)
		}
	})
}
