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

// mode is what the server does with a request in a phase.
type mode int

const (
	modeServe  mode = iota // admit up to the phase's concurrency limit, 503 above it
	modeReject             // every request: 503 at once
	modeHang               // every request: no answer until the client gives up (bounded)
)

func (m mode) String() string {
	switch m {
	case modeReject:
		return "503"
	case modeHang:
		return "hang"
	default:
		return "serve"
	}
}

// phase is one step of the scripted scenario.
type phase struct {
	name  string
	dur   time.Duration
	mode  mode
	limit int // concurrent requests served (modeServe)
}

// script is the scenario on a clock shared by the server and the clients.
type script struct {
	phases []phase
	start  time.Time
}

func (s *script) total() time.Duration {
	var t time.Duration
	for _, p := range s.phases {
		t += p.dur
	}
	return t
}

// at returns the index of the phase that holds offset d (the last phase for
// offsets past the end, the first for negative ones).
func (s *script) at(d time.Duration) int {
	var end time.Duration
	for i, p := range s.phases {
		end += p.dur
		if d < end {
			return i
		}
	}
	return len(s.phases) - 1
}

// phaseStart returns the offset at which phase i begins.
func (s *script) phaseStart(i int) time.Duration {
	var t time.Duration
	for _, p := range s.phases[:i] {
		t += p.dur
	}
	return t
}

// server is a dependency with a fixed capacity: in a serving phase it runs
// at most limit requests at once, each for a fixed service time, and answers
// 503 at once above that. Every request that reaches the handler is counted
// against the operation named in its path (/op/<index>), so attempts are
// attributed to the phase in which their operation started.
type server struct {
	srv     *httptest.Server
	sc      *script
	service time.Duration
	hangCap time.Duration
	// rejectCost: a request over the limit still holds capacity this long
	// before its 503 (0: rejection is free, the default).
	rejectCost time.Duration
	// verdict: a refusal is a 500 with X-Should-Retry: true, which only
	// the server's verdict makes retryable, rather than a 503.
	verdict  bool
	attempts []atomic.Int32 // per operation
	stray    atomic.Int64   // requests without a valid operation index
	inflight atomic.Int64   // requests being served (modeServe)
	closing  chan struct{}
}

func newServer(sc *script, ops int, service, hangCap time.Duration) *server {
	s := &server{
		sc:       sc,
		service:  service,
		hangCap:  hangCap,
		attempts: make([]atomic.Int32, ops),
		closing:  make(chan struct{}),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

func (s *server) url(op int) string { return s.srv.URL + "/op/" + strconv.Itoa(op) }

// close ends hanging handlers and shuts the server down.
func (s *server) close() {
	close(s.closing)
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// refuse answers a request the server will not serve.
func (s *server) refuse(w http.ResponseWriter) {
	if s.verdict {
		w.Header().Set("X-Should-Retry", "true")
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
}

func (s *server) handle(w http.ResponseWriter, r *http.Request) {
	if i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/op/")); err == nil && i >= 0 && i < len(s.attempts) {
		s.attempts[i].Add(1)
	} else {
		s.stray.Add(1)
	}
	p := s.sc.phases[s.sc.at(time.Since(s.sc.start))]
	switch p.mode {
	case modeReject:
		s.refuse(w)
		return
	case modeHang:
		t := time.NewTimer(s.hangCap)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-t.C:
			w.WriteHeader(http.StatusGatewayTimeout)
		case <-s.closing:
		}
		return
	}
	if s.inflight.Add(1) > int64(p.limit) {
		if s.rejectCost > 0 {
			time.Sleep(s.rejectCost)
		}
		s.inflight.Add(-1)
		s.refuse(w)
		return
	}
	defer s.inflight.Add(-1)
	t := time.NewTimer(s.service)
	defer t.Stop()
	select {
	case <-t.C:
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok"))
	case <-r.Context().Done():
	case <-s.closing:
	}
}
