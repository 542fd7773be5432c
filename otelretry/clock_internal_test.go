// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// newClock takes the earliest of the Transport's deadline (start+limit),
// the caller's context's and a redirect chain's, and says whether the one
// it took is the caller's: reaching it is then the caller's deadline
// passing, also when the caller's and another are the same instant.
func TestNewClockTakesTheEarliestDeadlineAndSaysWhetherItIsTheCallers(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	withDeadline := func(d time.Duration) context.Context {
		ctx, cancel := context.WithDeadline(context.Background(), at(d))
		t.Cleanup(cancel)
		return ctx
	}
	cases := []struct {
		name          string
		ctx           context.Context
		chain         time.Time // zero: not a redirect hop
		wantLimit     time.Duration
		wantCallerBnd bool
	}{
		{"the Transport's alone", context.Background(), time.Time{}, 30 * time.Second, false},
		{"the caller's, earlier", withDeadline(5 * time.Second), time.Time{}, 5 * time.Second, true},
		{"the caller's, later", withDeadline(time.Minute), time.Time{}, 30 * time.Second, false},
		{"the caller's, the same instant", withDeadline(30 * time.Second), time.Time{}, 30 * time.Second, true},
		{"the caller's, already passed", withDeadline(-time.Second), time.Time{}, -time.Second, true},
		{"the chain's, earliest", withDeadline(5 * time.Second), at(2 * time.Second), 2 * time.Second, false},
		{"the caller's, before the chain's", withDeadline(time.Second), at(2 * time.Second), time.Second, true},
		{"the chain's, no caller deadline", context.Background(), at(3 * time.Second), 3 * time.Second, false},
		{"the chain's, later than the Transport's", context.Background(), at(time.Minute), 30 * time.Second, false},
		{"the chain's and the caller's, the same instant", withDeadline(2 * time.Second), at(2 * time.Second), 2 * time.Second, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock(start, 30*time.Second, tc.ctx, tc.chain)
			if c.start != start || c.limit != tc.wantLimit || !c.deadline.Equal(at(tc.wantLimit)) || c.callerBound != tc.wantCallerBnd {
				t.Errorf("clock = {limit %v, deadline %v, callerBound %v}, want {limit %v, deadline %v, callerBound %v}",
					c.limit, c.deadline.Sub(start), c.callerBound, tc.wantLimit, tc.wantLimit, tc.wantCallerBnd)
			}
		})
	}
}

// The clock reads time since the operation's start: since grows and left
// shrinks as time passes, left goes below zero past the deadline, and at
// turns a time since the start back into an instant.
func TestClockReadsTheTimeSinceTheStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		c := newClock(start, 300*time.Millisecond, context.Background(), time.Time{})
		if c.since() != 0 || c.left() != 300*time.Millisecond {
			t.Errorf("at the start: since %v, left %v; want 0 and 300ms", c.since(), c.left())
		}
		time.Sleep(120 * time.Millisecond)
		if c.since() != 120*time.Millisecond || c.left() != 180*time.Millisecond {
			t.Errorf("after 120ms: since %v, left %v; want 120ms and 180ms", c.since(), c.left())
		}
		time.Sleep(200 * time.Millisecond)
		if c.left() != -20*time.Millisecond {
			t.Errorf("20ms past the deadline: left %v, want -20ms", c.left())
		}
		if got := c.at(c.since()); !got.Equal(time.Now()) {
			t.Errorf("at(since()) = %v, want now (%v)", got, time.Now())
		}
		if got := c.at(250 * time.Millisecond); !got.Equal(start.Add(250 * time.Millisecond)) {
			t.Errorf("at(250ms) = %v, want start+250ms", got)
		}
	})
}

// A clock is read only on the side of a testing/synctest bubble it was
// started on: a phase a goroutine outside the bubble reports, for an
// attempt sent inside it, leaves the attempt's bound as it was (its own
// timer is the bubble's, and the runtime aborts the program on a reset
// from outside), as one reported inside a bubble for an attempt sent
// outside it does. The attempt is still cut by its own bound, in the
// bubble's time.
func TestAClockIsReadOnTheSideOfTheBubbleItStartedOn(t *testing.T) {
	queueInBubbles.Store(false) // the attempt's own timer, as outside this package's tests
	t.Cleanup(func() { queueInBubbles.Store(true) })
	outside := newClock(time.Now(), time.Hour, context.Background(), time.Time{})
	inside := make(chan *attemptTimer)
	reported := make(chan bool)
	go func() { // outside the bubble
		at := <-inside
		_, ok := at.clock.read()
		at.entered(phaseWritten)
		reported <- ok
	}()
	synctest.Test(t, func(t *testing.T) {
		if _, ok := outside.read(); ok {
			t.Error("a clock started outside the bubble was read inside it")
		}
		at, ctx := newTimerIn(time.Hour, nil)
		start := time.Now()
		at.start(true, false, 100*time.Millisecond, 0, at.clock.since())
		inside <- at
		if <-reported {
			t.Error("a clock started in the bubble was read outside it")
		}
		<-ctx.Done()
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("cut after %v of the bubble's time, want its attempt timeout, 100ms", d)
		}
		at.stop()
	})
}

// An attempt's own timer, set in a testing/synctest bubble, is stopped
// from outside it only while it is armed: the body of a response received
// in the bubble is closed after synctest.Test returned (the test reads it
// there), and its close stops the timer once more, which the answer or
// its expiry had already disarmed. Before, that stop aborted the program
// ("stop of synctest timer from outside bubble"); a failure here still
// does.
func TestATimerDisarmedInABubbleIsNotStoppedFromOutside(t *testing.T) {
	queueInBubbles.Store(false) // the attempt's own timer, as outside this package's tests
	t.Cleanup(func() { queueInBubbles.Store(true) })
	var answered, expired *attemptTimer
	synctest.Test(t, func(t *testing.T) {
		at, _ := newTimerIn(time.Hour, nil)
		at.start(true, false, 100*time.Millisecond, 0, at.clock.since())
		if at.answered() {
			t.Error("answered at once, yet timed out")
		}
		answered = at
		at, ctx := newTimerIn(time.Hour, nil)
		at.start(true, false, 100*time.Millisecond, 0, at.clock.since())
		<-ctx.Done()
		synctest.Wait() // the expiry ran
		expired = at
	})
	answered.stop() // outside the bubble, as a body's Close
	expired.stop()
	if !expired.timedOut() {
		t.Error("the attempt cut in the bubble does not read as timed out")
	}
}
