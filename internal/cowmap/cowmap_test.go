// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package cowmap

import (
	"sync"
	"testing"
)

func TestGetCreatesOncePerKey(t *testing.T) {
	var m Map[string, *int]
	calls := 0
	create := func() *int { calls++; v := calls; return &v }
	a := m.Get("a", create)
	if again := m.Get("a", create); again != a {
		t.Fatalf("second Get returned a different value")
	}
	if b := m.Get("b", create); b == a || *b != 2 {
		t.Fatalf("Get(b) = %d, want a new value 2", *b)
	}
	if calls != 2 || m.Len() != 2 {
		t.Fatalf("calls=%d len=%d, want 2 and 2", calls, m.Len())
	}
}

func TestLimitStopsStoring(t *testing.T) {
	m := Map[int, int]{Limit: 2}
	for i := range 5 {
		if got := m.Get(i, func() int { return i * 10 }); got != i*10 {
			t.Fatalf("Get(%d) = %d, want %d", i, got, i*10)
		}
	}
	if m.Len() != 2 {
		t.Fatalf("Len = %d, want 2 (the limit)", m.Len())
	}
}

func TestConcurrentGetReturnsOneValue(t *testing.T) {
	var m Map[string, *int]
	var wg sync.WaitGroup
	got := make([]*int, 16)
	for i := range got {
		wg.Go(func() { got[i] = m.Get("k", func() *int { return new(int) }) })
	}
	wg.Wait()
	for i, p := range got {
		if p != got[0] {
			t.Fatalf("goroutine %d saw a different value", i)
		}
	}
}

func TestGetDoesNotAllocateWhenWarm(t *testing.T) {
	var m Map[string, int]
	m.Get("GET", func() int { return 1 })
	key := "GET"
	if n := testing.AllocsPerRun(100, func() { m.Get(key, func() int { return 2 }) }); n != 0 {
		t.Fatalf("warm Get allocated %v times", n)
	}
}
