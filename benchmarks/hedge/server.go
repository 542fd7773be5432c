// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// phase is a run of consecutive operations served under one distribution.
type phase struct {
	name string
	ops  int
	dist serviceDist
}

// plan is the scenario: its phases, in order, by operation index. Phases
// go by operation rather than by clock so that every configuration serves
// the very same operations under the very same distribution, whatever its
// timing.
type plan []phase

func (p plan) total() int {
	n := 0
	for _, ph := range p {
		n += ph.ops
	}
	return n
}

// at returns the index of the phase that holds operation op (the last
// phase for an index past the end).
func (p plan) at(op int) int {
	end := 0
	for i, ph := range p {
		end += ph.ops
		if op < end {
			return i
		}
	}
	return len(p) - 1
}

// server is the dependency: each request names its operation in its path
// (/op/<index>) and is served for a time drawn from its phase's
// distribution by requestRand. It counts the requests of every operation
// and the service time it actually spent on them, and when the first two
// requests of each operation arrived.
type server struct {
	plan     plan
	seed     uint64
	epoch    time.Time
	requests []atomic.Int32 // per operation
	busy     []atomic.Int64 // per operation, nanoseconds of service spent
	// arrived holds, per operation, when its first and its second request
	// arrived (nanoseconds after epoch): the second is a hedge, and the gap
	// is the delay it was sent after, as the server sees it, whatever the
	// client's own account.
	arrived [2][]atomic.Int64
	stray   atomic.Int64 // requests without a valid operation index
	closing chan struct{}
	srv     *httptest.Server
}

func newHandler(p plan, seed uint64) *server {
	return &server{
		plan:     p,
		seed:     seed,
		epoch:    time.Now(),
		requests: make([]atomic.Int32, p.total()),
		busy:     make([]atomic.Int64, p.total()),
		arrived:  [2][]atomic.Int64{make([]atomic.Int64, p.total()), make([]atomic.Int64, p.total())},
		closing:  make(chan struct{}),
	}
}

// newServer starts the handler on a loopback listener.
func newServer(p plan, seed uint64) *server {
	s := newHandler(p, seed)
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

func (s *server) url(op int) string { return s.srv.URL + "/op/" + strconv.Itoa(op) }

// hedgeAfter is how long after operation op's first request its second
// arrived, and whether it had a second; read it once the server is closed
// (every handler has returned).
func (s *server) hedgeAfter(op int) (time.Duration, bool) {
	if s.requests[op].Load() < 2 {
		return 0, false
	}
	return time.Duration(s.arrived[1][op].Load() - s.arrived[0][op].Load()), true
}

// close releases the handlers still serving and shuts the server down.
func (s *server) close() {
	close(s.closing)
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// serviceTime is what request k of operation op costs, the same for every
// configuration.
func (s *server) serviceTime(op, k int) time.Duration {
	d, _ := s.draw(op, k)
	return d
}

// stalled reports whether request k of operation op stalls.
func (s *server) stalled(op, k int) bool {
	_, stalled := s.draw(op, k)
	return stalled
}

func (s *server) draw(op, k int) (time.Duration, bool) {
	return s.plan[s.plan.at(op)].dist.draw(requestRand(s.seed, op, k))
}

func (s *server) handle(w http.ResponseWriter, r *http.Request) {
	op, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/op/"))
	if err != nil || op < 0 || op >= len(s.requests) {
		s.stray.Add(1)
		w.WriteHeader(http.StatusNotFound)
		return
	}
	at := time.Since(s.epoch)
	k := int(s.requests[op].Add(1))
	if k <= len(s.arrived) {
		s.arrived[k-1][op].Store(int64(at))
	}
	d := s.serviceTime(op, k)
	start := time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	var done bool
	select {
	case <-t.C:
		done = true
	case <-r.Context().Done(): // the client went away: stop counting
	case <-s.closing:
	}
	// A timer fires late, never early: a request served to the end costs
	// its drawn time exactly, one abandoned what had elapsed.
	s.busy[op].Add(int64(min(time.Since(start), d)))
	if done {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok"))
	}
}
