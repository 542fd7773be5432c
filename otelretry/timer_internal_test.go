// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// newTimer is an attempt timer for an operation with limit left, and the
// context it cancels. Call it inside a synctest bubble.
func newTimer(limit time.Duration) (*attemptTimer, context.Context) {
	ctx, cancel := context.WithCancelCause(context.Background())
	c := newClock(time.Now(), limit, context.Background(), time.Time{})
	at := &attemptTimer{}
	at.init(cancel, &rawBody{}, &c)
	return at, ctx
}

// phaseAt is a phase the base reports, at a time since the send.
type phaseAt struct {
	at time.Duration
	ph wirePhase
}

// The attempt timer bounds each phase of a sent attempt as attemptBound
// says, re-armed as the base reports the phases: with a 100ms attempt
// timeout and 1s left, a request whose cut can be followed up is cut
// 100ms after it is sent, or 100ms after it is written, but never while
// its body is uploaded; one whose cut cannot be followed up is cut only
// while it gets a connection, else at the deadline (an HTTP/2 stream
// awaited after the connection included); and no bound runs past the
// deadline. The cause names the bound that fired: the attempt timeout, or
// the deadline.
func TestAttemptTimerBoundsEachPhase(t *testing.T) {
	const timeout = 100 * time.Millisecond
	cases := []struct {
		name         string
		limit        time.Duration
		cutRetryable bool
		hasBody      bool
		phases       []phaseAt
		wantCut      time.Duration
	}{
		{name: "retryable, no phase reported", limit: time.Second, cutRetryable: true, wantCut: 100 * time.Millisecond},
		{name: "retryable, connection and headers keep the first bound", limit: time.Second, cutRetryable: true,
			phases: []phaseAt{{50 * time.Millisecond, phaseGettingConn}, {60 * time.Millisecond, phaseHeadersOut}}, wantCut: 100 * time.Millisecond},
		{name: "retryable, written: the wait for the answer afresh", limit: time.Second, cutRetryable: true,
			phases: []phaseAt{{50 * time.Millisecond, phaseGettingConn}, {80 * time.Millisecond, phaseWritten}}, wantCut: 180 * time.Millisecond},
		{name: "retryable upload: the body is bounded by the deadline alone", limit: time.Second, cutRetryable: true, hasBody: true,
			phases: []phaseAt{{50 * time.Millisecond, phaseHeadersOut}, {700 * time.Millisecond, phaseWritten}}, wantCut: 800 * time.Millisecond},
		{name: "not retryable, silent base: the deadline", limit: time.Second, wantCut: time.Second},
		{name: "not retryable, getting a connection", limit: time.Second,
			phases: []phaseAt{{10 * time.Millisecond, phaseGettingConn}}, wantCut: 110 * time.Millisecond},
		{name: "not retryable, connection got (an HTTP/2 stream awaited): the deadline", limit: time.Second,
			phases: []phaseAt{{10 * time.Millisecond, phaseGettingConn}, {50 * time.Millisecond, phaseGotConn}}, wantCut: time.Second},
		{name: "retryable, connection got keeps the first bound", limit: time.Second, cutRetryable: true,
			phases: []phaseAt{{10 * time.Millisecond, phaseGettingConn}, {50 * time.Millisecond, phaseGotConn}}, wantCut: 100 * time.Millisecond},
		{name: "not retryable, written: the deadline", limit: time.Second,
			phases:  []phaseAt{{10 * time.Millisecond, phaseGettingConn}, {50 * time.Millisecond, phaseHeadersOut}, {500 * time.Millisecond, phaseWritten}},
			wantCut: time.Second},
		{name: "retryable, less left than the timeout", limit: 60 * time.Millisecond, cutRetryable: true, wantCut: 60 * time.Millisecond},
		{name: "retryable, written close to the deadline", limit: 150 * time.Millisecond, cutRetryable: true,
			phases: []phaseAt{{90 * time.Millisecond, phaseWritten}}, wantCut: 150 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				at, ctx := newTimer(tc.limit)
				at.start(tc.cutRetryable, tc.hasBody, timeout, at.clock.left())
				go func() {
					for _, p := range tc.phases {
						time.Sleep(p.at - time.Since(start))
						at.entered(p.ph)
					}
				}()
				<-ctx.Done()
				if cut := time.Since(start); cut != tc.wantCut {
					t.Errorf("cut at %v, want %v", cut, tc.wantCut)
				}
				want, wantCut := errAttemptTimeout, cutByAttemptTimeout
				if tc.wantCut == tc.limit {
					want, wantCut = errDeadlineCut, cutByDeadline // the cause names the bound that fired
				}
				if cause := context.Cause(ctx); cause != want || !at.timedOut() || at.cut() != wantCut {
					t.Errorf("cause %v, timedOut %v, cut %d; want %v, true, %d", cause, at.timedOut(), at.cut(), want, wantCut)
				}
				at.stop()
			})
		})
	}
}

// At a deadline that is the caller's context's, the timer's cause names
// the caller, whichever of the two timers fires first.
func TestAttemptTimerAtTheCallersDeadlineNamesTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		caller, stop := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer stop()
		ctx, cancel := context.WithCancelCause(context.Background())
		c := newClock(time.Now(), time.Second, caller, time.Time{})
		at := &attemptTimer{}
		at.init(cancel, &rawBody{}, &c)
		at.start(false, false, 100*time.Millisecond, at.clock.left()) // a write: the deadline bounds it
		<-ctx.Done()
		if cause := context.Cause(ctx); cause != (callerCutError{context.DeadlineExceeded}) || at.cut() != cutByDeadline {
			t.Errorf("cause %v, cut %d; want the caller's deadline, cutByDeadline", cause, at.cut())
		}
	})
}

// An answer that comes before the bound stops the timer: answered reports
// no timeout, and the attempt's context is never canceled by it, not even
// by a phase the base reports after the answer.
func TestAttemptTimerAnswerInTimeIsNoTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		at, ctx := newTimer(time.Second)
		at.start(true, false, 100*time.Millisecond, at.clock.left())
		time.Sleep(99 * time.Millisecond)
		if at.answered() {
			t.Error("answered after 99ms of a 100ms bound reports a timeout")
		}
		at.entered(phaseWritten) // a late WroteRequest
		time.Sleep(2 * time.Second)
		if ctx.Err() != nil || at.timedOut() {
			t.Errorf("after the answer: context %v, timedOut %v; want neither", ctx.Err(), at.timedOut())
		}
	})
}

// A timer that fires before the answer cancels the attempt's context with
// errAttemptTimeout, and the answer that comes after it learns so.
func TestAttemptTimerFiringFirstIsATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		at, ctx := newTimer(time.Second)
		at.start(true, false, 100*time.Millisecond, at.clock.left())
		time.Sleep(101 * time.Millisecond)
		if !errors.Is(context.Cause(ctx), errAttemptTimeout) || !at.timedOut() {
			t.Fatalf("after 101ms of a 100ms bound: cause %v, timedOut %v", context.Cause(ctx), at.timedOut())
		}
		if !at.answered() {
			t.Error("an answer after the timer fired is not told it timed out")
		}
	})
}

// The answer and the timer at the same instant: exactly one of them wins,
// and both sides agree on which (the answer is told it timed out exactly
// when the context was canceled for it).
func TestAttemptTimerRaceWithTheAnswerHasOneWinner(t *testing.T) {
	for range 50 {
		synctest.Test(t, func(t *testing.T) {
			at, ctx := newTimer(time.Second)
			at.start(true, false, 100*time.Millisecond, at.clock.left())
			time.Sleep(100 * time.Millisecond)
			timedOut := at.answered()
			synctest.Wait()
			canceled := errors.Is(context.Cause(ctx), errAttemptTimeout)
			if timedOut != canceled || timedOut != at.timedOut() {
				t.Errorf("answered says timed out %v, context canceled for it %v, timedOut() %v", timedOut, canceled, at.timedOut())
			}
		})
	}
}

// Re-armed for a drain, the timer cuts it when its bound passes, with the
// cause it was given, and closes the base's body, which a Read that
// ignores the context waits on; so does a cut through cancelContext (the
// attempt lost its race) while it drains. Drained, the timer cuts and
// closes nothing.
func TestAttemptTimerBoundsTheDrain(t *testing.T) {
	errDrainCut := drainCutError{"503"}
	draining := func(limit time.Duration) (*attemptTimer, context.Context, *countingBody) {
		at, ctx := newTimer(limit)
		body := &countingBody{r: strings.NewReader("")}
		at.raw.hold(body)
		at.start(true, false, 100*time.Millisecond, at.clock.left())
		at.answered()
		return at, ctx, body
	}
	synctest.Test(t, func(t *testing.T) {
		at, ctx, body := draining(time.Second)
		start := time.Now()
		at.draining(30*time.Millisecond, errDrainCut)
		<-ctx.Done()
		synctest.Wait()
		var cut *drainCutError
		if took, cause := time.Since(start), context.Cause(ctx); took != 30*time.Millisecond || !errors.As(cause, &cut) || *cut != errDrainCut || !body.closed {
			t.Errorf("drain cut after %v with %v, body closed %v; want 30ms, the drain's cause, closed", took, cause, body.closed)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		at, ctx, body := draining(time.Second)
		at.draining(30*time.Millisecond, errDrainCut)
		time.Sleep(10 * time.Millisecond)
		at.cancelContext()
		synctest.Wait()
		if ctx.Err() == nil || !body.closed {
			t.Errorf("canceled while draining: context %v, body closed %v; want canceled, closed", ctx.Err(), body.closed)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		at, ctx, body := draining(time.Second)
		at.draining(30*time.Millisecond, errDrainCut)
		time.Sleep(10 * time.Millisecond)
		at.drained()
		time.Sleep(time.Second)
		if ctx.Err() != nil {
			t.Errorf("a drained timer canceled the context: %v", context.Cause(ctx))
		}
		at.cancelContext()
		synctest.Wait()
		if body.closed {
			t.Error("a cut after the drain closed the body")
		}
	})
}

// An attempt that was never sent has a timer that was never started:
// stopping it and canceling its context do nothing, and it never timed
// out; once initialized, cancelContext cancels the attempt's context for
// good.
func TestAttemptTimerNeverStarted(t *testing.T) {
	var zero attemptTimer
	zero.stop()
	zero.cancelContext()
	if zero.timedOut() {
		t.Error("a zero timer reports a timeout")
	}
	synctest.Test(t, func(t *testing.T) {
		at, ctx := newTimer(time.Second)
		at.stop()
		at.cancelContext()
		if !errors.Is(ctx.Err(), context.Canceled) || at.timedOut() {
			t.Errorf("after cancelContext: context %v, timedOut %v; want canceled and false", ctx.Err(), at.timedOut())
		}
	})
}
