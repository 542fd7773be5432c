package otelretry

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// attemptContext is the context of one attempt: its parent (the operation's
// context) with a deadline of its own, released when the attempt is done.
// It behaves as context.WithDeadline(parent, deadline) plus its cancel
// function, except that it sets up nothing until it is watched: the Done
// channel, the timer that closes it and the watch on the parent are made by
// the first call to Done or AfterFunc (http.Transport makes that call; a
// transport that never waits on the context does not). Until then Err reads
// the clock and the parent. context.WithDeadline would arm a timer, and
// allocate four times, for every attempt.
//
// It lives in an attempt, with the request that carries it.
type attemptContext struct {
	parent context.Context
	// The deadline is start+timeout: kept apart so that checking it reads
	// only the monotonic clock and setting it up needs no time arithmetic.
	start   time.Time
	timeout time.Duration

	mu         sync.Mutex
	err        error         // nil until done, then fixed
	done       chan struct{} // made by watch
	timer      *time.Timer
	stopParent func() bool // stops the watch on parent
	afters     []afterFunc // registered by AfterFunc; run when done
	afterSeq   uint64
	// afterBuf holds the first registration (http.Transport makes one per
	// request), so that registering allocates no slice.
	afterBuf [1]afterFunc
}

type afterFunc struct {
	id uint64
	f  func()
}

var _ context.Context = (*attemptContext)(nil)

// attempt is what one attempt needs of its own: its context, and the
// caller's request copied to carry it, together so that they take one
// allocation (none for the first attempt, which lives in the operation).
type attempt struct {
	ctx attemptContext
	req http.Request
}

// init sets the attempt up under parent until start+timeout, sending body, and
// returns its request. The caller's request is not modified.
func (a *attempt) init(req *http.Request, parent context.Context, start time.Time, timeout time.Duration, body io.ReadCloser) *http.Request {
	a.ctx.init(parent, start, timeout)
	// WithContext is inlined and its copy does not escape: the request is
	// copied into a, with no allocation of its own.
	a.req = *req.WithContext(&a.ctx)
	a.req.Body = body
	return &a.req
}

// init sets the context up under parent, with its deadline timeout after
// start.
func (c *attemptContext) init(parent context.Context, start time.Time, timeout time.Duration) {
	c.parent, c.start, c.timeout = parent, start, timeout
}

func (c *attemptContext) Deadline() (time.Time, bool) { return c.start.Add(c.timeout), true }

func (c *attemptContext) Value(key any) any { return c.parent.Value(key) }

func (c *attemptContext) String() string {
	d, _ := c.Deadline()
	return fmt.Sprintf("%v.WithDeadline(%s)", c.parent, d)
}

// Err reports why the context is done, checking the parent and the clock
// itself, so that it is right whether or not anything watches the context.
func (c *attemptContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.check()
	return c.err
}

// Done returns a channel closed when the deadline passes, the parent is
// done or the attempt is released, whichever comes first.
func (c *attemptContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watch()
	return c.done
}

// AfterFunc runs f in its own goroutine once the context is done, as
// context.AfterFunc does. A context derived from this one with
// context.WithCancel (http.Transport derives one per request) registers
// itself here instead of starting a goroutine to wait on Done.
func (c *attemptContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watch()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	c.afterSeq++
	id := c.afterSeq
	if c.afters == nil {
		c.afters = c.afterBuf[:0]
	}
	c.afters = append(c.afters, afterFunc{id: id, f: f})
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.IndexFunc(c.afters, func(a afterFunc) bool { return a.id == id })
		if i < 0 {
			return false
		}
		c.afters = slices.Delete(c.afters, i, i+1)
		return true
	}
}

// release ends the attempt: Err becomes context.Canceled unless the context
// is done already, and the timer and the watch on the parent stop.
func (c *attemptContext) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finish(context.Canceled)
}

// check ends the context if its parent is done or its deadline has
// passed. c.mu is held.
func (c *attemptContext) check() {
	if c.err != nil {
		return
	}
	if err := c.parent.Err(); err != nil {
		c.finish(err)
	} else if c.left() <= 0 {
		c.finish(context.DeadlineExceeded)
	}
}

// watch makes the Done channel and, unless the context is done already,
// the timer for the deadline and the watch on the parent. c.mu is held.
func (c *attemptContext) watch() {
	if c.done != nil {
		return
	}
	c.done = make(chan struct{})
	if c.check(); c.err != nil {
		close(c.done)
		return
	}
	c.timer = time.AfterFunc(c.left(), c.expire)
	if c.parent.Done() != nil {
		c.stopParent = context.AfterFunc(c.parent, c.parentDone)
	}
}

// left is the time until the deadline, read from the monotonic clock.
func (c *attemptContext) left() time.Duration { return c.timeout - time.Since(c.start) }

func (c *attemptContext) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finish(context.DeadlineExceeded)
}

func (c *attemptContext) parentDone() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finish(c.parent.Err())
}

// finish makes the context done with err, unless it is done already.
// c.mu is held.
func (c *attemptContext) finish(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.stopParent != nil {
		c.stopParent()
	}
	for _, a := range c.afters {
		go a.f()
	}
	clear(c.afterBuf[:]) // retain no function
	c.afters = nil
}
