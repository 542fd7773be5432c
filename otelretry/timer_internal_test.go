// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// newTimer is an attempt timer for an operation with limit left, and the
// context it cancels, its bound kept in a queue of its own. Call it inside
// a synctest bubble.
func newTimer(limit time.Duration) (*attemptTimer, context.Context) {
	return newTimerIn(limit, &timerQueue{})
}

// newTimerIn is newTimer with the queue q; with a nil q the timer arms a
// runtime timer of its own, as it does in a bubble outside the tests.
func newTimerIn(limit time.Duration, q *timerQueue) (*attemptTimer, context.Context) {
	ctx, cancel := context.WithCancelCause(context.Background())
	c := newClock(time.Now(), limit, context.Background(), time.Time{})
	at := &attemptTimer{}
	at.init(cancel, &rawBody{}, &c, q)
	at.q = q
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
// its body is uploaded, nor after a connection net/http gets again to
// resend it; one whose cut cannot be followed up is cut only
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
		{name: "retryable upload, then a connection got again to resend: the attempt timeout afresh", limit: time.Second, cutRetryable: true, hasBody: true,
			phases: []phaseAt{{50 * time.Millisecond, phaseHeadersOut}, {60 * time.Millisecond, phaseGettingConnAgain}}, wantCut: 160 * time.Millisecond},
		{name: "retryable, headers, then a connection got again to resend: the attempt timeout afresh", limit: time.Second, cutRetryable: true,
			phases: []phaseAt{{50 * time.Millisecond, phaseHeadersOut}, {70 * time.Millisecond, phaseGettingConnAgain}}, wantCut: 170 * time.Millisecond},
		{name: "retryable upload, then a connection asked for with no resend shown (a side call's): the deadline still", limit: time.Second, cutRetryable: true, hasBody: true,
			phases: []phaseAt{{50 * time.Millisecond, phaseHeadersOut}, {60 * time.Millisecond, phaseGettingConn}}, wantCut: time.Second},
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
		for _, queued := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/queued=%v", tc.name, queued), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					start := time.Now()
					var q *timerQueue
					if queued {
						q = &timerQueue{}
					}
					at, ctx := newTimerIn(tc.limit, q)
					at.start(tc.cutRetryable, tc.hasBody, timeout, 0, at.clock.since())
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
		at.init(cancel, &rawBody{}, &c, &timerQueue{})
		at.start(false, false, 100*time.Millisecond, 0, at.clock.since()) // a write: the deadline bounds it
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
		at.start(true, false, 100*time.Millisecond, 0, at.clock.since())
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
		at.start(true, false, 100*time.Millisecond, 0, at.clock.since())
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
			at.start(true, false, 100*time.Millisecond, 0, at.clock.since())
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
		at.raw.hold(body, requestText{})
		at.start(true, false, 100*time.Millisecond, 0, at.clock.since())
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

// The package's tests run their bubbles' attempts on their Transports'
// timer queues, the path every attempt outside a bubble takes.
func init() { queueInBubbles.Store(true) }

// Many bounds in one queue, armed, moved and taken out in any order: each
// attempt still bounded is cut at its own bound, to the instant, and none
// taken out is cut; the queue's runtime timer is left unarmed at the end.
func TestTimerQueueCutsEachBoundAtItsTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &timerQueue{}
		rng := rand.New(rand.NewPCG(1, 2))
		start := time.Now()
		type bounded struct {
			at        *attemptTimer
			ctx       context.Context
			cutAt     time.Duration // 0: answered in time
			cutSeenAt time.Duration
		}
		all := make([]*bounded, 200)
		for i := range all {
			at, ctx := newTimerIn(time.Hour, q)
			b := &bounded{at: at, ctx: ctx}
			all[i] = b
			bound := time.Duration(1+rng.IntN(1000)) * time.Millisecond
			at.start(true, false, bound, 0, at.clock.since())
			b.cutAt = bound
			switch rng.IntN(3) {
			case 0: // answered before its bound
				answerAt := time.Duration(rng.Int64N(int64(bound)))
				b.cutAt = 0
				go func() {
					time.Sleep(answerAt)
					if at.answered() {
						t.Errorf("attempt %d: answered at %v before its bound %v, reported timed out", i, answerAt, bound)
					}
				}()
			case 1: // written before its bound: bounded afresh from then
				wroteAt := time.Duration(rng.Int64N(int64(bound)))
				b.cutAt = wroteAt + bound
				go func() {
					time.Sleep(wroteAt)
					at.entered(phaseWritten)
				}()
			}
		}
		var wg sync.WaitGroup
		for _, b := range all {
			if b.cutAt == 0 {
				continue
			}
			wg.Go(func() {
				<-b.ctx.Done()
				b.cutSeenAt = time.Since(start)
			})
		}
		wg.Wait()
		time.Sleep(3 * time.Second) // long after every bound
		for i, b := range all {
			switch {
			case b.cutAt == 0 && b.ctx.Err() != nil:
				t.Errorf("attempt %d answered in time was cut", i)
			case b.cutAt != 0 && b.cutSeenAt != b.cutAt:
				t.Errorf("attempt %d cut at %v, want %v", i, b.cutSeenAt, b.cutAt)
			case b.cutAt != 0 && context.Cause(b.ctx) != errAttemptTimeout:
				t.Errorf("attempt %d cut with %v, want the attempt timeout", i, context.Cause(b.ctx))
			}
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		if len(q.heap) != 0 || !q.armed.IsZero() {
			t.Errorf("queue left with %d bounds, armed for %v; want none", len(q.heap), q.armed)
		}
	})
}

// An attempt answered in time leaves the queue at once, whatever its place
// in the heap: the queue holds only the attempts still waiting, not every
// attempt sent within the last attempt timeout.
func TestTimerQueueAnsweredLeavesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &timerQueue{}
		var ats []*attemptTimer
		for i := range 50 {
			at, _ := newTimerIn(time.Hour, q)
			at.start(true, false, time.Duration(50-i)*time.Second, 0, at.clock.since())
			ats = append(ats, at)
		}
		waiting := map[*attemptTimer]bool{}
		for i, at := range ats {
			if i%3 == 0 {
				waiting[at] = true
				continue
			}
			at.answered()
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		if len(q.heap) != len(waiting) {
			t.Fatalf("queue holds %d bounds, want the %d still waiting", len(q.heap), len(waiting))
		}
		for i, at := range q.heap {
			if !waiting[at] || at.slot != i+1 {
				t.Errorf("heap[%d]: waiting %v, slot %d", i, waiting[at], at.slot)
			}
			if i > 0 && q.heap[(i-1)/2].when.After(at.when) {
				t.Errorf("heap[%d] ends before its parent", i)
			}
		}
	})
}

// Outside the package's tests, an attempt inside a testing/synctest bubble
// arms a timer of its own and every other attempt takes the Transport's
// queue: one Transport serves two bubbles and the world outside them, each
// attempt cut at its own bound, where a queue whose timer was armed in one
// bubble would abort the program when touched from another.
func TestTimerQueueStaysOutOfBubbles(t *testing.T) {
	queueInBubbles.Store(false)
	t.Cleanup(func() { queueInBubbles.Store(true) })
	var rt *Transport
	queued := -1 // the queue's length while the last attempt waited
	rt = NewTransport(baseFunc(func(r *http.Request) (*http.Response, error) {
		rt.sender.timers.mu.Lock()
		queued = len(rt.sender.timers.heap)
		rt.sender.timers.mu.Unlock()
		<-r.Context().Done() // never answers: the attempt's bound cuts it
		return nil, r.Context().Err()
	}), WithAttemptTimeout(50*time.Millisecond), WithMaxAttempts(1))
	cutAfter := func(t *testing.T) time.Duration {
		req, err := http.NewRequest(http.MethodGet, "http://api.example.test/", nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
			t.Fatal("an attempt that never got an answer succeeded")
		}
		return time.Since(start)
	}
	for i := range 2 {
		synctest.Test(t, func(t *testing.T) {
			if d := cutAfter(t); d != 50*time.Millisecond {
				t.Errorf("bubble %d: cut after %v, want the attempt timeout, 50ms", i, d)
			}
			if queued != 0 {
				t.Errorf("bubble %d: the Transport's queue held %d bounds while the attempt waited, want 0 (a timer of its own)", i, queued)
			}
		})
	}
	if d := cutAfter(t); d < 50*time.Millisecond {
		t.Errorf("outside the bubbles: cut after %v, before the attempt timeout", d)
	}
	if queued != 1 {
		t.Errorf("outside the bubbles: the queue held %d bounds while the attempt waited, want 1", queued)
	}
	if len(rt.sender.timers.heap) != 0 {
		t.Errorf("the queue holds %d bounds after every attempt ended", len(rt.sender.timers.heap))
	}
}

// A phase that a goroutine of a testing/synctest bubble reports for an
// attempt sent outside it leaves the Transport's queue alone: read on the
// bubble's fake clock, it would arm the queue's one timer years away, and
// every other attempt of the Transport would lose its bound.
func TestTimerQueueIgnoresABubblesClock(t *testing.T) {
	queueInBubbles.Store(false)
	t.Cleanup(func() { queueInBubbles.Store(true) })
	q := &timerQueue{}
	a, _ := newTimerIn(time.Hour, q)
	a.start(true, false, time.Hour, 0, a.clock.since())
	synctest.Test(t, func(t *testing.T) { a.entered(phaseWritten) })
	b, bctx := newTimerIn(time.Hour, q)
	b.start(true, false, 50*time.Millisecond, 0, b.clock.since())
	select {
	case <-bctx.Done():
	case <-time.After(5 * time.Second):
		t.Errorf("an attempt with a 50ms bound not cut after 5s")
	}
	a.stop()
}

// Attempts due together are cut together: one whose discarded body's
// Close blocks (a body that ignores its context may block there too) does
// not hold up another due at the same instant, and an expiry runs outside
// the queue's lock (one that called back into the queue would deadlock).
func TestTimerQueueExpiresEachDueAttemptOnItsOwn(t *testing.T) {
	// On the real clock: a deadlock on the queue's lock is no durable block
	// to a synctest bubble, whose time would then never reach the wait's
	// end.
	q := &timerQueue{}
	release := make(chan struct{})
	defer close(release)
	draining, _ := newTimerIn(time.Hour, q)
	draining.raw.hold(&blockingClose{release: release}, requestText{})
	draining.start(true, false, time.Hour, 0, draining.clock.since())
	draining.answered()
	draining.draining(20*time.Millisecond, drainCutError{"503"})

	// Due at the same instant, after the drain in the heap (pushed
	// later), its cancel calls back into the queue, as a context's
	// cancel may reach code that does.
	other := &attemptTimer{}
	other.init(func(error) {}, &rawBody{}, draining.clock, q)
	cut := make(chan struct{})
	waiting := &attemptTimer{}
	waiting.init(func(error) { q.remove(other); close(cut) }, &rawBody{}, draining.clock, q)
	waiting.start(true, false, time.Hour, 0, draining.clock.since())
	q.schedule(waiting, draining.when, false) // the very instant the drain's bound ends, below it in the heap
	select {
	case <-cut:
	case <-time.After(2 * time.Second):
		t.Errorf("an attempt due with a blocked drain not cut after 2s")
	}
}

// blockingClose is a body whose Close blocks until release is closed.
type blockingClose struct{ release chan struct{} }

func (b *blockingClose) Read([]byte) (int, error) { return 0, io.EOF }
func (b *blockingClose) Close() error             { <-b.release; return nil }

// The queue's runtime timer is re-armed only for a bound earlier than the
// one it is armed for: attempts sent one after another with the same
// attempt timeout, each answered in time, leave it armed for the first
// bound, which is what spares each attempt a runtime timer of its own.
func TestTimerQueueRearmsOnlyForAnEarlierBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &timerQueue{}
		first, _ := newTimerIn(time.Hour, q)
		first.start(true, false, 100*time.Millisecond, 0, first.clock.since())
		armed := q.armed
		for range 20 {
			time.Sleep(time.Millisecond)
			at, _ := newTimerIn(time.Hour, q)
			at.start(true, false, 100*time.Millisecond, 0, at.clock.since())
			at.answered()
			if q.armed != armed {
				t.Fatalf("armed for %v after a later bound, want %v still", q.armed, armed)
			}
		}
		early, _ := newTimerIn(time.Hour, q)
		early.start(true, false, 10*time.Millisecond, 0, early.clock.since())
		if !q.armed.Equal(early.when) {
			t.Errorf("armed for %v after an earlier bound, want %v", q.armed, early.when)
		}
		first.stop()
		early.stop()
	})
}

// A re-arm (a phase's bound, an overheard attempt's deadline), which other
// goroutines make, never outlives the answer: after answered it leaves
// the attempt out of the queue, or its own timer stopped, and during a
// drain the drain's bound stays. A re-arm that checked the state, then
// armed, could land after answered's disarm: the attempt was back in the
// queue until its deadline, or a stalled drain bounded by the deadline.
func TestARearmNeverOutlivesTheAnswer(t *testing.T) {
	for _, queued := range []bool{true, false} {
		var q *timerQueue
		if queued {
			q = &timerQueue{}
		}
		at, _ := newTimerIn(time.Hour, q)
		at.start(true, false, time.Minute, 0, at.clock.since())
		at.answered()
		at.rearm(at.clock.since(), time.Minute)
		if queued && at.slot != 0 {
			t.Error("queue: an attempt answered, then re-armed, is in the queue")
		}
		if !queued && at.t.Stop() {
			t.Error("own timer: an attempt answered, then re-armed, has its timer running")
		}
		if !queued {
			continue
		}
		at.draining(time.Second, drainCutError{})
		bound := at.when
		at.rearm(at.clock.since(), time.Hour)
		if at.when != bound {
			t.Errorf("a drain's bound moved by a re-arm: %v, want %v", at.when, bound)
		}
		at.drained()
	}
}

// leaveToDeadline on another goroutine, together with the answer, or with
// start on a timer of its own: the attempt is never left in the queue
// after its answer, and the timer of its own is made once (run it under
// -race). 2 000 rounds of each, both goroutines released together.
func TestLeaveToDeadlineRacesTheAnswerAndTheStart(t *testing.T) {
	together := func(a, b func()) {
		var ready atomic.Int32
		var wg sync.WaitGroup
		wg.Go(func() {
			ready.Add(1)
			for ready.Load() < 2 {
				runtime.Gosched()
			}
			a()
		})
		ready.Add(1)
		for ready.Load() < 2 {
			runtime.Gosched()
		}
		b()
		wg.Wait()
	}
	for range 2000 {
		q := &timerQueue{}
		at, _ := newTimerIn(time.Hour, q)
		at.start(true, false, time.Minute, 0, at.clock.since())
		together(at.leaveToDeadline, func() { at.answered() })
		q.mu.Lock()
		inQueue := at.slot != 0
		q.mu.Unlock()
		if inQueue {
			t.Fatal("an attempt answered while it was overheard is still in the queue")
		}
		own, _ := newTimerIn(time.Hour, nil)
		together(own.leaveToDeadline, func() { own.start(true, false, time.Minute, 0, own.clock.since()) })
		own.stop()
	}
}

// An expiry that runs after its bound was replaced is stale and cuts
// nothing: the queue's timer expires the attempts it took out after it
// released its lock, and an attempt's own timer runs its function after it
// fired, so the answer and a drain's bound, or a phase's later bound, can
// come between. The stale expiry cut a drain bounded by an hour at once
// (its connection closed), or an attempt whose bound had just moved.
func TestAStaleExpiryCutsNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		queued bool
		// between is what comes between the firing and the expiry.
		between func(at *attemptTimer)
	}{
		{"queue: the answer, then a drain", true, func(at *attemptTimer) {
			at.answered()
			at.draining(time.Hour, drainCutError{})
		}},
		{"own timer: the answer, then a drain", false, func(at *attemptTimer) {
			at.answered()
			at.draining(time.Hour, drainCutError{})
		}},
		{"queue: a phase's later bound", true, func(at *attemptTimer) {
			at.rearm(at.clock.since(), time.Hour)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q *timerQueue
			if tc.queued {
				q = &timerQueue{}
			}
			at, ctx := newTimerIn(time.Hour, q)
			at.start(true, false, time.Hour, 0, at.clock.since())
			if tc.queued { // fire took it out: its bound ended
				q.mu.Lock()
				heap.Remove(&q.heap, at.slot-1)
				at.when = time.Now()
				q.mu.Unlock()
			}
			tc.between(at)
			at.expire() // the expiry of the bound before
			if err := context.Cause(ctx); err != nil {
				t.Errorf("a stale expiry cut the attempt: %v", err)
			}
			at.drained()
			at.stop()
		})
	}
}

// A base that panics after it wrote the request, while the layer below it
// (net/http's writeLoop, an HTTP/2 stream) reports the write only after
// its RoundTrip returned, as net/http may ("WroteRequest may come after
// RoundTrip returned", timer.go). The panic abandons the attempt
// (abandon -> release -> timer.stop), but its timer is still timerWaiting:
// the late phase re-armed it, and the attempt, with its operation, sat in
// the Transport's timer queue until the attempt timeout passed, long
// after RoundTrip panicked. A stopped timer stays stopped.
func TestALatePhaseAfterABasePanicLeavesTheQueueEmpty(t *testing.T) {
	var late *httptrace.ClientTrace
	rt := NewTransport(baseFunc(func(r *http.Request) (*http.Response, error) {
		late = httptrace.ContextClientTrace(r.Context())
		late.GetConn("api.test:80")
		late.GotConn(httptrace.GotConnInfo{})
		late.WroteHeaders()
		panic("base boom")
	}), WithAttemptTimeout(time.Hour), WithDeadline(2*time.Hour))
	req, err := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the base's panic was swallowed")
			}
		}()
		rt.RoundTrip(req)
	}()
	queued := func() int {
		rt.sender.timers.mu.Lock()
		defer rt.sender.timers.mu.Unlock()
		return len(rt.sender.timers.heap)
	}
	if n := queued(); n != 0 {
		t.Fatalf("right after the panic the queue holds %d bounds", n)
	}
	late.WroteRequest(httptrace.WroteRequestInfo{}) // the layer below reports its write late
	if n := queued(); n != 0 {
		t.Errorf("after a late WroteRequest the queue holds %d bounds of an attempt abandoned by a panic, want 0", n)
		rt.sender.timers.mu.Lock()
		for _, at := range rt.sender.timers.heap {
			t.Logf("bound ends in %v", time.Until(at.when).Round(time.Minute))
		}
		rt.sender.timers.mu.Unlock()
	}
}
