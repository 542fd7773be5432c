// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Each state_check span says which attempt's outcome it checked, as the
// hook is told (StateCheck.Attempt), in retry.state_check.attempt, never
// in retry.attempt, which marks attempt spans: two cut writes of one
// operation, each checked and found not applied, then a 201, give two
// state_check spans carrying 1 and 2, and a check whose hook panicked
// carries its number the same way (a reviewer's find: the number was
// written only when the hook panicked, and as retry.attempt, so a reader
// took that check for an attempt and a trace of several checks could not
// tell them apart).
func TestEachStateCheckSpanCarriesTheAttemptItChecked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var told []int
		h := newHarness(t, []scripted.Step{{Hang: true}, {Hang: true}, {Status: 201}},
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(10*time.Second),
			otelretry.WithMaxAttempts(3), otelretry.WithoutBudget(),
			otelretry.WithStateCheck(func(_ context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
				told = append(told, c.Attempt)
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		resp, err := h.client.Do(postReq(t, t.Context()))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var spans []int
		for _, s := range h.ended() {
			if s.Name() != attrs.StateCheckSpanName {
				continue
			}
			v, ok := spantest.Attr(s, attrs.StateCheckAttemptKey)
			if !ok {
				t.Errorf("a state_check span without %s", attrs.StateCheckAttemptKey)
				continue
			}
			spans = append(spans, int(v.AsInt64()))
		}
		if !slices.Equal(told, []int{1, 2}) || !slices.Equal(spans, told) {
			t.Errorf("the hook was told attempts %v, the state_check spans carry %v; want [1 2] both", told, spans)
		}
	})
}

func TestAPanickedStateCheckCarriesItsAttemptAsTheOthersDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Hang: true}},
			otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(10*time.Second),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				panic("lookup exploded")
			}))
		func() {
			defer func() { recover() }()
			h.client.Do(postReq(t, t.Context()))
		}()
		checks := spantest.Named(h.ended(), attrs.StateCheckSpanName)
		if len(checks) != 1 {
			t.Fatalf("%d state_check spans, want 1", len(checks))
		}
		if v, ok := spantest.Attr(checks[0], attrs.StateCheckAttemptKey); !ok || v.AsInt64() != 1 {
			t.Errorf("%s = %v (set %v), want 1", attrs.StateCheckAttemptKey, v.Emit(), ok)
		}
		if _, ok := spantest.Attr(checks[0], attrs.AttemptKey); ok {
			t.Errorf("the panicked state_check span carries %s, which marks attempt spans", attrs.AttemptKey)
		}
		if n := len(h.attempts()); n != 1 {
			t.Errorf("%d spans read as attempts, want 1 (the write's)", n)
		}
	})
}
