// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"sync/atomic"
	"time"
)

// attemptTimer bounds a sent attempt: a time.AfterFunc that cancels the
// attempt's context when the answer does not come in time, re-armed as the
// base reports the attempt's phases (attemptBound says for how long), and
// stopped when the response headers arrive. It bounds the wait for an
// answer, never the body of a response handed to the caller, as
// http.Transport's ResponseHeaderTimeout does; re-armed once more, it
// bounds the drain of a discarded body (see attempt.discard), and a cut
// of that drain closes the base's body.
type attemptTimer struct {
	t      *time.Timer
	cancel context.CancelCauseFunc
	// raw is the base's body of the attempt's response: a cut while it is
	// drained closes it, which unblocks a Read that ignores the context.
	raw *rawBody
	// state resolves the race between the answer and the timer: whichever
	// moves it from timerWaiting first decides whether the attempt timed
	// out.
	state atomic.Int32
	// bound: what the attempt's bounds are read from.
	clock          *clock
	cutRetryable   bool
	hasBody        bool
	attemptTimeout time.Duration
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
)

// init gives the timer what it cancels, closes and reads.
func (at *attemptTimer) init(cancel context.CancelCauseFunc, raw *rawBody, c *clock) {
	at.cancel, at.raw, at.clock = cancel, raw, c
}

// start arms the timer for the attempt just sent, with left before the
// deadline: bounded as attemptBound says for a request whose cut can be
// followed up or not (cutRetryable), with a body or not.
func (at *attemptTimer) start(cutRetryable, hasBody bool, attemptTimeout, left time.Duration) {
	at.cutRetryable, at.hasBody, at.attemptTimeout = cutRetryable, hasBody, attemptTimeout
	d, _ := attemptBound(phaseSent, cutRetryable, hasBody, attemptTimeout, left)
	at.t = time.AfterFunc(d, at.expire)
}

// entered re-arms the timer for the phase the attempt entered, while it
// still waits for its answer. A phase reported late (WroteRequest may come
// after RoundTrip returned) finds the attempt answered and changes
// nothing.
func (at *attemptTimer) entered(ph wirePhase) {
	// Whether the phase re-arms does not depend on the time left: the
	// clock is read only for a phase that does.
	if _, rearm := attemptBound(ph, at.cutRetryable, at.hasBody, at.attemptTimeout, 0); !rearm || at.state.Load() != timerWaiting {
		return
	}
	d, _ := attemptBound(ph, at.cutRetryable, at.hasBody, at.attemptTimeout, at.clock.left())
	at.t.Reset(d)
}

// answered stops the wait and reports whether the timer fired first.
func (at *attemptTimer) answered() (timedOut bool) {
	timedOut = !at.state.CompareAndSwap(timerWaiting, timerAnswered)
	at.t.Stop()
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

// draining bounds a drain: the timer fires after bound, with drainCut.
// Until drained, a cut of the attempt's context through the timer (its
// bound, or cancelContext) also closes the base's body, on a goroutine of
// its own, as context.AfterFunc would.
func (at *attemptTimer) draining(bound time.Duration, drainCut drainCutError) {
	at.drainCut = drainCut
	at.state.Store(timerDraining)
	at.t.Reset(bound)
}

// drained stops the drain's bound: a cut no longer closes the body.
func (at *attemptTimer) drained() {
	at.t.Stop()
	at.state.CompareAndSwap(timerDraining, timerAnswered)
}

// expire is the timer's function: the answer did not come in time, or a
// discarded body did not drain within its bound. Which bound it was, the
// attempt timeout or the deadline, is read from the time left (a timer
// fires at its bound or after it), and the cause names it (see whatCut).
func (at *attemptTimer) expire() {
	end, cut := int32(timerTimedOut), cutByAttemptTimeout
	if at.clock.left() <= 0 {
		end, cut = timerDeadline, cutByDeadline
	}
	if at.state.CompareAndSwap(timerWaiting, end) {
		at.cancel(cutCause(whatCut(cut, nil, at.clock.callerBound), nil))
	} else if at.state.Load() == timerDraining {
		at.cancel(&at.drainCut)
		at.raw.close() // on the timer's own goroutine
	}
}

// cancelContext cancels the attempt's context for good; during a drain, it
// closes the base's body too.
func (at *attemptTimer) cancelContext() {
	if at.cancel != nil {
		at.cancel(nil)
	}
	if at.state.Load() == timerDraining {
		go at.raw.close()
	}
}

// stop stops the timer, if it was started.
func (at *attemptTimer) stop() {
	if at.t != nil {
		at.t.Stop()
	}
}
