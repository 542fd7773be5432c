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

// Each attempt concludes seeing the race as it is: the others in flight,
// whether one already won, and its place (what it hedges, when its own
// hedge was sent); no hedge starts once the race is won or empty.
func TestRaceViews(t *testing.T) {
	a1 := &attempt{id: attemptID{n: 1, number: 1}}
	a2 := &attempt{id: attemptID{n: 2, number: 2}}
	r := newRace(1)
	r.begin(a1)
	if !r.exclusive(func() { r.addHedgeLocked(a2, a1, 20*time.Millisecond) }) {
		t.Fatal("no hedge while the first attempt is in flight")
	}
	v := r.concluding(a1)
	r.done(a1, verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonInFlight})
	if want := (raceView{othersInFlight: true, made: 2, link: hedgeLink{sentAfter: 20 * time.Millisecond, hedged: true}}); v != want {
		t.Errorf("the hedged attempt sees %+v, want %+v", v, want)
	}
	v = r.concluding(a2)
	r.done(a2, verdict{decision: attrs.DecisionReturn})
	if want := (raceView{made: 2, link: hedgeLink{of: 1}}); v != want {
		t.Errorf("the hedge sees %+v, want %+v", v, want)
	}
	if r.exclusive(func() { t.Error("a hedge decided after the race was won") }) {
		t.Error("exclusive ran with no attempt in flight")
	}
	r.running.Add(-2) // the attempts' goroutines, which this test did not start
}

// Once an attempt won, the others conclude superseded, and cancelAll
// cancels the ones in flight.
func TestRaceWonSupersedesTheOthers(t *testing.T) {
	a1 := &attempt{id: attemptID{n: 1, number: 1}}
	a2 := &attempt{id: attemptID{n: 2, number: 2}}
	r := newRace(1)
	r.begin(a1)
	r.exclusive(func() { r.addHedgeLocked(a2, a1, time.Millisecond) })
	r.concluding(a2)
	r.done(a2, verdict{decision: attrs.DecisionStop})
	if v := r.concluding(a1); !v.superseded || v.othersInFlight {
		t.Errorf("after the hedge's stop, the hedged attempt sees %+v, want superseded", v)
	}
	r.done(a1, verdict{decision: attrs.DecisionSuperseded})
	r.running.Add(-2)
}
