// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// keyHeader carries the operation key from the demo client to the flaky
// server, the way a real API would take an order id or idempotency key.
const keyHeader = "X-Demo-Key"

// serverService is the service.name of the flaky server's spans: it is
// another service than the demo's client, as a dependency would be.
const serverService = "flaky-server"

// maxStall bounds how long a handler that simulates a hung dependency
// waits for the client to give up, so the server always stops by itself.
const maxStall = 5 * time.Second

// flakyServer plays the dependency. Its behavior is keyed by the operation
// key so that each scenario sees the same sequence on every run.
type flakyServer struct {
	mu     sync.Mutex
	calls  map[string]int    // per path and key
	writes map[string]int    // writes received, by key
	orders map[string]string // applied writes by key
	// fields are the propagation headers to look for; seen those received.
	fields []string
	seen   map[string]bool
}

func newFlakyServer(propagationFields []string) *flakyServer {
	return &flakyServer{calls: map[string]int{}, writes: map[string]int{}, orders: map[string]string{},
		fields: propagationFields, seen: map[string]bool{}}
}

func (s *flakyServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	})
	mux.HandleFunc("GET /flaky", func(w http.ResponseWriter, r *http.Request) {
		if s.count(r) <= 2 {
			http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "recovered")
	})
	mux.HandleFunc("GET /unavailable", func(w http.ResponseWriter, r *http.Request) {
		sleep(r, 60*time.Millisecond)
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("GET /fail-fast", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("GET /busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "come back later", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		sleep(r, maxStall)
		fmt.Fprintln(w, "too late")
	})
	// The first request of a key would answer after 300 ms; any other at
	// once: a hedge wins.
	mux.HandleFunc("GET /stall-first", func(w http.ResponseWriter, r *http.Request) {
		if s.count(r) == 1 {
			sleep(r, 300*time.Millisecond)
		}
		fmt.Fprintln(w, "read")
	})
	// The write is applied, then the answer is lost: the client times out
	// and must not send it again.
	mux.HandleFunc("POST /orders/apply-then-stall", func(w http.ResponseWriter, r *http.Request) {
		s.apply(r)
		sleep(r, maxStall)
	})
	// The first request of a key is lost before it is applied; a resend is
	// applied at once.
	mux.HandleFunc("POST /orders/lost-first", func(w http.ResponseWriter, r *http.Request) {
		if s.count(r) == 1 {
			io.Copy(io.Discard, r.Body)
			sleep(r, maxStall)
			return
		}
		order := s.apply(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, order)
	})
	mux.HandleFunc("GET /orders/state/{key}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		order, ok := s.orders[r.PathValue("key")]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, order)
	})
	return s.notePropagation(s.countWrites(mux))
}

// notePropagation records which propagation headers arrive, so the report
// shows what OTEL_PROPAGATORS chose on the wire.
func (s *flakyServer) notePropagation(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		for _, f := range s.fields {
			if r.Header.Get(f) != "" {
				s.seen[f] = true
			}
		}
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// propagationSeen returns the propagation headers received, sorted.
func (s *flakyServer) propagationSeen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{}
	for _, f := range s.fields {
		if s.seen[f] {
			out = append(out, f)
		}
	}
	return out
}

// countWrites counts every write on arrival, before any handler decides
// whether to apply it.
func (s *flakyServer) countWrites(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			s.mu.Lock()
			s.writes[r.Header.Get(keyHeader)]++
			s.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

func (s *flakyServer) count(r *http.Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := r.URL.Path + " " + r.Header.Get(keyHeader)
	s.calls[k]++
	return s.calls[k]
}

func (s *flakyServer) apply(r *http.Request) string {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<10))
	key := r.Header.Get(keyHeader)
	order := fmt.Sprintf(`{"key":%q,"order":%s}`, key, strings.TrimSpace(string(body)))
	s.mu.Lock()
	s.orders[key] = order
	s.mu.Unlock()
	return order
}

// posts returns how many writes reached the server for key.
func (s *flakyServer) posts(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes[key]
}

// sleep waits d or until the client goes away.
func sleep(r *http.Request, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}
