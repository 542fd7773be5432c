// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"math/rand/v2"
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
			b, start := tableWithAHostAtTheFloor(1)
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
		b, start := tableWithAHostAtTheFloor(1)
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
			spentOne, _ := tableWithAHostAtTheFloor(1)
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

// Random loans, answers and settlements over a small table, in any order:
// after every step the table holds its invariants (checkBudget), and every
// host kept aside was forgotten for a host that still lends; once every
// loan settled, none is kept aside.
func TestDisplacedHostsStayConsistentUnderRandomSteps(t *testing.T) {
	hosts := []string{"a", "b", "c", "d", "e", "f"}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		b := &Budget{MaxHosts: 2, IdleEviction: time.Minute}
		now := time.Now()
		type open struct {
			key  string
			loan budgetLoan
		}
		var loans []open
		for range 60 {
			now = now.Add(time.Duration(rng.IntN(90)) * time.Second)
			key := hosts[rng.IntN(len(hosts))]
			switch rng.IntN(5) {
			case 0, 1:
				if loan, reason := b.hedge(key, now); reason == "" {
					loans = append(loans, open{key, loan})
				}
			case 2:
				b.record(key, now, obs503)
			case 3:
				b.record(key, now, obs200)
			case 4:
				if len(loans) > 0 {
					i := rng.IntN(len(loans))
					if rng.IntN(2) == 0 {
						b.giveBack(loans[i].key, loans[i].loan, now)
					} else {
						b.spent(loans[i].key, loans[i].loan, now)
					}
					loans = append(loans[:i], loans[i+1:]...)
				}
			}
			checkBudget(t, b)
			checkDisplaced(t, b)
		}
		for _, l := range loans {
			b.giveBack(l.key, l.loan, now)
		}
		checkBudget(t, b)
		if n := len(b.displaced); n != 0 {
			t.Fatalf("seed %d: %d hosts kept aside after every loan settled", seed, n)
		}
	}
}

// checkDisplaced asserts that each host kept aside was forgotten for a
// host that is kept and still lends, and is not in the table itself.
func checkDisplaced(t *testing.T, b *Budget) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for host, d := range b.displaced {
		if e, kept := b.hosts[host]; !kept || len(e.loans.open) == 0 {
			t.Fatalf("%q kept aside for %q, which is kept %t with %d loans", d.key, host, kept, len(e.loans.open))
		}
		if _, back := b.hosts[d.key]; back {
			t.Fatalf("%q is both kept aside and in the table", d.key)
		}
	}
}

// A host kept aside that answers comes back as any forgotten host does,
// from a fresh host's state (docs/budget.md: "A forgotten host that comes
// back starts as a fresh host"): its three successes while aside are not
// lost to a restore of its state at the floor when the loan it was
// forgotten for is given back.
func TestAHostThatAnswersWhileAsideIsNotRestoredStale(t *testing.T) {
	b, start := tableWithAHostAtTheFloor(1)
	now := start.Add(2 * time.Minute)
	loan, reason := b.hedge("x", now) // forgets a, kept aside
	if reason != "" {
		t.Fatalf("x's hedge refused: %s", reason)
	}
	for range 3 {
		b.record("a", now, obs200)
	}
	b.giveBack("x", loan, now)
	checkBudget(t, b)
	if n := len(b.displaced); n != 0 {
		t.Errorf("%d hosts kept aside after the loan settled", n)
	}
	if n := b.Available(budgetRequest("a")); n != 2 {
		t.Errorf("Available(a) = %d, want 2: back as a fresh host, not restored at the floor", n)
	}
}

// A host kept aside that takes a hedge of its own came back, as one that
// answers does: from a fresh host's state, as any forgotten host
// (docs/budget.md), and what was kept aside of it is dropped, whatever
// becomes of the hedge.
func TestAHostThatLendsWhileAsideComesBackFresh(t *testing.T) {
	b, start := tableWithAHostAtTheFloor(2)
	b.record("c", start.Add(time.Second), obs503)
	now := start.Add(2 * time.Minute)
	xLoan, reason := b.hedge("x", now) // a, the idlest, is kept aside
	if reason != "" {
		t.Fatalf("x's hedge refused: %s", reason)
	}
	for range 2 {
		b.record("c", now, obs200) // c recovers and is dropped: room again
	}
	aLoan, reason := b.hedge("a", now)
	if reason != "" {
		t.Fatalf("a's hedge refused (%s): a forgotten host comes back fresh", reason)
	}
	checkDisplaced(t, b)
	b.giveBack("a", aLoan, now)
	b.giveBack("x", xLoan, now)
	checkBudget(t, b)
	if n := len(b.displaced); n != 0 {
		t.Errorf("%d hosts kept aside after every loan settled", n)
	}
	if n := b.Available(budgetRequest("a")); n != 2 {
		t.Errorf("Available(a) = %d, want 2: a came back fresh, not restored", n)
	}
}

// tableWithAHostAtTheFloor is a Budget of maxHosts places forgetting a
// host idle a minute, holding "a" at the floor after an outage; and when
// that outage was.
func tableWithAHostAtTheFloor(maxHosts int) (*Budget, time.Time) {
	b := &Budget{MaxHosts: maxHosts, IdleEviction: time.Minute}
	start := time.Now()
	for range 3 {
		b.record("a", start, obs503)
	}
	return b, start
}
