// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// server is the dependency: it applies writes (POST /writes/<i>) and
// deduplicates them by idempotency key as the IETF draft says
// (draft-ietf-httpapi-idempotency-key-header): it stores each answer by
// key with the request it answered (method, path and body); answers a
// request that comes again with the key by the stored answer, saying so
// (Idempotent-Replayed: true), 409 while the key's first request is still
// being processed (with a Retry-After until its answer, whole seconds) and 422 when the key comes with
// another payload. A write without a key is applied each time it comes.
// Each request meets the fault its header names (see network): a 503
// before anything is applied, an answer lost (the connection closed) or
// slow once it was.
type server struct {
	slow time.Duration

	http *http.Server
	addr string
	wg   sync.WaitGroup // the listener's goroutine

	mu        sync.Mutex
	applied   map[int]int // applications per write
	keys      map[string]*stored
	received  int
	stray     int // requests for no write, or not POST
	conflicts int // 409s sent
}

// stored is what the server keeps of a key: the request it first came
// with, and its answer once there is one.
type stored struct {
	request string
	done    bool
	status  int
	body    string
	// answerBy is when the key's first request is answered: a 409's
	// Retry-After lasts until then, so that one wait finds the answer
	// stored (lostAnswerResends counts no second 409).
	answerBy time.Time
}

func newServer(slow time.Duration) (*server, error) {
	s := &server{slow: slow, applied: map[int]int{}, keys: map[string]*stored{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.addr = l.Addr().String()
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Go(func() { _ = s.http.Serve(l) })
	return s, nil
}

// url is the URL of write i.
func (s *server) url(i int) string { return "http://" + s.addr + writesPath + strconv.Itoa(i) }

// close waits for the requests being served (slow answers sleep on after
// their client gave up), then stops the server.
func (s *server) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.http.Shutdown(ctx)
	s.wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// keyOf reads the key a request carries: an sf-string unquoted, or a bare
// value; "" without one.
func keyOf(h http.Header) string {
	v := h.Get("Idempotency-Key")
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(v[1 : len(v)-1])
	}
	return v
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	write, ok := writeOf(r.URL.Path)
	s.mu.Lock()
	s.received++
	if !ok || r.Method != http.MethodPost {
		s.stray++
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	s.mu.Unlock()
	f := parseFault(r.Header.Get(faultHeader))
	if f == faultUnavailable {
		w.WriteHeader(http.StatusServiceUnavailable) // before anything is applied
		return
	}
	key := keyOf(r.Header)
	if key == "" {
		status, answer := s.apply(write, f)
		s.respond(w, f, status, answer)
		return
	}
	request := r.Method + " " + r.URL.Path + " " + string(body)
	s.mu.Lock()
	e := s.keys[key]
	switch {
	case e != nil && e.request != request:
		s.mu.Unlock()
		s.respond(w, f, http.StatusUnprocessableEntity, "key reused with another payload")
		return
	case e != nil && !e.done:
		s.conflicts++
		wait := time.Until(e.answerBy)
		s.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int((wait+time.Second-1)/time.Second))))
		s.respond(w, f, http.StatusConflict, "a request with this key is in progress")
		return
	case e != nil:
		s.mu.Unlock()
		w.Header().Set("Idempotent-Replayed", "true")
		s.respond(w, f, e.status, e.body)
		return
	}
	e = &stored{request: request, answerBy: time.Now()}
	if f == faultSlow {
		e.answerBy = e.answerBy.Add(s.slow)
	}
	s.keys[key] = e
	s.mu.Unlock()
	status, answer := s.apply(write, f)
	s.mu.Lock()
	e.done, e.status, e.body = true, status, answer
	s.mu.Unlock()
	s.respond(w, f, status, answer)
}

// apply applies write, at once, and returns its answer once fault allows:
// a slow answer comes after the slow delay, whatever the client does
// meanwhile.
func (s *server) apply(write int, f fault) (int, string) {
	s.mu.Lock()
	s.applied[write]++
	n := s.applied[write]
	s.mu.Unlock()
	if f == faultSlow {
		time.Sleep(s.slow)
	}
	return http.StatusCreated, "write " + strconv.Itoa(write) + " applied (" + strconv.Itoa(n) + ")"
}

// respond sends an answer, or loses it as fault says: the connection is
// closed with no answer.
func (s *server) respond(w http.ResponseWriter, f fault, status int, body string) {
	if f == faultLost {
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// applications returns how many times write was applied.
func (s *server) applications(write int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied[write]
}

// conflictsSent returns how many 409s the server sent.
func (s *server) conflictsSent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conflicts
}
