// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"fmt"
	"testing"
	"time"
)

// A draw of 0 is a draw in [0, 1) like any other: with a rejection
// probability of 0 (a fresh dependency, or one that accepts everything),
// the throttle admits it.
func TestThrottleNeverRefusesAtARejectionOfZeroWhateverTheDraw(t *testing.T) {
	th := &Throttle{rand: func() float64 { return 0 }}
	now := time.Unix(1_000_000, 0)
	if !th.admit("fresh.test", now) {
		t.Fatal("a fresh dependency refused on a draw of 0")
	}
	for range 10 {
		th.record("ok.test", now, true)
	}
	if !th.admit("ok.test", now) {
		t.Error("a dependency that accepted all 10 of its requests refused on a draw of 0")
	}
}

// A full table forgets its least recently used dependency only once that
// one was idle for a whole window: idle for less (here a second short of
// it), a new dependency is admitted, not counted (fail open).
func TestThrottleTableKeepsADependencyIdleForLessThanAWindow(t *testing.T) {
	th := &Throttle{Window: time.Minute}
	now := time.Unix(1_000_000, 0)
	for i := range defaultBudgetMaxHosts {
		th.record(fmt.Sprint("dep-", i), now, false)
	}
	later := now.Add(time.Minute - time.Second)
	if !th.admit("new.test", later) {
		t.Error("a new dependency in a full table was refused, want admitted (fail open)")
	}
	if _, ok := th.deps["new.test"]; ok {
		t.Error("a dependency idle for less than a window was forgotten to make room")
	}
	if _, ok := th.deps["dep-0"]; !ok {
		t.Error("dep-0, idle for 59s of a 1m window, is forgotten")
	}
}
