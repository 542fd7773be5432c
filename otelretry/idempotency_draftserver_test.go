// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// draftFault is what the draft server does with the n-th arrival (from 1)
// of one payload.
type draftFault int

const (
	rvOK        draftFault = iota
	rvLose                 // process as usual (apply or replay), then close the connection unanswered
	rv503Before            // a gateway's 503, nothing reaches the app
	rv503After             // process as usual, then answer 503 (a gateway lost the answer)
	rvHold                 // apply, hold the answer until a 409 was sent for the key
)

// draftServer is a server that behaves as the idempotency-key draft and
// Stripe do: answers stored by key, 409 while in flight, 422 on a payload
// mismatch, replays with Idempotent-Replayed: true. It counts what it
// applied, by payload.
type draftServer struct {
	*httptest.Server
	header string
	script func(payload string, n int) draftFault

	mu       sync.Mutex
	entries  map[string]*draftEntry
	arrivals map[string]int
	applied  map[string]int
	keys     map[string][]string // payload -> keys it arrived under ("" for none)
	released map[string]chan struct{}
	stop     chan struct{}
	// gate, when set, holds an rvHold answer until it is closed, instead
	// of until a 409 was sent.
	gate chan struct{}
	// redirect: a write to a path here is answered (and stored) as a
	// redirect with this status to the path it names.
	redirect       map[string]string
	redirectStatus int
}

type draftEntry struct {
	location string
	payload  string
	done     bool
	status   int
	body     string
}

func newDraftServer(t *testing.T, script func(payload string, n int) draftFault) *draftServer {
	s := &draftServer{header: "Idempotency-Key", script: script, entries: map[string]*draftEntry{},
		arrivals: map[string]int{}, applied: map[string]int{}, keys: map[string][]string{},
		released: map[string]chan struct{}{}, stop: make(chan struct{})}
	s.Server = httptest.NewServer(s)
	t.Cleanup(func() { close(s.stop); s.Server.Close() })
	return s
}

func (s *draftServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	payload := r.Method + " " + r.URL.Path + " " + string(b)
	key := keyOf(r.Header.Get(s.header))
	s.mu.Lock()
	s.arrivals[payload]++
	n := s.arrivals[payload]
	s.keys[payload] = append(s.keys[payload], key)
	s.mu.Unlock()
	fault := rvOK
	if s.script != nil {
		fault = s.script(payload, n)
	}
	if fault == rv503Before {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	status, body, hdr := s.process(key, payload, fault)
	if fault == rvLose {
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
		return
	}
	if fault == rv503After {
		status, body, hdr = http.StatusServiceUnavailable, "", nil
	}
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// process applies or replays the write, as the draft says.
func (s *draftServer) process(key, payload string, fault draftFault) (int, string, map[string]string) {
	s.mu.Lock()
	if key == "" {
		s.applied[payload]++
		s.mu.Unlock()
		return http.StatusCreated, "created", nil
	}
	e := s.entries[key]
	switch {
	case e != nil && e.payload != payload:
		s.mu.Unlock()
		return http.StatusUnprocessableEntity, "key reused", nil
	case e != nil && !e.done:
		if ch := s.released[key]; ch != nil {
			close(ch)
			delete(s.released, key)
		}
		s.mu.Unlock()
		return http.StatusConflict, "in progress", map[string]string{"Retry-After-Ms": "20"}
	case e != nil:
		s.mu.Unlock()
		h := map[string]string{"Idempotent-Replayed": "true"}
		if e.location != "" {
			h["Location"] = e.location
		}
		return e.status, e.body, h
	}
	e = &draftEntry{payload: payload}
	s.entries[key] = e
	s.applied[payload]++
	var wait chan struct{}
	if fault == rvHold && s.gate != nil {
		wait = s.gate
	} else if fault == rvHold {
		wait = make(chan struct{})
		s.released[key] = wait
	}
	s.mu.Unlock()
	if wait != nil {
		select { // a bound, not an assertion: the resend's 409 releases it
		case <-wait:
		case <-s.stop:
		case <-time.After(3 * time.Second):
		}
	}
	path := strings.Fields(payload)[1]
	s.mu.Lock()
	defer s.mu.Unlock()
	if to, ok := s.redirect[path]; ok {
		e.done, e.status, e.body, e.location = true, s.redirectStatus, "", to
		return s.redirectStatus, "", map[string]string{"Location": to}
	}
	e.done, e.status, e.body = true, http.StatusCreated, "created "+payload
	return http.StatusCreated, "created " + payload, nil
}

func (s *draftServer) appliedOf(payload string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied[payload]
}

func (s *draftServer) keysOf(payload string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.keys[payload]...)
}

// draftTry is one try of an SDK-like loop above the Transport.
type draftTry struct {
	status int
	err    error
}

// sdkLoop sends the write up to tries times under one operation id, as a
// naive retryer does (go-retryablehttp's defaults): again after any error,
// a 409 or a 5xx, whatever the method. It returns its tries and the
// operation results.
func sdkLoop(client *http.Client, ctx context.Context, id, url, body string, tries int) ([]draftTry, *otelretry.Results) {
	var res otelretry.Results
	if id != "" {
		ctx = otelretry.WithOperationID(ctx, id)
	}
	ctx = otelretry.WithResults(ctx, &res)
	var out []draftTry
	for range tries {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		resp, err := client.Do(req)
		tr := draftTry{err: err}
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			tr.status = resp.StatusCode
		}
		out = append(out, tr)
		if err == nil && tr.status < 500 && tr.status != http.StatusConflict {
			break
		}
	}
	return out, &res
}

// checkTruth checks one logical write: applied at most once, under one key
// on every arrival, and the Results telling the truth: a 2xx only if it
// was applied; applied but not told success only with an unknown outcome
// reported. The last holds where the resends are admitted: a write the
// server applied and then answered 503 (rv503After), whose resend a small
// budget refuses, ends with that 503, an answer, whose outcome the client
// rightly takes as known (OperationResult.OutcomeUnknown is about a lost
// answer); the scripts run under budgets that admit it.
func checkTruth(t *testing.T, srv *draftServer, path, body string, tries []draftTry, res *otelretry.Results) {
	t.Helper()
	payload := http.MethodPost + " " + path + " " + body
	applied := srv.appliedOf(payload)
	if applied > 1 {
		t.Errorf("%s: applied %d times (keys %q, tries %v)", body, applied, srv.keysOf(payload), tries)
	}
	keys := srv.keysOf(payload)
	for _, k := range keys {
		if k == "" || k != keys[0] {
			t.Errorf("%s: keys on the wire %q, want one key on every arrival", body, keys)
			break
		}
	}
	last := tries[len(tries)-1]
	lastRes, ok := res.Last()
	if !ok {
		t.Errorf("%s: no result reported", body)
		return
	}
	if got := len(res.Operations()); got != len(tries) {
		t.Errorf("%s: %d results for %d tries", body, got, len(tries))
	}
	success := last.err == nil && last.status/100 == 2
	if success && applied != 1 {
		t.Errorf("%s: told %d, applied %d times", body, last.status, applied)
	}
	if success && lastRes.OutcomeUnknown {
		t.Errorf("%s: told %d with the stored answer, but Results.Last says the outcome is unknown: %+v", body, last.status, lastRes)
	}
	if !success && applied == 1 && !res.OutcomeUnknown() {
		t.Errorf("%s: applied, last try %v/%d, and no result says the outcome is unknown: %+v", body, last.err, last.status, res.Operations())
	}
	if !success && applied == 0 && lastRes.OutcomeUnknown && last.err != nil && errors.Is(last.err, otelretry.ErrOutcomeUnknown) {
		// Allowed: unknown is not a lie; noted only.
		t.Logf("%s: not applied, reported unknown", body)
	}
}

// draftScript gives write i (its body "w-<i>") a fault pattern by i; a
// body cut before its number (an upload the client cut) is write 0's.
func draftScript(payload string, n int) draftFault {
	var i int
	if at := strings.LastIndex(payload, "w-"); at >= 0 {
		fmt.Sscanf(payload[at:], "w-%d", &i)
	}
	switch i % 8 {
	case 1:
		return pick(n == 1, rvLose)
	case 2:
		return pick(n == 1, rv503Before)
	case 3:
		return pick(n == 1, rv503After)
	case 4:
		return pick(n <= 2, rvLose)
	case 5:
		return pick(n <= 4, rvLose) // beyond one operation's attempts: the loop above repeats it
	case 6:
		return pick(n == 1, rvHold)
	case 7:
		return pick(n == 2, rvLose)
	}
	return rvOK
}

func pick(cond bool, f draftFault) draftFault {
	if cond {
		return f
	}
	return rvOK
}

// 32 keyed writes in flight together, each under its own operation id
// with an SDK-like loop above, against a draft server that loses answers,
// answers 503 before and after applying, and holds one answer so that the
// resend meets 409: each write is applied at most once, under one key,
// and what the caller is told (its last try, Results) is the truth.
func Test32KeyedWritesInFlightAreAppliedAtMostOnce(t *testing.T) {
	for name, opts := range map[string][]otelretry.Option{
		"no budget":      {otelretry.WithoutBudget()},
		"default budget": nil,
		"small buffer":   {otelretry.WithoutBudget(), otelretry.WithBodyBuffer(64, 256)},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newDraftServer(t, draftScript)
			all := append([]otelretry.Option{otelretry.WithMaxAttempts(3), otelretry.WithAttemptTimeout(100 * time.Millisecond)}, opts...)
			client, _ := keyClient(t, all...)
			tries, results := writesInFlight(client, t.Context(), func(i int) string { return fmt.Sprintf("op-%d", i) }, srv.URL+"/orders")
			for i := range tries {
				checkTruth(t, srv, "/orders", fmt.Sprintf("w-%d", i), tries[i], results[i])
				if testing.Verbose() && i < 8 {
					t.Logf("w-%d: applied %d, tries %v, results %+v", i, srv.appliedOf("POST /orders w-"+fmt.Sprint(i)), tries[i], results[i].Operations())
				}
			}
		})
	}
}

// The same 32 writes through two stacked Transports (a library's under
// yours), keys on the outer or both. (Keys on the inner alone are not
// reused across the loop's tries: the inner's operations are below the
// outer's boundary and take none of the caller's WithOperationID, as
// docs/layers.md says: "Keep writes' retries and keys in one layer".)
func Test32KeyedWritesThroughStackedTransports(t *testing.T) {
	keys := otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())
	for name, layers := range map[string][2][]otelretry.Option{
		"keys on both":  {{keys}, {keys}},
		"keys on outer": {{keys}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newDraftServer(t, draftScript)
			base := http.DefaultTransport.(*http.Transport).Clone()
			t.Cleanup(base.CloseIdleConnections)
			common := []otelretry.Option{otelretry.WithMaxAttempts(3), otelretry.WithAttemptTimeout(100 * time.Millisecond),
				otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithDeadline(5 * time.Second)}
			inner := otelretry.NewTransport(base, append(append([]otelretry.Option{}, common...), layers[1]...)...)
			outer := otelretry.NewTransport(inner, append(append([]otelretry.Option{}, common...), layers[0]...)...)
			client := &http.Client{Transport: outer}
			tries, results := writesInFlight(client, t.Context(), func(i int) string { return fmt.Sprintf("op-%d", i) }, srv.URL+"/orders")
			for i := range tries {
				checkTruth(t, srv, "/orders", fmt.Sprintf("w-%d", i), tries[i], results[i])
				if testing.Verbose() && i < 8 {
					t.Logf("w-%d: applied %d, tries %v, results %+v", i, srv.appliedOf("POST /orders w-"+fmt.Sprint(i)), tries[i], results[i].Operations())
				}
			}
		})
	}
}

// A job: the 32 different writes in flight together under one operation
// id, each with its own loop above.
func Test32WritesOfOneJobInFlight(t *testing.T) {
	srv := newDraftServer(t, draftScript)
	client, _ := keyClient(t, otelretry.WithMaxAttempts(3), otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithoutBudget())
	job := otelretry.WithOperationID(t.Context(), "job-1")
	tries, results := writesInFlight(client, job, func(int) string { return "" }, srv.URL+"/orders")
	for i := range tries {
		checkTruth(t, srv, "/orders", fmt.Sprintf("w-%d", i), tries[i], results[i])
	}
}

// A keyed write whose body cannot be had again (unknown length, or the
// buffer off) loses its answer: it cannot be resent, and its outcome is
// unknown.
func TestAnUnreplayableKeyedWriteThatLostItsAnswerIsUnknown(t *testing.T) {
	for name, c := range map[string]struct {
		opts   []otelretry.Option
		length int64
	}{
		"unknown length":             {nil, -1},
		"known length, buffer off":   {[]otelretry.Option{otelretry.WithBodyBuffer(0, 0)}, 3},
		"over the per-request limit": {[]otelretry.Option{otelretry.WithBodyBuffer(2, 1024)}, 3},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newDraftServer(t, func(_ string, n int) draftFault { return pick(n == 1, rvLose) })
			client, _ := keyClient(t, append([]otelretry.Option{otelretry.WithoutBudget()}, c.opts...)...)
			var res otelretry.Results
			ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "op-1"), &res)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders", io.NopCloser(strings.NewReader("w-1")))
			req.ContentLength = c.length
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			last, _ := res.Last()
			t.Logf("err %v; result %+v; applied %d", err, last, srv.appliedOf("POST /orders w-1"))
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) || !last.OutcomeUnknown {
				t.Errorf("err %v, Results %+v: want the outcome unknown", err, last)
			}
		})
	}
}

// A loop above repeats a keyed write under one operation id while the
// server still processes the first try's request: the repeat is answered
// 409 (the draft: a request with the key is in progress) until its
// attempts run out. The write is being applied; Results.Last, which
// Results.OutcomeUnknown's doc says to read when the layer resends under
// one key, must not say its outcome is known.
func TestARepeatAnswered409UntilItsAttemptsRunOutIsUnknown(t *testing.T) {
	srv := newDraftServer(t, func(_ string, n int) draftFault { return pick(n == 1, rvHold) })
	srv.gate = make(chan struct{})
	defer close(srv.gate)
	client, _ := keyClient(t, otelretry.WithMaxAttempts(2), otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithoutBudget())
	var res otelretry.Results
	ctx := otelretry.WithResults(otelretry.WithOperationID(t.Context(), "order-42"), &res)
	for try := 1; try <= 2; try++ {
		status, _, err := send(t, client, ctx, http.MethodPost, srv.URL+"/orders", "w-1")
		t.Logf("try %d: %d, %v", try, status, err)
	}
	ops := res.Operations()
	for i, o := range ops {
		t.Logf("result %d: %s %s status %d unknown %v", i+1, o.Outcome, o.Reason, o.StatusCode, o.OutcomeUnknown)
	}
	if n := srv.appliedOf("POST /orders w-1"); n != 1 {
		t.Fatalf("applied %d, want 1 (in progress)", n)
	}
	last, _ := res.Last()
	if last.StatusCode == http.StatusConflict && !last.OutcomeUnknown {
		t.Errorf("the last try ended %s (%s) on a 409, the key's first request still in progress, with OutcomeUnknown false: %+v", last.Outcome, last.Reason, last)
	}
}

// 32 keyed writes in flight together that the server redirects (307 and
// 308, stored by key as any answer) to where it applies them, the next
// hop's answers lost, 503'd or held as above, a loop above each.
func Test32RedirectedKeyedWritesInFlight(t *testing.T) {
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			srv := newDraftServer(t, func(payload string, n int) draftFault {
				if strings.Contains(payload, " /orders ") {
					return rvOK
				}
				return draftScript(payload, n)
			})
			srv.redirect, srv.redirectStatus = map[string]string{"/orders": "/v2/orders"}, code
			client, _ := keyClient(t, otelretry.WithMaxAttempts(3), otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithoutBudget())
			tries, results := writesInFlight(client, t.Context(), func(i int) string { return fmt.Sprintf("op-%d", i) }, srv.URL+"/orders")
			for i := range tries {
				body := fmt.Sprintf("w-%d", i)
				payload := "POST /v2/orders " + body
				applied := srv.appliedOf(payload)
				last := tries[i][len(tries[i])-1]
				if applied > 1 {
					t.Errorf("%s: applied %d times, keys %q", body, applied, srv.keysOf(payload))
				}
				if keys := srv.keysOf(payload); len(slices.Compact(slices.Sorted(slices.Values(keys)))) != 1 {
					t.Errorf("%s: the second hop went out under keys %q, want one", body, keys)
				}
				if last.err == nil && last.status == http.StatusCreated && applied != 1 {
					t.Errorf("%s: told 201, applied %d", body, applied)
				}
				if !(last.err == nil && last.status == http.StatusCreated) && applied == 1 && !results[i].OutcomeUnknown() {
					t.Errorf("%s: applied, told %v/%d, no unknown outcome: %+v", body, last.err, last.status, results[i].Operations())
				}
				if testing.Verbose() && i < 8 {
					t.Logf("%s: applied %d, tries %v, keys %d, results %+v", body, applied, tries[i], len(srv.keysOf(payload)), results[i].Operations())
				}
			}
		})
	}
}

// writesInFlight sends 32 different writes ("w-0" to "w-31") to url
// together, released at once, each under its own loop above (sdkLoop, 4
// tries) and the operation id idOf gives it ("" for ctx's own): the tries
// and the Results of each.
func writesInFlight(client *http.Client, ctx context.Context, idOf func(i int) string, url string) ([][]draftTry, []*otelretry.Results) {
	const n = 32
	var wg sync.WaitGroup
	start := make(chan struct{})
	tries := make([][]draftTry, n)
	results := make([]*otelretry.Results, n)
	for i := range n {
		wg.Go(func() {
			<-start
			tries[i], results[i] = sdkLoop(client, ctx, idOf(i), url, fmt.Sprintf("w-%d", i), 4)
		})
	}
	close(start)
	wg.Wait()
	return tries, results
}
