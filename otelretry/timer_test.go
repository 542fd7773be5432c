// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// slowBody delivers n chunks of 1 KiB, sleeping d before each.
type slowBody struct {
	n int
	d time.Duration
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(b.d)
	b.n--
	return copy(p, bytes.Repeat([]byte("u"), min(len(p), 1024))), nil
}

// The attempt timeout bounds the wait for the answer, not the upload
// before it: a PUT whose upload takes ~180ms succeeds in one request under
// a 60ms attempt timeout, and a server that then takes 300ms to answer is
// cut by the attempt timeout after the upload, on each of the two
// attempts.
func TestAttemptTimeoutBoundsTheAnswerNotTheUpload(t *testing.T) {
	var answerDelay atomic.Int64
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		requests.Add(1)
		select {
		case <-time.After(time.Duration(answerDelay.Load())):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rt := otelretry.NewTransport(base, otelretry.WithAttemptTimeout(60*time.Millisecond),
		otelretry.WithDeadline(3*time.Second), otelretry.WithMaxAttempts(2), otelretry.WithIdempotentMethods("PUT"),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	put := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPut, srv.URL, nil)
		req.Body = io.NopCloser(&slowBody{n: 6, d: 30 * time.Millisecond})
		req.ContentLength = 6 * 1024
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(&slowBody{n: 6, d: 30 * time.Millisecond}), nil }
		return rt.RoundTrip(req)
	}
	resp, err := put()
	if err != nil {
		t.Fatalf("slow upload: %v", err)
	}
	resp.Body.Close()
	if n := requests.Load(); n != 1 {
		t.Errorf("slow upload took %d requests, want 1", n)
	}
	answerDelay.Store(int64(300 * time.Millisecond))
	start := time.Now()
	_, err = put()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 1200*time.Millisecond {
		t.Errorf("after %v: err = %v; want the attempt timeout after each upload", time.Since(start), err)
	}
	// The server counts a request once it has read its body, which on a
	// busy machine may be after the cut of the attempt that sent it
	// returned: wait for the count, boundedly.
	for until := time.Now().Add(2 * time.Second); requests.Load() < 3 && time.Now().Before(until); {
		time.Sleep(5 * time.Millisecond)
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("server got %d requests, want 1 + 2", n)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// httptrace hooks that a base calls after RoundTrip returned, twice and
// concurrently, change nothing (run it under -race): the response body
// handed to the caller, which watches the attempt's context, reads to the
// end well past the attempt timeout.
func TestPhasesReportedAfterTheAnswerChangeNothing(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		tr := httptrace.ContextClientTrace(r.Context())
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		ctx := r.Context()
		for range 2 {
			go func() {
				time.Sleep(time.Millisecond)
				if tr != nil {
					if tr.GotConn != nil {
						tr.GotConn(httptrace.GotConnInfo{})
					}
					if tr.WroteHeaders != nil {
						tr.WroteHeaders()
					}
					if tr.WroteRequest != nil {
						tr.WroteRequest(httptrace.WroteRequestInfo{})
					}
				}
			}()
		}
		body := io.NopCloser(readerFunc(func(p []byte) (int, error) {
			select {
			case <-ctx.Done():
				return 0, context.Cause(ctx)
			case <-time.After(80 * time.Millisecond):
			}
			return 0, io.EOF
		}))
		return &http.Response{StatusCode: 200, Body: body, Header: http.Header{}, Request: r}, nil
	})
	rec, opts := tracingProviders()
	rt := otelretry.NewTransport(base, append(opts, otelretry.WithAttemptTimeout(20*time.Millisecond))...)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/x", strings.NewReader("b"))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := io.ReadAll(resp.Body); err != nil {
				t.Errorf("body read after late hooks: %v", err)
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	_ = rec
}

// The attempt timeout cuts only what the policy could retry. A create that
// takes 1s (a chat completion) under a 250ms attempt timeout and a 5s
// deadline is answered, once; a read as slow is cut and retried; and a
// read's own Intent.AttemptTimeout replaces the Transport's.
func TestAttemptTimeoutCutsOnlyWhatCouldBeRetried(t *testing.T) {
	// Each case has a server of its own, closed before the calls are
	// counted: Close waits for every handler, so a request that reached
	// the server late on a loaded machine is counted in its own case, not
	// missed there and counted in the next one.
	newServer := func(calls *atomic.Int32) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			io.Copy(io.Discard, r.Body)
			select {
			case <-time.After(time.Second):
				io.WriteString(w, "done")
			case <-r.Context().Done():
			}
		}))
	}
	cases := []struct {
		name      string
		method    string
		intent    otelretry.Intent
		wantCalls int32
		wantOK    bool
	}{
		{"a slow create is answered, once", http.MethodPost, otelretry.Intent{}, 1, true},
		{"a slow read is cut and retried", http.MethodGet, otelretry.Intent{}, 2, false},
		{"a read sent as POST is cut and retried", http.MethodPost, otelretry.Intent{Repeatable: true}, 2, false},
		{"a read with a longer attempt timeout of its own is answered", http.MethodGet, otelretry.Intent{AttemptTimeout: 2 * time.Second}, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := newServer(&calls)
			defer srv.Close()
			base := srv.Client().Transport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithAttemptTimeout(250*time.Millisecond),
				otelretry.WithDeadline(5*time.Second), otelretry.WithMaxAttempts(2), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))}
			ctx := otelretry.WithIntent(t.Context(), tc.intent)
			req, _ := http.NewRequestWithContext(ctx, tc.method, srv.URL+"/v1/chat/completions", strings.NewReader("{}"))
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			if (err == nil) != tc.wantOK {
				t.Errorf("err = %v, want success %v", err, tc.wantOK)
			}
			base.CloseIdleConnections()
			srv.Close() // waits for the handlers: every request that reached the server is counted
			if got := calls.Load(); got != tc.wantCalls {
				t.Errorf("the server executed %d calls, want %d", got, tc.wantCalls)
			}
		})
	}
}

// A Transport made for a request and dropped (a common misuse) is
// collected once its operations ended: its timer queue's timer, armed for
// a bound that is gone (10 s for a GET at the defaults, the deadline for a
// write), holds it no more. Before, each such Transport stayed in memory,
// about 7 KB, until that timer fired.
func TestADroppedTransportIsCollectedBeforeItsTimerFires(t *testing.T) {
	const n = 50
	var collected atomic.Int32
	for i := range n {
		method := http.MethodGet
		if i%2 == 1 {
			method = http.MethodPost // bound by the deadline, not the attempt timeout
		}
		useAndDrop(t, method, &collected)
	}
	for range 200 {
		runtime.GC()
		if collected.Load() == n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d of %d dropped Transports collected 2 s after their operations ended", collected.Load(), n)
}

// useAndDrop makes a Transport, sends one request through it, and drops
// it, counting it in collected once it is collected.
func useAndDrop(t *testing.T, method string, collected *atomic.Int32) {
	tr := otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	}), otelretry.WithDeadline(time.Hour))
	runtime.AddCleanup(tr, func(c *atomic.Int32) { c.Add(1) }, collected)
	req, _ := http.NewRequest(method, "http://api.test/x", strings.NewReader("x"))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
