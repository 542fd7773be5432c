// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// backend is a dependency with a fixed capacity: workers that serve one
// request at a time each, for a fixed service time, behind a bounded FIFO
// queue. It refuses a request at once only when the queue is full, and it
// finishes every request it accepted, even one whose client has gone:
// nothing tells a worker that nobody waits for its answer, so abandoned
// work keeps it busy. That is what lets an overload outlast its trigger.
//
// During the trigger [pauseFrom, pauseTo) (offsets from start) only the
// first active workers take requests; the others finish the request they
// hold, then wait for the trigger's end.
type backend struct {
	workers int
	service time.Duration
	bound   int

	start              time.Time
	pauseFrom, pauseTo time.Duration
	active             int

	mu     sync.Mutex
	cond   *sync.Cond
	queue  []*job // FIFO
	closed bool

	closing chan struct{}
	wg      sync.WaitGroup
	// late, for tests: every timer of the workers fires this much late, as
	// on a busy machine.
	late time.Duration

	refused atomic.Int64 // requests refused at once, the queue full
	served  atomic.Int64 // requests a worker finished
	// abandoned counts the requests a worker finished after their client
	// had gone (the request's context was done): their whole service
	// time was spent on an answer nobody read.
	abandoned atomic.Int64
}

// job is one accepted request.
type job struct {
	ctx      context.Context // the request's: done once its client has gone
	enqueued time.Time
	done     chan struct{}
}

func newBackend(workers int, service time.Duration, bound int) *backend {
	b := &backend{workers: workers, service: service, bound: bound, active: workers, closing: make(chan struct{})}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// trigger makes only active workers take requests during [from, to),
// offsets from the start.
func (b *backend) trigger(from, to time.Duration, active int) {
	b.pauseFrom, b.pauseTo, b.active = from, to, active
}

// run starts the workers; the trigger's offsets count from now.
func (b *backend) run() {
	b.start = time.Now()
	for i := range b.workers {
		b.wg.Add(1)
		go b.work(i)
	}
}

// admit queues a request whose client waits on ctx, or refuses it (false)
// when the queue holds bound requests already.
func (b *backend) admit(ctx context.Context) (*job, bool) {
	j := &job{ctx: ctx, enqueued: time.Now(), done: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || len(b.queue) >= b.bound {
		b.refused.Add(1)
		return nil, false
	}
	b.queue = append(b.queue, j)
	// Every waiting worker checks: a paused one must not take the only
	// wake-up.
	b.cond.Broadcast()
	return j, true
}

// paused returns how long worker i must still wait for the trigger's end
// at now, 0 when it may work.
func (b *backend) paused(i int, now time.Time) time.Duration {
	at := now.Sub(b.start)
	if i < b.active || at < b.pauseFrom || at >= b.pauseTo {
		return 0
	}
	return b.pauseTo - at
}

// take returns the next request for worker i, nil once the backend closes.
func (b *backend) take(i int) *job {
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if b.closed {
			return nil
		}
		if wait := b.paused(i, time.Now()); wait > 0 {
			b.mu.Unlock()
			ok := b.sleep(wait)
			b.mu.Lock()
			if !ok {
				return nil
			}
			continue
		}
		if len(b.queue) > 0 {
			j := b.queue[0]
			b.queue[0] = nil
			b.queue = b.queue[1:]
			return j
		}
		b.cond.Wait()
	}
}

// work serves requests one after another. Its clock is the schedule, not
// the timers: a request starts when the worker was free, the request had
// arrived and no trigger held the worker, whichever is last, and ends one
// service time later; the worker sleeps until that end. A timer that fires
// late therefore delays one answer, never the worker's capacity.
func (b *backend) work(i int) {
	defer b.wg.Done()
	var free time.Time
	for {
		j := b.take(i)
		if j == nil {
			return
		}
		start := later(free, j.enqueued)
		if wait := b.paused(i, start); wait > 0 {
			start = start.Add(wait)
		}
		free = start.Add(b.service)
		if d := time.Until(free); d > 0 && !b.sleep(d+b.late) {
			return
		}
		b.served.Add(1)
		if j.ctx.Err() != nil {
			b.abandoned.Add(1)
		}
		close(j.done)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sleep waits d; false when the backend closed first.
func (b *backend) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-b.closing:
		return false
	}
}

// close stops the workers and returns how many requests were still
// queued, never served.
func (b *backend) close() int {
	b.mu.Lock()
	b.closed = true
	queued := len(b.queue)
	b.queue = nil
	b.cond.Broadcast()
	b.mu.Unlock()
	close(b.closing)
	b.wg.Wait()
	return queued
}

// server puts the backend behind HTTP on loopback. Each request names its
// operation in its path (/op/<index>), so the requests of an operation are
// counted whenever they arrive. The handler answers 200 when a worker
// finished the request, 503 at once when the queue is full, and nothing
// once the client has gone (its request context done): the request stays
// queued.
type server struct {
	srv      *httptest.Server
	b        *backend
	attempts []atomic.Int32 // per operation
	stray    atomic.Int64   // requests without a valid operation index
}

func newServer(b *backend, ops int) *server {
	s := &server{b: b, attempts: make([]atomic.Int32, ops)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

func (s *server) url(op int) string { return s.srv.URL + "/op/" + strconv.Itoa(op) }

func (s *server) handle(w http.ResponseWriter, r *http.Request) {
	if i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/op/")); err == nil && i >= 0 && i < len(s.attempts) {
		s.attempts[i].Add(1)
	} else {
		s.stray.Add(1)
	}
	j, ok := s.b.admit(r.Context())
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	select {
	case <-j.done:
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok"))
	case <-r.Context().Done():
	case <-s.b.closing:
	}
}

// close shuts the HTTP server and the backend, and returns how many
// requests were still queued.
func (s *server) close() int {
	s.srv.CloseClientConnections()
	queued := s.b.close()
	s.srv.Close()
	return queued
}
