// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package baselines

import "testing"

// The comparison budgets follow their published descriptions.

// gRPC's own test of its throttle (retry_throttle_test.cc, "Basic"): max 4,
// ratio 1.6.
func TestGRPCThrottleMatchesGRPCsTest(t *testing.T) {
	g := &grpcThrottle{max: 4, ratio: 1.6, token: 4}
	var op opBudget
	steps := []struct {
		fail, want bool
	}{
		{true, true},   // 3 > 2
		{false, false}, // success: 4, capped
		{true, true},   // 3
		{true, false},  // 2: at the threshold, no retry
		{false, false}, // 3.6
		{true, true},   // 2.6
	}
	for i, s := range steps {
		if !s.fail {
			g.succeeded(&op, 1)
			continue
		}
		if got := g.failed(&op, false, true); got != s.want {
			t.Fatalf("step %d: retry allowed = %v, want %v (tokens %.1f)", i, got, s.want, g.token)
		}
	}
}

func TestGRPCThrottleDefaults(t *testing.T) {
	g := newGRPCThrottle()
	var op opBudget
	retries := 0
	for range 100 {
		if g.failed(&op, false, true) {
			retries++
		}
	}
	if retries != 4 || g.token != 0 {
		t.Fatalf("maxTokens 10: %d retries in an outage, tokens %v; want 4 and 0", retries, g.token)
	}
	// From 0, a failure is retried again once it leaves more than 5: 61
	// successes (6.1 tokens), not 60.
	for _, c := range []struct {
		successes int
		want      bool
	}{{60, false}, {61, true}} {
		g := newGRPCThrottle()
		g.token = 0
		for range c.successes {
			g.succeeded(&op, 1)
		}
		if got := g.failed(&op, false, true); got != c.want {
			t.Fatalf("after %d successes: retry allowed = %v, want %v", c.successes, got, c.want)
		}
	}
}

func TestAWSQuota(t *testing.T) {
	a := newAWSQuota()
	var op opBudget
	retries := 0
	for range 1000 {
		if a.failed(&op, false, true) {
			retries++
		}
	}
	if retries != 100 || a.tokens != 0 {
		t.Fatalf("500 tokens at 5: %d retries, %d tokens left; want 100 and 0", retries, a.tokens)
	}
	a.succeeded(&op, 1)
	if a.tokens != 1 {
		t.Fatalf("a success without retry gives back %d, want 1", a.tokens)
	}
	a.tokens = 20
	a.start(&op)
	if !a.failed(&op, true, true) || a.tokens != 10 {
		t.Fatalf("a timeout's retry: tokens %d, want 10 (cost 10)", a.tokens)
	}
	a.succeeded(&op, 2)
	if a.tokens != 20 {
		t.Fatalf("a retry that succeeded gives back its cost: tokens %d, want 20", a.tokens)
	}
	if a.failed(&op, false, false) || a.tokens != 20 {
		t.Fatal("a failure with no retry wanted must cost nothing")
	}
}

func TestWindowedBudgetFloor(t *testing.T) {
	w := newWindowedBudget()
	var op opBudget
	w.start(&op)
	retries := 0
	for range 100 {
		if w.failed(&op, false, true) {
			retries++
		}
	}
	if retries != 10 {
		t.Fatalf("the v0.1 floor: %d retries in a window, want 10", retries)
	}
	w.succeeded(&op, 2) // a refunded retry frees its place
	if !w.failed(&op, false, true) || w.failed(&op, false, true) {
		t.Fatal("want exactly one retry after one refund")
	}
}
