// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
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

// sendHedge has r decide on a hedge of its last attempt sent, prepared as
// a, and sends it started at start.
func sendHedge(t *testing.T, r *raceState, a *attempt, start time.Duration) {
	t.Helper()
	var of *attempt
	if !r.hedgeable(func(n int, hedged *attempt, _ int) *attempt {
		if n != a.id.n {
			t.Errorf("the hedge would be sent %d-th, want %d-th", n, a.id.n)
		}
		of = hedged
		return a
	}) {
		t.Fatal("no hedge decided while an attempt is in flight")
	}
	sent, _ := r.prepared(a, of, r.gen, func() verdict { return verdict{} }, func() { a.start = start })
	if !sent {
		t.Fatal("the prepared hedge was not sent")
	}
}

// Each attempt concludes seeing the race as it is: the others in flight,
// whether one already won, and its place (what it hedges, when its own
// hedge was sent); no hedge is decided once the race is won or empty.
func TestRaceViews(t *testing.T) {
	a1 := &attempt{id: attemptID{n: 1, number: 1}}
	a2 := &attempt{id: attemptID{n: 2, number: 2}}
	r := newRace(1)
	r.begin(a1, 0)
	sendHedge(t, r, a2, 20*time.Millisecond)
	v := r.concluding(a1)
	r.done(a1, verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonInFlight}, 0)
	if want := (raceView{othersInFlight: true, made: a2.id, link: hedgeLink{sentAfter: 20 * time.Millisecond, hedged: true}}); v != want {
		t.Errorf("the hedged attempt sees %+v, want %+v", v, want)
	}
	v = r.concluding(a2)
	r.done(a2, verdict{decision: attrs.DecisionReturn}, 0)
	if want := (raceView{made: a2.id, link: hedgeLink{of: 1}}); v != want {
		t.Errorf("the hedge sees %+v, want %+v", v, want)
	}
	if r.hedgeable(func(int, *attempt, int) *attempt { t.Error("a hedge decided after the race was won"); return nil }) {
		t.Error("hedgeable ran with no attempt in flight")
	}
	if closed, left := r.closeIfReported(2); !closed || len(left) != 0 {
		t.Errorf("after both attempts reported: closed %v, %d reports left", closed, len(left))
	}
	r.running.Add(-2) // the attempts' goroutines, which this test did not start
}

// Once an attempt won, the others conclude superseded; a hedge prepared
// after that is not sent, and is reported unsent, so that the race gives
// back its number (not its refusal: it was not refused).
func TestRaceWonSupersedesTheOthers(t *testing.T) {
	a1 := &attempt{id: attemptID{n: 1, number: 1}}
	a2 := &attempt{id: attemptID{n: 2, number: 2}}
	a3 := &attempt{id: attemptID{n: 3, number: 3}}
	r := newRace(2)
	r.begin(a1, 0)
	sendHedge(t, r, a2, time.Millisecond)
	var of *attempt
	r.hedgeable(func(_ int, hedged *attempt, _ int) *attempt { of = hedged; return a3 })
	r.concluding(a2)
	r.done(a2, verdict{decision: attrs.DecisionStop}, 0)
	if v := r.concluding(a1); !v.superseded || v.othersInFlight {
		t.Errorf("after the hedge's stop, the hedged attempt sees %+v, want superseded", v)
	}
	r.done(a1, verdict{decision: attrs.DecisionSuperseded}, 0)
	sent, reported := r.prepared(a3, of, r.gen, func() verdict { return verdict{decision: attrs.DecisionStop} }, func() {})
	if sent || !reported {
		t.Errorf("a hedge prepared after the race was won: sent %v, reported %v", sent, reported)
	}
	if d := <-r.reports; d.kind != reportUnsent || d.a != a3 {
		t.Errorf("report %+v, want a3 unsent", d)
	}
	if closed, _ := r.closeIfReported(1); closed {
		t.Error("the race closed before both its attempts reported")
	}
	r.running.Add(-2)
}

// A hedge refused at its preparation while the race runs is reported, once;
// one prepared for a race that was closed, or for an earlier race of the
// operation, is let go of silently.
func TestRaceHedgePreparedLate(t *testing.T) {
	a1 := &attempt{id: attemptID{n: 1, number: 1}}
	a2 := &attempt{id: attemptID{n: 2, number: 2}}
	r := newRace(1)
	r.begin(a1, 0)
	gen := r.gen
	r.hedgeable(func(int, *attempt, int) *attempt { return a2 })
	refuse := func() verdict { return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonPrepareFailed} }
	if sent, reported := r.prepared(a2, a1, gen, refuse, func() {}); sent || !reported {
		t.Errorf("refused at its preparation: sent %v, reported %v; want its refusal reported", sent, reported)
	}
	if d := <-r.reports; d.kind != reportRefused || d.of != 1 || d.refused.reason != attrs.ReasonPrepareFailed {
		t.Errorf("report %+v", d)
	}
	r.concluding(a1)
	r.done(a1, verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonRetryableStatus}, 0)
	a3 := &attempt{id: attemptID{n: 2, number: 2}}
	r.begin(a3, 0) // the next race, after the retry's pause
	if sent, reported := r.prepared(a2, a1, gen, refuse, func() {}); sent || reported {
		t.Errorf("a hedge of the earlier race: sent %v, reported %v", sent, reported)
	}
	if r.report(gen, raceDone{}) {
		t.Error("a report of the earlier race was taken")
	}
	r.running.Add(-2)
}

// A hedge still being prepared when its race closes is reported unsent by
// the close, once: its preparation, when it ends, reports nothing more,
// and neither does the next race's close, so that its number is given
// back exactly once, before the next attempt takes one.
func TestRaceClosedWhileAHedgeIsPreparedGivesItBackOnce(t *testing.T) {
	a1 := &attempt{id: attemptID{n: 1, number: 1}}
	a2 := &attempt{id: attemptID{n: 2, number: 2}}
	r := newRace(1)
	r.begin(a1, 0)
	gen := r.gen
	r.hedgeable(func(int, *attempt, int) *attempt { return a2 })
	r.concluding(a1)
	r.done(a1, verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonRetryableStatus}, 0)
	closed, left := r.closeIfReported(1)
	if !closed || len(left) != 1 || left[0].kind != reportUnsent || left[0].a != a2 {
		t.Fatalf("closed %v, reports %+v; want a2 reported unsent", closed, left)
	}
	a3 := &attempt{id: attemptID{n: 2, number: 2}}
	r.begin(a3, 0)
	r.concluding(a3)
	r.done(a3, verdict{decision: attrs.DecisionReturn}, 0)
	if closed, left := r.closeIfReported(1); !closed || len(left) != 0 {
		t.Errorf("the next race: closed %v, reports %+v; want none", closed, left)
	}
	ready := func() verdict { return verdict{} }
	if sent, reported := r.prepared(a2, a1, gen, ready, func() {}); sent || !reported {
		t.Errorf("the preparation that outlived its race: sent %v, reported %v; want settled by the race", sent, reported)
	}
	if taken, reported := r.panicked(gen, a2, nil); taken || reported {
		t.Errorf("a2 handed back twice: taken %v, reported %v", taken, reported)
	}
	r.running.Add(-2)
}
