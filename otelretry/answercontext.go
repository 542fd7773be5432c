// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"sync/atomic"
	"time"
)

// answerContext is the context of the request a user's Classifier and
// Backoff are shown (Answer.Request), which their own calls are made with:
// the operation's, below a boundary of its own (a call made with it is an
// operation of its own, told the operation's Intent and id as a state
// check's lookup is), ending at the operation's deadline with
// DeadlineExceeded, or once the hooks returned, as a PrepareAttemptFunc's
// does. The attempt's own context cannot serve: it has no deadline, and a
// cut (the attempt timeout) ended it before the hooks judge the cut.
//
// Most such hooks only read the answer: the deadline context, its timer
// and its channel are made when one asks for Done or Err (context's own
// derivations ask for Done first), so that a hook that never calls out
// costs no allocation.
type answerContext struct {
	parent   context.Context // the operation's
	deadline time.Time
	bound    boundary
	own      ownScope

	ended atomic.Bool                   // the hooks returned
	made  atomic.Pointer[deadlineEnded] // nil until Done or Err
}

// deadlineEnded is an answerContext's deadline context, once made.
type deadlineEnded struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func (c *answerContext) init(parent context.Context, deadline time.Time, own ownScope) {
	c.parent, c.deadline, c.own = parent, deadline, own
}

func (c *answerContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *answerContext) Done() <-chan struct{}       { return c.deadlineContext().Done() }
func (c *answerContext) Err() error                  { return c.deadlineContext().Err() }

func (c *answerContext) Value(key any) any {
	if key == (boundaryKey{}) {
		return &c.bound
	}
	if v, ok := c.own.value(key); ok {
		return v
	}
	if m := c.made.Load(); m != nil {
		return m.ctx.Value(key) // context's own key finds the deadline's cancel, whose Done ours is
	}
	return c.parent.Value(key)
}

// deadlineContext makes the deadline context on first need; made after
// the hooks returned, it is already ended. It is made under no lock:
// context.WithDeadline calls the parent's Done and Value, which may be a
// caller's own context type's, and the operation ends the hooks' context
// (end) whatever that code does. Of two made at once, the first kept
// serves, the other is canceled; end and this read each other's mark
// after setting their own, so one of them cancels it.
func (c *answerContext) deadlineContext() context.Context {
	if m := c.made.Load(); m != nil {
		return m.ctx
	}
	ctx, cancel := context.WithDeadline(c.parent, c.deadline)
	m := &deadlineEnded{ctx: ctx, cancel: cancel}
	if !c.made.CompareAndSwap(nil, m) {
		cancel()
		return c.made.Load().ctx
	}
	if c.ended.Load() {
		m.cancel()
	}
	return m.ctx
}

// end ends the context once the hooks returned: a call of theirs that
// outlives them has no more time than a PrepareAttemptFunc's.
func (c *answerContext) end() {
	if c.parent == nil {
		return // never shown
	}
	c.ended.Store(true)
	if m := c.made.Load(); m != nil {
		m.cancel()
	}
}
