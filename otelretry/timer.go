// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"container/heap"
	"context"
	"sync"
	"sync/atomic"
	"time"
	"weak"
)

// attemptTimer bounds a sent attempt: it cancels the attempt's context
// when the answer does not come in time, is re-armed as the base reports
// the attempt's phases (attemptBound says for how long), and is stopped
// when the response headers arrive. Its bound is kept in its Transport's
// timerQueue, or, inside a testing/synctest bubble, by a time.AfterFunc of
// its own (see queueInBubbles). It bounds the wait for an
// answer, never the body of a response handed to the caller, as
// http.Transport's ResponseHeaderTimeout does; re-armed once more, it
// bounds the drain of a discarded body (see attempt.discard), and a cut
// of that drain closes the base's body.
type attemptTimer struct {
	// q is the Transport's queue that keeps the bound; nil when t does.
	q *timerQueue
	// when is the bound's end, guarded by q's lock (tMu's, with a timer
	// of its own); slot its place in q.
	when time.Time
	slot int
	// t is the timer of its own, when q is nil; tMu guards it, armed
	// (it is set and has not fired), and the check of a re-arm (rearm)
	// with it.
	t      *time.Timer
	armed  bool
	tMu    sync.Mutex
	cancel context.CancelCauseFunc
	// raw is the base's body of the attempt's response: a cut while it is
	// drained closes it, which unblocks a Read that ignores the context.
	raw *rawBody
	// state resolves the race between the answer and the timer: whichever
	// moves it from timerWaiting first decides whether the attempt timed
	// out.
	state atomic.Int32
	// deadlineOnly: the attempt's phases no longer move the bound, which
	// stays the operation's deadline (see leaveToDeadline); started: start
	// armed the bound.
	deadlineOnly, started atomic.Bool
	// bound: what the attempt's bounds are read from.
	clock          *clock
	cutRetryable   bool
	hasBody        bool
	attemptTimeout time.Duration
	// checkDelay: WithStateCheckDelay, for a write only a state check
	// resolves (see cuts); 0 otherwise.
	checkDelay time.Duration
	// cutAt is the bound at which the timer cut the attempt, since the
	// operation's start (0: it did not): when the client gave up on it,
	// which its base may return after (see attempt.gaveUp).
	cutAt atomic.Int64
	// drainCut is the cause with which a drain that outlives its bound is
	// cut.
	drainCut drainCutError
}

const (
	timerWaiting  int32 = iota // for the response headers
	timerAnswered              // the headers (or a failure) came in time
	timerTimedOut              // the timer fired first, bound by the attempt timeout
	timerDeadline              // the timer fired first, at the operation's deadline
	timerDraining              // a discarded body is being drained
	timerStopped               // released before its answer (a panic): no later phase re-arms it
)

// init gives the timer what it cancels, closes and reads, and the queue of
// its Transport.
func (at *attemptTimer) init(cancel context.CancelCauseFunc, raw *rawBody, c *clock, q *timerQueue) {
	at.cancel, at.raw, at.clock = cancel, raw, c
	if c.monotonic() || queueInBubbles.Load() {
		at.q = q
	}
}

// arm sets the bound to end d after now, the clock's reading.
func (at *attemptTimer) arm(now, d time.Duration) { at.armIf(now, d, false) }

// rearm is arm for a phase's bound or the deadline of an overheard
// attempt, which other goroutines set: it arms only while the attempt
// still waits for its answer, checked under the lock that answered's
// disarm takes, so that a re-arm never outlives the answer (an attempt
// back in the queue until its deadline) nor replaces a drain's bound.
func (at *attemptTimer) rearm(now, d time.Duration) { at.armIf(now, d, true) }

func (at *attemptTimer) armIf(now, d time.Duration, whileWaiting bool) {
	if at.q != nil {
		at.q.schedule(at, at.clock.at(now+d), whileWaiting)
		return
	}
	at.tMu.Lock()
	defer at.tMu.Unlock()
	if whileWaiting && at.state.Load() != timerWaiting {
		return
	}
	at.when, at.armed = at.clock.at(now+d), true
	if at.t == nil {
		at.t = time.AfterFunc(d, at.expire)
	} else {
		at.t.Reset(d)
	}
}

// disarm takes the bound away, if it is armed. A timer of the attempt's
// own is stopped only while armed: a body handed to the caller is closed
// on any goroutine, maybe outside the testing/synctest bubble the attempt
// was sent in, where stopping the bubble's timer aborts the program.
func (at *attemptTimer) disarm() {
	if at.q != nil {
		at.q.remove(at)
		return
	}
	at.tMu.Lock()
	if at.armed {
		at.t.Stop()
		at.armed = false
	}
	at.tMu.Unlock()
}

// start arms the timer for the attempt sent at now (the clock's reading):
// bounded as attemptBound says for a request whose cut can be followed up
// or not (cutRetryable; checkDelay, see cuts), with a body or not.
func (at *attemptTimer) start(cutRetryable, hasBody bool, attemptTimeout, checkDelay, now time.Duration) {
	at.cutRetryable, at.hasBody, at.attemptTimeout, at.checkDelay = cutRetryable, hasBody, attemptTimeout, checkDelay
	d, _ := attemptBound(phaseSent, at.cuts(at.clock.limit-now), hasBody, attemptTimeout, at.clock.limit-now)
	at.arm(now, d)
	at.started.Store(true) // after arm: leaveToDeadline then finds the bound armed
	if at.deadlineOnly.Load() {
		at.armDeadline()
	}
}

// leaveToDeadline bounds the attempt by the operation's deadline alone from
// now on, whatever phases are reported: they may be another call's (an
// overheard attempt, see wire.overheard), and a phase that shortened the
// bound could cut an upload in progress, or a write whose cut would then be
// read as proof it never left. A phase re-armed at the same time checks
// the flag again after it armed, as start does, so the deadline is the
// bound that stays; before start, nothing is armed.
func (at *attemptTimer) leaveToDeadline() {
	if !at.deadlineOnly.Swap(true) && at.started.Load() {
		at.armDeadline()
	}
}

// armDeadline arms the bound at the operation's deadline while the attempt
// still waits for its answer.
func (at *attemptTimer) armDeadline() {
	if at.state.Load() != timerWaiting {
		return
	}
	if now, ok := at.clock.read(); ok {
		at.rearm(now, at.clock.limit-now)
	}
}

// entered re-arms the timer for the phase the attempt entered, while it
// still waits for its answer. A phase reported late (WroteRequest may come
// after RoundTrip returned) finds the attempt answered and changes
// nothing.
func (at *attemptTimer) entered(ph wirePhase) {
	if at.state.Load() != timerWaiting || at.deadlineOnly.Load() {
		return
	}
	// Whether the phase re-arms does not depend on the time left, but for
	// a write a delayed state check resolves (see cuts): the clock is read
	// only for a phase that does, or for such a write.
	cut := at.cutRetryable
	var now time.Duration
	read := at.checkDelay > 0
	if read {
		var ok bool
		if now, ok = at.clock.read(); !ok {
			return
		}
		cut = at.cuts(at.clock.limit - now)
	}
	if _, rearm := attemptBound(ph, cut, at.hasBody, at.attemptTimeout, 0); !rearm {
		return
	}
	// The base reports phases on goroutines of its own; one of a
	// testing/synctest bubble reads the bubble's fake time, which means
	// nothing to an attempt sent outside it and would arm the Transport's
	// queue years away: that attempt keeps the bound it has.
	if !read {
		var ok bool
		if now, ok = at.clock.read(); !ok {
			return
		}
	}
	d, _ := attemptBound(ph, cut, at.hasBody, at.attemptTimeout, at.clock.limit-now)
	at.rearm(now, d)
	if at.deadlineOnly.Load() {
		at.armDeadline() // leaveToDeadline ran meanwhile and may have armed first
	}
}

// cuts reports whether the attempt timeout may cut the attempt once it was
// written, left before the deadline: where the policy may repeat it, or
// where a state check resolves it and still fits after the cut (a write
// only a check resolves, checkDelay after its cut: WithStateCheckDelay).
// Otherwise a cut would only make the write unknown, and the deadline
// alone bounds its wait for the answer (see attemptBound).
func (at *attemptTimer) cuts(left time.Duration) bool {
	return at.cutRetryable && (at.checkDelay == 0 || at.attemptTimeout+at.checkDelay < left)
}

// answered stops the wait and reports whether the timer fired first.
func (at *attemptTimer) answered() (timedOut bool) {
	timedOut = !at.state.CompareAndSwap(timerWaiting, timerAnswered) && at.state.Load() != timerStopped
	at.disarm()
	return timedOut
}

// timedOut reports whether the timer fired before the answer came.
func (at *attemptTimer) timedOut() bool { return at.cut() != cutByBase }

// cut is what the timer says ended the attempt: the attempt timeout or the
// operation's deadline when it fired before the answer, else cutByBase.
func (at *attemptTimer) cut() attemptCut {
	switch at.state.Load() {
	case timerTimedOut:
		return cutByAttemptTimeout
	case timerDeadline:
		return cutByDeadline
	}
	return cutByBase
}

// draining bounds a drain: the timer fires after bound, with drainCut. It
// runs on the operation's goroutine, whose clock is the attempt's.
// Until drained, a cut of the attempt's context through the timer (its
// bound, or cancelContext) also closes the base's body, on a goroutine of
// its own, as context.AfterFunc would.
func (at *attemptTimer) draining(bound time.Duration, drainCut drainCutError) {
	at.drainCut = drainCut
	at.state.Store(timerDraining)
	at.arm(at.clock.since(), bound)
}

// drained stops the drain's bound: a cut no longer closes the body.
func (at *attemptTimer) drained() {
	at.disarm()
	at.state.CompareAndSwap(timerDraining, timerAnswered)
}

// expire is the timer's function: the answer did not come in time, or a
// discarded body did not drain within its bound. Which bound it was, the
// attempt timeout or the deadline, is read from the time left (a timer
// fires at its bound or after it), and the cause names it (see whatCut).
func (at *attemptTimer) expire() {
	bound, ok := at.due()
	if !ok {
		return
	}
	end, cut := int32(timerTimedOut), cutByAttemptTimeout
	if at.clock.left() <= 0 {
		end, cut = timerDeadline, cutByDeadline
	}
	if at.state.CompareAndSwap(timerWaiting, end) {
		at.cutAt.Store(int64(bound.Sub(at.clock.start)))
		at.cancel(cutCause(whatCut(cut, nil, at.clock.callerBound), nil))
	} else if at.state.Load() == timerDraining {
		at.cancel(&at.drainCut)
		// The base's Close may block (a body that ignores its context may
		// hold a lock its Read holds): on a goroutine of its own, never on
		// the queue's, which cuts the other attempts due with this one.
		go at.raw.closeAlone()
	}
}

// due reports whether the bound the timer fired for is still the
// attempt's: the queue's timer expires what it took out after it released
// its lock, and a timer of the attempt's own runs its function after it
// fired, so the answer, a drain's bound or a re-arm may come between. A
// bound armed since (back in the queue, or ending later) is not due: its
// own firing expires it. Without this, the expiry of the bound before cut
// a drain that had just begun.
func (at *attemptTimer) due() (bound time.Time, ok bool) {
	now := time.Now()
	if at.q != nil {
		at.q.mu.Lock()
		defer at.q.mu.Unlock()
		return at.when, at.slot == 0 && !at.when.After(now)
	}
	at.tMu.Lock()
	defer at.tMu.Unlock()
	if at.when.After(now) {
		return at.when, false // re-armed since: the timer is set again
	}
	at.armed = false
	return at.when, true
}

// cancelContext cancels the attempt's context for good; during a drain, it
// closes the base's body too.
func (at *attemptTimer) cancelContext() {
	if at.cancel != nil {
		at.cancel(nil)
	}
	if at.state.Load() == timerDraining {
		go at.raw.closeAlone()
	}
}

// stop stops the timer, if it was started. A timer still waiting is
// stopped for good: a phase the layer below reports late (WroteRequest
// after RoundTrip returned, or panicked) must not put a released attempt
// back in the queue.
func (at *attemptTimer) stop() {
	at.state.CompareAndSwap(timerWaiting, timerStopped)
	at.disarm()
}

// timerQueue bounds the attempts of one Transport with one runtime timer.
//
// A runtime timer per attempt cost 2 allocations and, on the no-op path,
// about 1 200 instructions per operation (docs/benchmarks.md, "one timer
// per Transport"). The queue keeps its attempts' bounds in a heap and
// re-arms its one timer only for a bound earlier than the one it is armed
// for: with equal attempt timeouts, almost never. An attempt answered in
// time only leaves the heap; the timer, when it fires for a bound that is
// gone, re-arms for the earliest left.
//
// Its lock guards the heap and the arming of its timer alone: the
// attempts whose bounds ended are expired after it is released, and an
// expiry runs no user code on the queue's goroutine (a drain's Close runs
// on a goroutine of its own).
type timerQueue struct {
	mu    sync.Mutex
	heap  timerHeap
	t     *time.Timer
	armed time.Time // when t fires; zero while it is not armed
}

// schedule sets at's bound to end at when, in the queue or moved in it;
// whileWaiting: only if at still waits for its answer (see rearm).
func (q *timerQueue) schedule(at *attemptTimer, when time.Time, whileWaiting bool) {
	q.mu.Lock()
	if whileWaiting && at.state.Load() != timerWaiting {
		q.mu.Unlock()
		return
	}
	at.when = when
	if at.slot == 0 {
		heap.Push(&q.heap, at)
	} else {
		heap.Fix(&q.heap, at.slot-1)
	}
	if q.armed.IsZero() || when.Before(q.armed) {
		q.armed = when
		if q.t == nil {
			q.t = time.AfterFunc(time.Until(when), fireWeakly(weak.Make(q)))
		} else {
			q.t.Reset(time.Until(when))
		}
	}
	q.mu.Unlock()
}

// remove takes at's bound out of the queue, if it is there.
func (q *timerQueue) remove(at *attemptTimer) {
	q.mu.Lock()
	if at.slot != 0 {
		heap.Remove(&q.heap, at.slot-1)
	}
	q.mu.Unlock()
}

// fireWeakly is the runtime timer's function: q's fire, holding q weakly.
// Armed for a bound that is gone, the timer held its Transport, which
// holds the queue, until it fired (10 s for a GET at the defaults, the
// deadline for a write): a Transport made per request and dropped stayed
// in memory that long. A bound in the queue keeps the queue reachable
// through its attempt, which its operation holds; so a queue gone holds no
// bound, and its timer has nothing to fire.
func fireWeakly(q weak.Pointer[timerQueue]) func() {
	return func() {
		if q := q.Value(); q != nil {
			q.fire()
		}
	}
}

// fire is the runtime timer's function: it takes out every bound that
// ended, re-arms for the earliest left, and expires the attempts it took
// out once the lock is released.
func (q *timerQueue) fire() {
	var due []*attemptTimer
	q.mu.Lock()
	now := time.Now()
	for len(q.heap) > 0 && !q.heap[0].when.After(now) {
		due = append(due, heap.Pop(&q.heap).(*attemptTimer))
	}
	q.armed = time.Time{}
	if len(q.heap) > 0 {
		q.armed = q.heap[0].when
		q.t.Reset(q.armed.Sub(now))
	}
	q.mu.Unlock()
	for _, at := range due {
		at.expire()
	}
}

// timerHeap orders the queue's attempts by when their bounds end; each
// attempt keeps its index + 1 in slot (0: not in the queue).
type timerHeap []*attemptTimer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].when.Before(h[j].when) }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot, h[j].slot = i+1, j+1
}

func (h *timerHeap) Push(x any) {
	at := x.(*attemptTimer)
	at.slot = len(*h) + 1
	*h = append(*h, at)
}

func (h *timerHeap) Pop() any {
	old := *h
	at := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	at.slot = 0
	return at
}

// queueInBubbles makes attempts use their Transport's timerQueue inside a
// testing/synctest bubble too; the package's tests set it, so that their
// bubbles exercise the queue. Outside tests a bubble's attempts each arm a
// timer of their own: a Transport may serve several bubbles, or a bubble
// and the world outside it, and a timer armed in one bubble cannot be
// stopped from another (the runtime aborts the program).
var queueInBubbles atomic.Bool
