// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// Issue 25, item 15: the host table must not fill for good. Time is passed
// in: t0 plus an offset.

// failAt records a retryable failure for key at now and asks for a retry
// that starts then.
func failAt(b *Budget, key string, now time.Time) attrs.Reason {
	b.record(key, now, obs503)
	return b.retry(key, now, now, budgetObservation{})
}

// With MaxHosts 2, a day after two hosts failed once, a third
// host's 503 is retried, as a fresh host's.
func TestBudgetIdleHostMakesRoom(t *testing.T) {
	b := &Budget{MaxHosts: 2}
	t0 := time.Now()
	failAt(b, "a.test", t0)
	failAt(b, "b.test", t0.Add(time.Second))
	day := t0.Add(24 * time.Hour)
	if got := b.retry("c.test", day, day, budgetObservation{}); got != "" {
		t.Fatalf("a new host a day later, before any answer: admit = %q, want allowed", got)
	}
	for i, want := range []attrs.Reason{"", "", attrs.ReasonBudget} {
		if got := failAt(b, "c.test", day); got != want {
			t.Fatalf("c a day later, failure %d: admit = %q, want %q (a fresh host's)", i+1, got, want)
		}
	}
	// a was idle longest and is forgotten; b, idle as long but active
	// later, is kept.
	if _, kept := b.hosts["a.test"]; kept {
		t.Fatal("a, the host idle longest, is still kept")
	}
	if _, kept := b.hosts["b.test"]; !kept {
		t.Fatal("b was forgotten though a was idle longer")
	}
	checkBudget(t, b)
}

// If the kept hosts were active a minute ago, a new host is still refused.
func TestBudgetIdleActiveHostsKeepTheirPlace(t *testing.T) {
	b := &Budget{MaxHosts: 2}
	t0 := time.Now()
	failAt(b, "a.test", t0)
	failAt(b, "b.test", t0)
	// Both answer again a minute before the day ends: a succeeds, b fails.
	active := t0.Add(24*time.Hour - time.Minute)
	b.record("a.test", active, obs200)
	b.record("b.test", active, obs503)
	day := t0.Add(24 * time.Hour)
	if got := failAt(b, "c.test", day); got != attrs.ReasonHostLimit {
		t.Fatalf("c while every kept host was active a minute ago: admit = %q, want host_limit", got)
	}
	for _, k := range []string{"a.test", "b.test"} {
		if _, kept := b.hosts[k]; !kept {
			t.Fatalf("%s was forgotten though active a minute ago", k)
		}
	}
	// Only the longest idle is forgotten: b active, a idle.
	later := active.Add(time.Hour)
	b.record("b.test", later, obs503)
	if got := failAt(b, "c.test", later); got != "" {
		t.Fatalf("c with a idle an hour: admit = %q, want allowed", got)
	}
	if _, kept := b.hosts["b.test"]; !kept {
		t.Fatal("b, active, was forgotten")
	}
	if got := b.retry("b.test", later, later, budgetObservation{}); got != attrs.ReasonBudget {
		t.Fatalf("b kept its drained state: admit = %q, want budget", got)
	}
	checkBudget(t, b)
}

// The forgotten host comes back as a fresh host: that is the allowance a
// caller who controls hosts can earn, one fresh host's tokens per evicted
// slot per idle period. Without a new host needing its slot, a drained
// idle host stays drained however long it waits.
func TestBudgetIdleEvictedHostStartsFresh(t *testing.T) {
	b := &Budget{MaxHosts: 2}
	t0 := time.Now()
	for range 4 {
		failAt(b, "a.test", t0) // drained: 3 tokens
	}
	failAt(b, "b.test", t0)
	day := t0.Add(24 * time.Hour)
	if got := b.retry("a.test", day, day, budgetObservation{}); got != attrs.ReasonBudget {
		t.Fatalf("a a day later, nothing new in the table: admit = %q, want budget (nothing earned from time)", got)
	}
	failAt(b, "c.test", day) // forgets a, the idlest
	if _, kept := b.hosts["a.test"]; kept {
		t.Fatal("a still kept")
	}
	// a comes back: b is idle a day, c is active. b is forgotten, a starts
	// with a fresh host's tokens.
	for i, want := range []attrs.Reason{"", "", attrs.ReasonBudget} {
		if got := failAt(b, "a.test", day.Add(time.Second)); got != want {
			t.Fatalf("a back, failure %d: admit = %q, want %q (a fresh host's)", i+1, got, want)
		}
	}
	if _, kept := b.hosts["b.test"]; kept {
		t.Fatal("b still kept")
	}
	// Now a and c are both active: d is refused.
	if got := failAt(b, "d.test", day.Add(time.Minute)); got != attrs.ReasonHostLimit {
		t.Fatalf("d: admit = %q, want host_limit", got)
	}
	checkBudget(t, b)
}

// checkActivity asserts, with b.mu held, that the activity list links
// exactly the kept hosts, each once through its own node, from the idlest
// to the latest active, and that every other node is on the free chain
// with its key released.
func checkActivity(t *testing.T, b *Budget) {
	t.Helper()
	l := &b.activity
	if len(l.nodes) == 0 {
		if len(b.hosts) != 0 {
			t.Fatalf("%d hosts kept and no activity list", len(b.hosts))
		}
		return
	}
	seen := map[int]bool{}
	prev, linked := 0, 0
	for i := l.nodes[0].next; i != 0; i = l.nodes[i].next {
		n := l.nodes[i]
		if seen[i] || linked > len(l.nodes) {
			t.Fatalf("activity list loops at node %d", i)
		}
		seen[i] = true
		linked++
		if n.prev != prev {
			t.Fatalf("node %d: prev %d, want %d", i, n.prev, prev)
		}
		if prev != 0 && n.last < l.nodes[prev].last {
			t.Fatalf("node %d (%q) active at %s listed after %q active at %s", i, n.key, n.last, l.nodes[prev].key, l.nodes[prev].last)
		}
		if e, ok := b.hosts[n.key]; !ok || e.node != i {
			t.Fatalf("node %d lists %q: kept=%v, its node %d", i, n.key, ok, e.node)
		}
		prev = i
	}
	if l.nodes[0].prev != prev {
		t.Fatalf("head's prev %d, want the last node %d", l.nodes[0].prev, prev)
	}
	if linked != len(b.hosts) {
		t.Fatalf("%d nodes linked, %d hosts kept", linked, len(b.hosts))
	}
	free := 0
	for i := l.free; i != 0; i = l.nodes[i].next {
		if seen[i] || l.nodes[i].key != "" {
			t.Fatalf("free node %d is linked or keeps key %q", i, l.nodes[i].key)
		}
		seen[i] = true
		free++
	}
	if 1+linked+free != len(l.nodes) {
		t.Fatalf("%d nodes: %d linked, %d free, plus the head", len(l.nodes), linked, free)
	}
}

// The idle period is defaultBudgetIdleEviction, to the nanosecond: a host
// idle 1ns less keeps its place.
func TestBudgetIdleEvictionBoundary(t *testing.T) {
	for _, c := range []struct {
		idle time.Duration
		want attrs.Reason
	}{
		{defaultBudgetIdleEviction - time.Nanosecond, attrs.ReasonHostLimit},
		{defaultBudgetIdleEviction, ""},
	} {
		b := &Budget{MaxHosts: 1}
		t0 := time.Now()
		failAt(b, "a.test", t0)
		at := t0.Add(c.idle)
		if got := b.retry("b.test", at, at, budgetObservation{}); got != c.want {
			t.Fatalf("idle %s: admit for a new host = %q, want %q", c.idle, got, c.want)
		}
		if got := failAt(b, "b.test", at); got != c.want {
			t.Fatalf("idle %s: new host's failure, admit = %q, want %q", c.idle, got, c.want)
		}
		checkBudget(t, b)
	}
}

// IdleEviction tunes the period, from a minute up.
func TestBudgetIdleEvictionSetting(t *testing.T) {
	b := &Budget{MaxHosts: 1, IdleEviction: time.Hour}
	t0 := time.Now()
	failAt(b, "a.test", t0)
	if got := failAt(b, "b.test", t0.Add(59*time.Minute)); got != attrs.ReasonHostLimit {
		t.Fatalf("IdleEviction 1h, a idle 59m: admit = %q, want host_limit", got)
	}
	if got := failAt(b, "b.test", t0.Add(time.Hour)); got != "" {
		t.Fatalf("IdleEviction 1h, a idle 1h: admit = %q, want allowed", got)
	}
	if b := (&Budget{IdleEviction: time.Minute}); b.idleAfter() != time.Minute {
		t.Fatalf("IdleEviction 1m: idle period %s", b.idleAfter())
	}
}

// A host whose hint holds retries is not forgotten until its hold is
// drained from the wheel, which drops it anyway: with the shortest period,
// a host held for a minute from 500 ms is idle a minute at 60.5 s but
// listed for second 61.
func TestBudgetIdleEvictionSkipsHeldHosts(t *testing.T) {
	b := &Budget{MaxHosts: 1, IdleEviction: time.Minute}
	t0 := time.Now()
	b.retry("x.test", t0, t0, budgetObservation{}) // the clock's origin: offsets count from t0
	held := t0.Add(500 * time.Millisecond)
	b.record("a.test", held, budgetObservation{status: 500, pushback: time.Hour}) // held a minute
	at := held.Add(time.Minute)
	if got := failAt(b, "b.test", at); got != attrs.ReasonHostLimit {
		t.Fatalf("a listed in the wheel: admit = %q, want host_limit", got)
	}
	if _, kept := b.hosts["a.test"]; !kept {
		t.Fatal("a was forgotten while listed in the wheel")
	}
	checkBudget(t, b)
	at = t0.Add(61 * time.Second)
	if got := failAt(b, "b.test", at); got != "" {
		t.Fatalf("a's hold drained: admit = %q, want allowed", got)
	}
	checkBudget(t, b)
}

// Many goroutines, more hosts than the table holds, idle spells longer
// than the period: under -race the invariants hold, every refusal for
// host_limit happens while the idlest kept host was active within the
// period, and nothing is forgotten while the table has room.
func TestBudgetIdleEvictionConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const maxHosts, hostCount, workers, steps = 20, 60, 16, 1500
		b := &Budget{MaxHosts: maxHosts}
		var (
			wg       sync.WaitGroup
			refusals atomic.Int64
			made     atomic.Int64
		)
		for w := range workers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 25))
				for range steps {
					key := fmt.Sprintf("h%d.test", rng.IntN(hostCount))
					now := time.Now()
					switch rng.IntN(5) {
					case 0:
						b.record(key, now, obs200)
					case 1, 2:
						b.mu.Lock()
						_, kept := b.hosts[key]
						full := len(b.hosts) >= maxHosts
						b.mu.Unlock()
						b.record(key, now, obs503)
						switch b.retry(key, now, now, budgetObservation{}) {
						case attrs.ReasonHostLimit:
							refusals.Add(1)
							// Refused at now, the idlest host stays active
							// within the period at now (the clock stands
							// still while goroutines run): touching or
							// dropping hosts only makes the idlest later.
							b.mu.Lock()
							if n := b.activity.idlest(); n != nil && b.offset(now)-n.last >= b.idleAfter() {
								t.Errorf("host_limit while %q was idle %s", n.key, b.offset(now)-n.last)
							}
							b.mu.Unlock()
						case "":
							if !kept && full {
								made.Add(1) // most likely by forgetting an idle host
							}
						}
					case 3:
						b.record(key, now, budgetObservation{failure: true, status: 429})
					case 4:
						b.Available(budgetRequest(key))
					}
					if rng.IntN(100) == 0 {
						time.Sleep(time.Duration(rng.IntN(15)) * time.Minute)
					}
				}
			})
		}
		wg.Wait()
		checkBudget(t, b)
		t.Logf("%d retries refused for host_limit, %d new hosts retried with the table full", refusals.Load(), made.Load())
		if refusals.Load() == 0 || made.Load() == 0 {
			t.Fatal("the run exercised neither refusals nor room made by forgetting")
		}
	})
}

// Readings that arrive out of order keep the activity list sorted: a host
// counts as active no earlier than the latest one before it, which only
// delays forgetting it.
func TestBudgetIdleOutOfOrderReadings(t *testing.T) {
	b := &Budget{MaxHosts: 2}
	t0 := time.Now()
	failAt(b, "a.test", t0.Add(time.Second))
	failAt(b, "b.test", t0.Add(500*time.Millisecond))
	checkBudget(t, b)
	failAt(b, "a.test", t0) // back in time for a kept host too
	checkBudget(t, b)
	// b counts as active at 1s, a after it: b goes first, 10 minutes after 1s.
	at := t0.Add(time.Second + defaultBudgetIdleEviction - time.Millisecond)
	if got := failAt(b, "c.test", at); got != attrs.ReasonHostLimit {
		t.Fatalf("before b's clamped period ends: admit = %q, want host_limit", got)
	}
	at = t0.Add(time.Second + defaultBudgetIdleEviction)
	if got := failAt(b, "c.test", at); got != "" {
		t.Fatalf("b's period ended: admit = %q, want allowed", got)
	}
	if _, kept := b.hosts["b.test"]; kept {
		t.Fatal("b, the idlest, is still kept")
	}
	checkBudget(t, b)
}
