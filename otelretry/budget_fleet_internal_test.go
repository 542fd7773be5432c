// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// These tests drive record and admit exactly as the transport does, on
// virtual time, with no transport in between: per operation, the first
// attempt's answer is recorded; on a failure the policy would retry, the
// retry is admitted at now with its start at now + pause; if allowed, the
// operation pauses, sends and records again; at most three attempts, the
// pause drawn from ExponentialBackoff(100ms, 2s). They pin the model; the
// same figures through the public API are in budget_fleet_test.go.

const (
	simKey      = "dependency.test"
	simAnswer   = 5 * time.Millisecond // the base answers after 5 ms
	simAttempts = defaultMaxAttempts
)

// simDependency answers one attempt that ends at now.
type simDependency func(now time.Time) budgetObservation

func outage503(time.Time) budgetObservation { return obs503 }

// simOperation runs one operation against dep through b, and returns its
// attempts.
func simOperation(b *Budget, dep simDependency, bo Backoff, answer time.Duration) int {
	for n := 1; ; n++ {
		time.Sleep(answer)
		now := time.Now()
		o := dep(now)
		b.record(simKey, now, o)
		if !o.failure || n == simAttempts {
			return n
		}
		pause := max(bo(n, Answer{}), o.pushback)
		if b.retry(simKey, now, now.Add(pause), budgetObservation{}) != "" {
			return n
		}
		time.Sleep(pause)
	}
}

// fleetShape is a fleet of clients, each with its own Budget, offering
// uniform traffic during a full outage.
type fleetShape struct {
	clients int
	rate    float64       // operations per second per client
	outage  time.Duration // 0: 120 s
	burst   bool          // each client sends all its operations at once
	ops     int           // operations per client when burst
	answer  time.Duration // 0: simAnswer
	dep     simDependency // nil: outage503
	label   string        // the table's label; "": from the shape
}

func (s fleetShape) String() string {
	if s.label != "" {
		return s.label
	}
	if s.burst {
		return fmt.Sprintf("%d × %d at once", s.clients, s.ops)
	}
	return fmt.Sprintf("%d × %g/s", s.clients, s.rate)
}

type fleetResult struct {
	ops, attempts              int64
	minRetries, maxRetries     int64 // per client
	minOpsClient, maxOpsClient int64
}

func (r fleetResult) amplification() float64 { return float64(r.attempts) / float64(r.ops) }

// runFleet runs shape on virtual time; run is one operation of one client.
func runFleet(shape fleetShape, run func(client int) int) fleetResult {
	outage := shape.outage
	if outage == 0 {
		outage = 120 * time.Second
	}
	ops := make([]atomic.Int64, shape.clients)
	atts := make([]atomic.Int64, shape.clients)
	var wg sync.WaitGroup
	for c := range shape.clients {
		wg.Go(func() {
			var opWG sync.WaitGroup
			one := func() {
				ops[c].Add(1)
				opWG.Go(func() { atts[c].Add(int64(run(c))) })
			}
			if shape.burst {
				for range shape.ops {
					one()
				}
				opWG.Wait()
				return
			}
			interval := time.Duration(float64(time.Second) / shape.rate)
			// Clients are spread evenly over one interval.
			time.Sleep(interval * time.Duration(c) / time.Duration(shape.clients))
			for start := time.Now(); time.Since(start) < outage-interval*time.Duration(c)/time.Duration(shape.clients); time.Sleep(interval) {
				one()
			}
			opWG.Wait()
		})
	}
	wg.Wait()
	r := fleetResult{minRetries: 1 << 62, minOpsClient: 1 << 62}
	for c := range shape.clients {
		o, a := ops[c].Load(), atts[c].Load()
		r.ops += o
		r.attempts += a
		r.minRetries, r.maxRetries = min(r.minRetries, a-o), max(r.maxRetries, a-o)
		r.minOpsClient, r.maxOpsClient = min(r.minOpsClient, o), max(r.maxOpsClient, o)
	}
	return r
}

// issueFleetShapes are the fleet shapes of the issue's table; 120 s of
// outage, a 503 after 5 ms.
var issueFleetShapes = []fleetShape{
	{clients: 1, rate: 200}, {clients: 10, rate: 20}, {clients: 100, rate: 2},
	{clients: 200, rate: 1}, {clients: 200, rate: 0.2},
}

// moreFleetShapes are other shapes in which each client sends at least 10
// operations during the outage: exactly 10 each (the bound is tight there),
// all at once (concurrency cannot stretch a check into more retries), many
// slow clients, and an outage that hangs until a 1 s attempt timeout.
var moreFleetShapes = []fleetShape{
	{clients: 20, rate: 0.1, outage: 100 * time.Second},
	{clients: 50, burst: true, ops: 10},
	{clients: 1, burst: true, ops: 1000},
	{clients: 1000, rate: 0.1},
	{clients: 3, rate: 50},
	{clients: 100, rate: 2, answer: time.Second, dep: func(time.Time) budgetObservation { return obsTimeout },
		label: "100 × 2/s, hanging (1 s attempt timeouts)"},
}

func TestBudgetFleetBoundSimulated(t *testing.T) {
	var table strings.Builder
	fmt.Fprintf(&table, "\n| clients × rate per client | operations | attempts per operation | retries per client |\n|---|---:|---:|---:|\n")
	shapes := append(append([]fleetShape{}, issueFleetShapes...), moreFleetShapes...)
	for _, shape := range shapes {
		t.Run(shape.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				budgets := make([]*Budget, shape.clients)
				for i := range budgets {
					budgets[i] = &Budget{}
				}
				bo := ExponentialBackoff(defaultBackoffInitial, defaultBackoffMax)
				dep, answer := shape.dep, shape.answer
				if dep == nil {
					dep = outage503
				}
				if answer == 0 {
					answer = simAnswer
				}
				r := runFleet(shape, func(c int) int { return simOperation(budgets[c], dep, bo, answer) })
				if r.minOpsClient < 10 {
					t.Fatalf("a client sent %d operations; the bound needs at least 10", r.minOpsClient)
				}
				if amp := r.amplification(); amp > 1.2 {
					t.Errorf("attempts per operation = %.3f, want ≤ 1.2", amp)
				}
				// A fresh client's two retries, and no more, however long
				// the outage and however slow the client. Operations that
				// fail at the same instant may see each other's failures
				// before their own admit, so a burst gets at most two.
				switch {
				case shape.burst && r.maxRetries > 2:
					t.Errorf("a client made %d retries, want at most 2", r.maxRetries)
				case !shape.burst && (r.minRetries != 2 || r.maxRetries != 2):
					t.Errorf("retries per client in [%d, %d], want exactly 2", r.minRetries, r.maxRetries)
				}
				retries := fmt.Sprint(r.maxRetries)
				if r.minRetries != r.maxRetries {
					retries = fmt.Sprintf("%d–%d", r.minRetries, r.maxRetries)
				}
				fmt.Fprintf(&table, "| %s | %d | %.4f | %s |\n", shape, r.ops, r.amplification(), retries)
			})
		})
	}
	// The issue's table offers 24 000 operations in each row but the last
	// (4 800); the rows are the same traffic.
	t.Log(table.String())
}

// A fresh client follows the seed timeline: 503, 503, 200 is three calls
// and a return.
func TestBudgetSeedTimelineSimulated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		answers := []budgetObservation{obs503, obs503, obs200}
		calls := 0
		dep := func(time.Time) budgetObservation { calls++; return answers[min(calls, len(answers))-1] }
		if n := simOperation(b, dep, ExponentialBackoff(defaultBackoffInitial, defaultBackoffMax), simAnswer); n != 3 || calls != 3 {
			t.Fatalf("attempts = %d, calls = %d, want 3 and 3", n, calls)
		}
	})
}

// How soon a low-rate client can retry again once the dependency is
// healthy: after 120 s of outage, its operations succeed; the test finds
// the first operation after which a failure would be retried (Available >
// 0), and checks it end to end: that operation's successor, failing once,
// makes two attempts; one operation earlier it would have made one.
func TestBudgetRecoverySimulated(t *testing.T) {
	for _, rate := range []float64{0.2, 1} {
		t.Run(fmt.Sprintf("%g/s", rate), func(t *testing.T) {
			for _, probeAfter := range []int{2, 3} {
				synctest.Test(t, func(t *testing.T) {
					b := &Budget{}
					bo := ExponentialBackoff(defaultBackoffInitial, defaultBackoffMax)
					interval := time.Duration(float64(time.Second) / rate)
					end := time.Now().Add(120 * time.Second)
					for time.Now().Before(end) {
						simOperation(b, outage503, bo, simAnswer)
						time.Sleep(interval - simAnswer)
					}
					recovered := time.Now()
					successes := 0
					for b.Available(budgetRequest(simKey)) == 0 {
						simOperation(b, func(time.Time) budgetObservation { return obs200 }, bo, simAnswer)
						successes++
						time.Sleep(interval - simAnswer)
					}
					if successes != 3 {
						t.Fatalf("%d successes before a failure would be retried, want 3", successes)
					}
					after := time.Since(recovered)
					if want := 3 * interval; after != want {
						t.Fatalf("the first operation that may retry starts %s after the outage, want %s", after, want)
					}
					if probeAfter == 3 {
						t.Logf("rate %g/s: %d successes; the first operation that may retry a failure starts %s after the outage ends", rate, successes, after)
					}

					// End to end, on a second client: probeAfter successes,
					// then an operation that fails once.
					b2 := &Budget{}
					end = time.Now().Add(120 * time.Second)
					for time.Now().Before(end) {
						simOperation(b2, outage503, bo, simAnswer)
						time.Sleep(interval - simAnswer)
					}
					for range probeAfter {
						simOperation(b2, func(time.Time) budgetObservation { return obs200 }, bo, simAnswer)
						time.Sleep(interval - simAnswer)
					}
					calls := 0
					n := simOperation(b2, func(time.Time) budgetObservation {
						calls++
						if calls == 1 {
							return obs503
						}
						return obs200
					}, bo, simAnswer)
					if want := map[int]int{2: 1, 3: 2}[probeAfter]; n != want {
						t.Fatalf("after %d successes, a 503 then 200 took %d attempts, want %d", probeAfter, n, want)
					}
				})
			}
		})
	}
}

// Pushback for the whole client: one operation's Retry-After holds back
// the retries of the others to that host until it passes; first attempts
// go on; the operation that received it retries after its pause.
func TestBudgetPushbackSimulated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{}
		bo := ConstantBackoff(100 * time.Millisecond)
		hinted := budgetObservation{failure: true, status: 503, pushback: 2 * time.Second}
		var calls atomic.Int64
		// One operation gets 503 + Retry-After: 2 at t=5ms, then 200.
		var first atomic.Int64
		go func() {
			first.Store(int64(simOperation(b, func(time.Time) budgetObservation {
				if calls.Add(1) == 1 {
					return hinted
				}
				return obs200
			}, bo, simAnswer)))
		}()
		time.Sleep(500 * time.Millisecond)
		// Another, during the hold: its first attempt is sent, its retry
		// (due 100 ms later) is refused.
		if n := simOperation(b, outage503, bo, simAnswer); n != 1 {
			t.Fatalf("an operation during the hold made %d attempts, want 1 (first attempt only)", n)
		}
		now := time.Now()
		if got := b.retry(simKey, now, now.Add(100*time.Millisecond), budgetObservation{}); got != attrs.ReasonPushback {
			t.Fatalf("admit during the hold = %q, want pushback", got)
		}
		synctest.Wait()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if first.Load() != 2 {
			t.Fatalf("the operation that received the hint made %d attempts, want 2", first.Load())
		}
	})
}
