// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// A race ends on exactly one verdict: the first that ends the operation,
// or a retry no attempt in flight carries out.
func TestRaceEndsOnOneVerdict(t *testing.T) {
	for _, tc := range []struct {
		v    verdict
		want bool
	}{
		{verdict{decision: attrs.DecisionReturn}, true},
		{verdict{decision: attrs.DecisionStop}, true},
		{verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonRetryableStatus}, true},
		{verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonInFlight}, false},
		{verdict{decision: attrs.DecisionSuperseded, reason: attrs.ReasonOtherAttempt}, false},
	} {
		if got := final(tc.v); got != tc.want {
			t.Errorf("final(%s/%s) = %v", tc.v.decision, tc.v.reason, got)
		}
	}
}

// An attempt's place in its race: the hedge names the attempt it hedges;
// the attempt hedged, when its hedge was sent after its own start, which
// for a hedge of a hedge counts from the hedge's own send.
func TestRaceLinksEachAttemptToTheOneItHedges(t *testing.T) {
	a1 := &attempt{id: attemptID{n: 1, number: 1}, start: 5 * time.Millisecond}
	a2 := &attempt{id: attemptID{n: 2, number: 2}}
	a3 := &attempt{id: attemptID{n: 3, number: 3}}
	hedges := []hedgeSent{{hedge: a2, of: a1, after: 20 * time.Millisecond}, {hedge: a3, of: a2, after: 30 * time.Millisecond}}
	for _, tc := range []struct {
		a     *attempt
		link  hedgeLink
		start time.Duration
	}{
		{a1, hedgeLink{sentAfter: 20 * time.Millisecond, hedged: true}, 5 * time.Millisecond},
		{a2, hedgeLink{of: 1, sentAfter: 30 * time.Millisecond, hedged: true}, 25 * time.Millisecond},
		{a3, hedgeLink{of: 2}, 55 * time.Millisecond},
	} {
		if got := linkOf(tc.a, hedges); got != tc.link {
			t.Errorf("attempt %d: link %+v, want %+v", tc.a.id.n, got, tc.link)
		}
		if got := startOf(tc.a, hedges); got != tc.start {
			t.Errorf("attempt %d: sent at %v, want %v", tc.a.id.n, got, tc.start)
		}
	}
}

// What an attempt of a race tells the sketch: its time to headers when it
// was answered; for an attempt cut once its hedge won, its elapsed time as
// a lower bound (cut); for one that timed out past the delay, its elapsed
// time; nothing for an attempt cut before the delay.
func TestLatencySampleOfAnAttemptCutIsALowerBound(t *testing.T) {
	const delay = 10 * time.Millisecond
	cutErr := errors.New("canceled")
	for _, tc := range []struct {
		name string
		o    observation
		view raceView
		took time.Duration
		cut  bool
	}{
		{"answered", observation{end: 7 * time.Millisecond}, raceView{delay: delay}, 7 * time.Millisecond, false},
		{"cut once its hedge won", observation{end: 40 * time.Millisecond, err: cutErr}, raceView{superseded: true, delay: delay}, 40 * time.Millisecond, true},
		{"answered, but another won", observation{end: 40 * time.Millisecond}, raceView{superseded: true, delay: delay}, 40 * time.Millisecond, true},
		{"cut before the delay", observation{end: 4 * time.Millisecond, err: cutErr}, raceView{superseded: true, delay: delay}, 0, false},
		{"timed out", observation{end: 900 * time.Millisecond, err: cutErr, timedOut: true}, raceView{delay: delay}, 900 * time.Millisecond, false},
		{"failed", observation{end: 3 * time.Millisecond, err: cutErr}, raceView{delay: delay}, 0, false},
	} {
		if took, cut := latencySample(tc.o, tc.view); took != tc.took || cut != tc.cut {
			t.Errorf("%s: %v, cut %v; want %v, cut %v", tc.name, took, cut, tc.took, tc.cut)
		}
	}
}

// TestRacesThatPanicLeaveNoLoanOpen: 32 hedged operations in flight with random
// Classifier, Backoff and PrepareAttemptFunc panics leave no hedge loan
// open and no goroutine behind (synctest would report it).
func TestRacesThatPanicLeaveNoLoanOpen(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			rng := rand.New(rand.NewPCG(seed, 7))
			roll := func(p float64) bool { mu.Lock(); defer mu.Unlock(); return rng.Float64() < p }
			dur := func(max int) time.Duration {
				mu.Lock()
				defer mu.Unlock()
				return time.Duration(rng.IntN(max)) * time.Millisecond
			}
			th, b := &Throttle{Window: time.Hour}, &Budget{}
			base := baseFunc(func(r *http.Request) (*http.Response, error) {
				select {
				case <-r.Context().Done():
					return nil, r.Context().Err()
				case <-time.After(dur(400)):
				}
				st := 200
				if roll(0.5) {
					st = 503
				}
				return &http.Response{StatusCode: st, Body: http.NoBody, Request: r}, nil
			})
			classifier := func(a Answer) Classification {
				time.Sleep(dur(200))
				if roll(0.2) {
					panic("classifier")
				}
				return Classification{}
			}
			backoff := func(n int, a Answer) time.Duration {
				if roll(0.1) {
					panic("backoff")
				}
				return 10 * time.Millisecond
			}
			prep := func(req *http.Request, attempt int) error {
				time.Sleep(dur(50))
				if roll(0.05) {
					panic("prepare")
				}
				return nil
			}
			tr := NewTransport(base, WithThrottle(th), WithBudget(b), WithMaxAttempts(4),
				WithBackoff(backoff), WithPrepareAttempt(prep),
				WithHedging(Hedging{Delay: 100 * time.Millisecond, MaxHedges: 3, MaxShare: 1}), WithClassifier(classifier))
			var wg sync.WaitGroup
			for i := range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					roundTripPanic(tr, fmt.Sprintf("http://api%d.test/x", i%2))
				}()
			}
			wg.Wait()
			synctest.Wait()
			b.mu.Lock()
			for k, h := range b.hosts {
				if len(h.loans.open) != 0 {
					t.Errorf("seed %d: host %s has %d loans open", seed, k, len(h.loans.open))
				}
			}
			b.mu.Unlock()
		})
	}
}
