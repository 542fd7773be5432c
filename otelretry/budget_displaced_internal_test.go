// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
	"time"
)

// docs/budget.md: a host with state is forgotten only to make room for
// one that keeps it. A hedge's loan to a new host in a full table forgets
// the idlest host; when the loan is given back (the hedge refused by the
// rate or the throttle after its token, or not sent) and its host needs
// no place any more, the forgotten host gets its place back, its state
// and its idleness as they were. A loan spent, or a host that gained
// state meanwhile, keeps the place.
func TestAHostForgottenForALoanGivenBackGetsItsPlaceBack(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settle   func(b *Budget, loan budgetLoan, now time.Time)
		restored bool
	}{
		{"given back", func(b *Budget, loan budgetLoan, now time.Time) { b.giveBack("x", loan, now) }, true},
		{"spent", func(b *Budget, loan budgetLoan, now time.Time) { b.spent("x", loan, now) }, false},
		{"given back after its host failed", func(b *Budget, loan budgetLoan, now time.Time) {
			b.record("x", now, obs503)
			b.giveBack("x", loan, now)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Budget{MaxHosts: 1, IdleEviction: time.Minute}
			start := time.Now()
			for range 3 {
				b.record("a", start, obs503) // an outage: at the floor
			}
			if n := b.Available(budgetRequest("a")); n != 0 {
				t.Fatalf("Available(a) = %d after the outage, want 0", n)
			}
			now := start.Add(2 * time.Minute) // a is idle, the table full
			loan, reason := b.hedge("x", now)
			if reason != "" {
				t.Fatalf("x's hedge refused: %s", reason)
			}
			checkBudget(t, b)
			tc.settle(b, loan, now)
			checkBudget(t, b)
			b.mu.Lock()
			_, aKept := b.hosts["a"]
			_, xKept := b.hosts["x"]
			leftOver := len(b.displaced)
			b.mu.Unlock()
			if aKept != tc.restored || xKept == tc.restored {
				t.Errorf("a kept %t, x kept %t; want a %t, x %t", aKept, xKept, tc.restored, !tc.restored)
			}
			if leftOver != 0 {
				t.Errorf("%d displaced hosts left after the loan settled", leftOver)
			}
			if tc.restored {
				if n := b.Available(budgetRequest("a")); n != 0 {
					t.Errorf("Available(a) = %d after its place came back, want 0: still at the floor", n)
				}
				// Still the idlest, still idle: the next host needing a
				// place forgets it.
				if _, reason := b.hedge("y", now); reason != "" {
					t.Errorf("y's hedge refused (%s): a should be forgettable again", reason)
				}
				checkBudget(t, b)
			}
		})
	}
}

// Two hedges of one new host, the first of which made room, both not
// sent: once both are given back the new host needs no place, whatever
// order the loans come back in, and the forgotten host gets its place
// back. With one of them sent, the new host keeps the place.
func TestAHostForgottenForTwoLoansGetsItsPlaceBackInEitherOrder(t *testing.T) {
	for _, firstBack := range []int{0, 1} {
		b := &Budget{MaxHosts: 1, IdleEviction: time.Minute}
		start := time.Now()
		for range 3 {
			b.record("a", start, obs503) // at the floor
		}
		now := start.Add(2 * time.Minute)
		var loans [2]budgetLoan
		for i := range loans {
			loan, reason := b.hedge("x", now)
			if reason != "" {
				t.Fatalf("x's hedge %d refused: %s", i, reason)
			}
			loans[i] = loan
		}
		b.giveBack("x", loans[firstBack], now)
		b.giveBack("x", loans[1-firstBack], now)
		checkBudget(t, b)
		if firstBack == 1 {
			spentOne := &Budget{MaxHosts: 1, IdleEviction: time.Minute}
			for range 3 {
				spentOne.record("a", start, obs503)
			}
			l1, _ := spentOne.hedge("x", now)
			l2, _ := spentOne.hedge("x", now)
			spentOne.giveBack("x", l1, now)
			spentOne.spent("x", l2, now)
			checkBudget(t, spentOne)
			spentOne.mu.Lock()
			_, aBack := spentOne.hosts["a"]
			_, xKept := spentOne.hosts["x"]
			spentOne.mu.Unlock()
			if aBack || !xKept || len(spentOne.displaced) != 0 {
				t.Errorf("one hedge sent: a kept %t, x kept %t, %d displaced; want x kept in a's place", aBack, xKept, len(spentOne.displaced))
			}
		}
		b.mu.Lock()
		_, aKept := b.hosts["a"]
		_, xKept := b.hosts["x"]
		left := len(b.displaced)
		b.mu.Unlock()
		if !aKept || xKept || left != 0 {
			t.Errorf("loan %d given back first: a kept %t, x kept %t, %d displaced left; want a kept, x not, 0 left",
				firstBack+1, aKept, xKept, left)
		}
		if n := b.Available(budgetRequest("a")); n != 0 {
			t.Errorf("loan %d given back first: Available(a) = %d, want 0 (still at the floor)", firstBack+1, n)
		}
	}
}
