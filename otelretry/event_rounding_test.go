// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The attempt event's milliseconds are whole and rounded down, as
// docs/telemetry.md says: a deadline of 11.5 ms and three calls of just
// under a millisecond each give remaining_ms 11, 10, 9 (never above the
// deadline) and elapsed_ms 0, 0, 0 (never negative) (a reviewer's run).
func TestTheAttemptEventsMillisecondsAreRoundedDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		call := 999999 * time.Nanosecond
		h := newHarness(t, []scripted.Step{{Delay: call, Status: 503}, {Delay: call, Status: 503}, {Delay: call, Status: 200}},
			otelretry.WithDeadline(11500*time.Microsecond), otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
			otelretry.WithoutBudget())
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var remaining, elapsed []int64
		for _, s := range h.attempts() {
			remaining = append(remaining, attrOf(s, attrs.RemainingMsKey).AsInt64())
			elapsed = append(elapsed, attrOf(s, attrs.ElapsedMsKey).AsInt64())
		}
		if !slices.Equal(remaining, []int64{11, 10, 9}) || !slices.Equal(elapsed, []int64{0, 0, 0}) {
			t.Errorf("remaining_ms %v, elapsed_ms %v; want [11 10 9] and [0 0 0]", remaining, elapsed)
		}
	})
}
