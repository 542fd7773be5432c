// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// hedgeRateRun is what runHedgeRate saw: the calls the base got, the
// hedges sent and refused (by reason), and the answers returned.
type hedgeRateRun struct {
	calls    int
	sent     int
	refused  map[string]int
	statuses map[int]int
	errs     int
}

// runHedgeRate runs n operations in flight together under the default
// Budget: each first attempt answers 200 after 100 ms, every later call
// after 1 ms.
func runHedgeRate(t *testing.T, n int, hedging otelretry.Hedging) hedgeRateRun {
	steps := make([]scripted.Step, n, n+1)
	for i := range steps {
		steps[i] = scripted.Step{Delay: 100 * time.Millisecond, Status: 200}
	}
	h := newHarness(t, append(steps, scripted.Step{Delay: time.Millisecond, Status: 200}), otelretry.WithHedging(hedging))
	out := hedgeRateRun{refused: map[string]int{}, statuses: map[int]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/items"))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				out.errs++
				return
			}
			resp.Body.Close()
			out.statuses[resp.StatusCode]++
		})
	}
	wg.Wait()
	time.Sleep(5 * time.Second) // the losers end
	synctest.Wait()
	if open := h.base.OpenBodies(); open != 0 {
		t.Errorf("%d response bodies left open", open)
	}
	for _, op := range spantest.Operations(h.ended()) {
		for _, ev := range op.Events() {
			switch ev.Name {
			case attrs.EventHedgeSent:
				out.sent++
			case "hedge_refused":
				r, _ := attrValue(ev.Attributes, attrs.ReasonKey)
				out.refused[r]++
			}
		}
	}
	out.calls = len(h.base.Calls())
	return out
}

// docs/hedging.md "A bounded extra load" and docs/decisions.md row 47: 20
// operations of a fresh dependency in flight together, all past their hedge
// delay, MaxShare 0.01 (burst max(1, 100 × 0.01) = 1): at most
// burst + MaxShare × N = 1.2 hedges, so one hedge sent and 19 hedge_refused
// (hedge_limit), none recorded as the budget's (a reviewer's find).
func TestTheHedgeRateRefusesAllButTheBurstInFlightTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 20
		got := runHedgeRate(t, n, otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 0.01})
		if got.sent != 1 || got.calls != n+1 {
			t.Errorf("hedges sent = %d, calls = %d; want 1 and %d", got.sent, got.calls, n+1)
		}
		if got.refused["hedge_limit"] != n-1 || len(got.refused) != 1 {
			t.Errorf("hedge_refused = %v; want hedge_limit: %d", got.refused, n-1)
		}
		if got.statuses[200] != n || got.errs != 0 {
			t.Errorf("statuses %v errs %d; want %d × 200", got.statuses, got.errs, n)
		}
	})
}

// docs/decisions.md rows 45 and 47: with one hedge out of a fresh host's
// 6 tokens (5 left), another hedge leaves 4, more than half: the budget
// does not refuse it, so every further refusal is the rate's
// (hedge_limit), never the budget's. From about 12 hedges admitted at one
// instant, some were recorded as the budget's, varying run to run: each
// took its budget token before the rate refused it, and those lent to the
// others counted against it meanwhile (a reviewer's find). The rate is
// asked first now.
func TestAHedgeTheRateRefusesIsNeverRecordedAsBudget(t *testing.T) {
	for _, n := range []int{12, 16, 20} {
		synctest.Test(t, func(t *testing.T) {
			got := runHedgeRate(t, n, otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 0.01})
			if got.refused["budget"] != 0 || got.sent != 1 || got.refused["hedge_limit"] != n-1 {
				t.Errorf("n=%d: hedges sent %d, hedge_refused %v; want 1 sent and hedge_limit: %d", n, got.sent, got.refused, n-1)
			}
		})
	}
}
