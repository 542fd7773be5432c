// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// stalledBody is a request body whose Read blocks until it is closed (an
// io.Pipe never written), counting its closes.
type stalledBody struct {
	*io.PipeReader
	closes atomic.Int32
}

func newStalledBody(t *testing.T) *stalledBody {
	r, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	return &stalledBody{PipeReader: r}
}

func (b *stalledBody) Close() error {
	b.closes.Add(1)
	return b.PipeReader.Close()
}

// readsWholeBody is a base that, as net/http's HTTP/1 client does, returns
// only once its Read of the request body returned, whatever its context
// says (golang/go#78555).
var readsWholeBody = roundTripFunc(func(r *http.Request) (*http.Response, error) {
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		r.Body.Close()
		return nil, err
	}
	r.Body.Close()
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
})

// docs/time-and-bodies.md: a body otelretry does not buffer that stalls
// ends at the operation's deadline, though the base reads it whatever its
// context says: the cut closes it, once, and the write, whose outcome is
// unknown, is not sent again. Under synctest, a Read that stayed blocked
// would leave every goroutine blocked, and the test would fail.
func TestAStalledBodyNotBufferedEndsAtTheDeadline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stallN int // the attempt whose body stalls
	}{
		{"the caller's body, chunked", 1},
		{"a copy from the caller's GetBody", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				stalled := newStalledBody(t)
				calls := 0
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					calls++
					return readsWholeBody(r)
				})
				rt := otelretry.NewTransport(base, otelretry.WithoutBudget(), otelretry.WithDeadline(300*time.Millisecond),
					otelretry.WithIdempotentMethods(http.MethodPut), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/x", stalled)
				if err != nil {
					t.Fatal(err)
				}
				if tc.stallN == 2 {
					req.Body = io.NopCloser(&onceReader{s: "payload"})
					req.ContentLength = -1
					req.GetBody = func() (io.ReadCloser, error) { return stalled, nil }
				}
				resp, err := rt.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
					t.Fatalf("answered %d, want the deadline", resp.StatusCode)
				}
				if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("err = %v, want the outcome unknown", err)
				}
				if calls != tc.stallN {
					t.Errorf("%d calls, want %d", calls, tc.stallN)
				}
				if n := stalled.closes.Load(); n != 1 {
					t.Errorf("the stalled body closed %d times, want once", n)
				}
			})
		})
	}
}

// onceReader yields s, then EOF.
type onceReader struct {
	s    string
	done bool
}

func (r *onceReader) Read(p []byte) (int, error) {
	if r.done {
		return 0, io.EOF
	}
	r.done = true
	return copy(p, r.s), nil
}

// The same over net/http's own HTTP/1 client on 127.0.0.1, whose write of a
// chunked body holds RoundTrip past its context until the Read returns:
// the POST ends at otelretry's deadline, outcome unknown, the body closed
// once. If it did not, the watchdog unblocks the Read after a minute, so
// that the test ends by itself.
func TestAStalledChunkedWriteOverNetHTTPEndsAtTheDeadline(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	rt := otelretry.NewTransport(base, otelretry.WithoutBudget(), otelretry.WithDeadline(200*time.Millisecond))
	stalled := newStalledBody(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, stalled)
	if err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(time.Minute, func() { stalled.CloseWithError(errors.New("watchdog: RoundTrip held past the deadline")) })
	defer watchdog.Stop()
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("answered %d, want the deadline", resp.StatusCode)
	}
	if !watchdog.Stop() {
		t.Fatalf("RoundTrip returned only once the watchdog closed the body: %v", err)
	}
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("err = %v, want the outcome unknown", err)
	}
	if n := requests.Load(); n > 1 {
		t.Errorf("the server handled %d requests", n)
	}
	if n := stalled.closes.Load(); n != 1 {
		t.Errorf("the body closed %d times, want once", n)
	}
}
