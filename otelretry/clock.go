// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"time"
)

// clock is an operation's time. start is when the operation began; every
// later instant is kept as the time since start (since), on the monotonic
// clock. limit is the time from start to the deadline. callerBound: that
// deadline is the caller's context's, so reaching it is the caller's
// deadline passing, whichever timer notices first. It is set once, when
// the operation begins, and only read afterwards.
type clock struct {
	start       time.Time
	deadline    time.Time
	limit       time.Duration
	callerBound bool
}

// newClock sets an operation's deadline: the earliest of start+limit, the
// context's deadline and, for a redirect hop, the first hop's deadline
// (chainDeadline, zero when none).
func newClock(start time.Time, limit time.Duration, ctx context.Context, chainDeadline time.Time) clock {
	c := clock{start: start, deadline: start.Add(limit)}
	callerDeadline, hasCallerDeadline := ctx.Deadline()
	if hasCallerDeadline && callerDeadline.Before(c.deadline) {
		c.deadline = callerDeadline
	}
	if !chainDeadline.IsZero() && chainDeadline.Before(c.deadline) {
		c.deadline = chainDeadline
	}
	c.limit = c.deadline.Sub(start)
	c.callerBound = hasCallerDeadline && !c.deadline.Before(callerDeadline)
	return c
}

// since reads the clock: the time since the operation began. It reads only
// the monotonic clock, and every duration and deadline check is taken
// from it.
func (c *clock) since() time.Duration { return time.Since(c.start) }

// left is the time left before the deadline, now.
func (c *clock) left() time.Duration { return c.limit - c.since() }

// at is the wall-clock instant d after the start.
func (c *clock) at(d time.Duration) time.Time { return c.start.Add(d) }

// read is the time since the operation began, now, and whether it could
// be read: not on a goroutine of a testing/synctest bubble for a clock
// started outside it (the bubble's time.Now is fake, and has no
// monotonic reading), nor outside a bubble for a clock started in one
// (whose timers cannot be touched from outside: the runtime aborts).
func (c *clock) read() (since time.Duration, ok bool) {
	now := time.Now()
	if inBubble := now == now.Round(0); inBubble == c.monotonic() {
		return 0, false
	}
	return now.Sub(c.start), true
}

// monotonic reports whether the clock reads the monotonic clock: always,
// except inside a testing/synctest bubble, whose time.Now has no
// monotonic reading.
func (c *clock) monotonic() bool { return c.start != c.start.Round(0) }
