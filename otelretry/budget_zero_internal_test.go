// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// Issue 25, item 13: the zero Budget has the default settings. Each rule
// is played on a zero Budget and on NewBudget(), with time passed in, and
// must answer alike.
func TestBudgetZeroValueMatchesDefaults(t *testing.T) {
	type play func(b *Budget, t0 time.Time) []string
	for _, c := range []struct {
		name string
		play play
	}{
		{"tokens and ratio", func(b *Budget, t0 time.Time) (out []string) {
			for range 4 {
				out = append(out, string(failAt(b, "a.test", t0)))
			}
			for range 3 {
				b.record("a.test", t0, obs200)
				out = append(out, string(b.admit("a.test", t0, t0)))
			}
			return out
		}},
		{"429 without Retry-After holds a second", func(b *Budget, t0 time.Time) (out []string) {
			b.record("a.test", t0, budgetObservation{failure: true, status: http.StatusTooManyRequests})
			for _, start := range []time.Duration{0, 999 * time.Millisecond, time.Second} {
				out = append(out, string(b.admit("a.test", t0, t0.Add(start))))
			}
			return out
		}},
		{"host limit", func(b *Budget, t0 time.Time) (out []string) {
			for i := range DefaultBudgetMaxHosts {
				b.record(fmt.Sprint("h", i), t0, obs503)
			}
			return append(out, string(failAt(b, "new.test", t0)), fmt.Sprint(len(b.hosts)))
		}},
		{"key", func(b *Budget, t0 time.Time) []string {
			return []string{b.key(budgetRequest("a.test:8080")), b.key(&http.Request{Host: "h.test"})}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Now()
			zero, def := &Budget{}, NewBudget()
			got, want := c.play(zero, t0), c.play(def, t0)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("zero Budget: %q, NewBudget(): %q", got, want)
			}
			checkBudget(t, zero)
		})
	}
	var zero Budget
	if got := zero.Available(budgetRequest("a.test")); got != 2 {
		t.Fatalf("zero Budget: Available = %d, want a fresh host's 2", got)
	}
}

// BudgetPushback(0) means no hold, not the default.
func TestBudgetPushbackZeroIsNoHold(t *testing.T) {
	b := NewBudget(BudgetPushback(0))
	t0 := time.Now()
	b.record("a.test", t0, budgetObservation{failure: true, status: http.StatusTooManyRequests})
	if got := b.admit("a.test", t0, t0); got != attrs.Reason("") {
		t.Fatalf("admit = %q, want allowed: BudgetPushback(0) holds nothing", got)
	}
}
