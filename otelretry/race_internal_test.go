// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
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
