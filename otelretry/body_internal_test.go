// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// countingBody counts what was read from it and whether it was closed.
type countingBody struct {
	r      io.Reader
	read   int
	closed bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

func (b *countingBody) Close() error { b.closed = true; return nil }

// bareAttempt is an attempt with a context (of an operation's that cannot
// be canceled) and nothing else.
func bareAttempt() (*attempt, context.Context) {
	c := newClock(time.Now(), time.Hour, context.Background(), time.Time{})
	a := &attempt{setup: &attemptSetup{ctx: context.Background(), clock: &c}}
	ctx, cancel := context.WithCancelCause(context.Background())
	a.timer.init(cancel, &a.held.raw, &c, &timerQueue{})
	a.ctx = attemptContext{Context: ctx, a: a}
	a.timer.start(true, false, time.Hour, 0, c.since())
	a.timer.answered()
	return a, ctx
}

func TestDiscardDrainsAtMostMaxDrainAndCloses(t *testing.T) {
	for _, size := range []int{0, 100, maxDrain - 1, maxDrain, maxDrain + 1, 10 * maxDrain} {
		body := &countingBody{r: strings.NewReader(strings.Repeat("x", size))}
		a, ctx := bareAttempt()
		a.discard(&http.Response{Body: body}, time.Hour)
		released := ctx.Err() == context.Canceled
		if want := min(size, maxDrain); body.read != want || !body.closed || !released {
			t.Errorf("size %d: read %d (want %d), closed %v, released %v", size, body.read, want, body.closed, released)
		}
	}
	for _, resp := range []*http.Response{nil, {}, {Body: http.NoBody}} { // no response, no body, empty body
		a, ctx := bareAttempt()
		a.discard(resp, time.Hour)
		if ctx.Err() == nil {
			t.Errorf("%v: attempt not released", resp)
		}
	}
}

// Without a pause there is no time to drain: the body is closed unread.
func TestDiscardWithoutPauseClosesUnread(t *testing.T) {
	body := &countingBody{r: strings.NewReader("abc")}
	a, _ := bareAttempt()
	a.discard(&http.Response{Body: body}, 0)
	if body.read != 0 || !body.closed {
		t.Fatalf("read %d, closed %v; want 0, true", body.read, body.closed)
	}
}

// drainFloor: a body up to maxDrain gets the floor whether its length is
// known or not; an empty one, and one known to be longer, get none.
func TestDrainFloorCoversSmallBodiesOfAnyLength(t *testing.T) {
	for n, want := range map[int64]time.Duration{-1: drainPause, 0: 0, 1: drainPause, maxDrain: drainPause, maxDrain + 1: 0} {
		if got := drainFloor(n); got != want {
			t.Errorf("drainFloor(%d) = %v, want %v", n, got, want)
		}
	}
}

// Under a zero pause, a discarded body of unknown length (a chunked 503)
// is drained before the retry, not closed unread.
func TestZeroPauseDrainsABodyOfUnknownLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var bodies []*countingBody
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			b := &countingBody{r: strings.NewReader(strings.Repeat("x", maxDrain))}
			bodies = append(bodies, b)
			return &http.Response{StatusCode: http.StatusServiceUnavailable, ContentLength: -1, Body: b, Request: r}, nil
		})
		tr := NewTransport(base, WithBackoff(ConstantBackoff(0)), WithMaxAttempts(2), WithoutBudget(),
			WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(metricnoop.NewMeterProvider()))
		getEach(t, tr, "http://api.test/", 1)
		if len(bodies) != 2 || bodies[0].read != maxDrain || !bodies[0].closed {
			t.Fatalf("the discarded body: read %d of %d, closed %v (%d calls)", bodies[0].read, maxDrain, bodies[0].closed, len(bodies))
		}
	})
}

// The same over loopback, counted in connections: with a zero pause, many
// 503s whose body is up to maxDrain, chunked or not, keep their connection.
// A body of known length above maxDrain is closed unread, which costs its
// connection; an empty one needs no drain. A drain that the scheduler
// holds past the floor (a loaded machine, the race detector) is cut and
// costs its connection too, so a few are allowed.
func TestZeroPauseKeepsTheConnectionsOfSmallErrorBodies(t *testing.T) {
	const operations, attempts = 50, 3
	const discarded = operations * (attempts - 1) // each operation's last 503 is returned, and read to its end
	kept := func(n int) bool { return n <= 1+discarded/10 }
	cases := []struct {
		name    string
		size    int
		chunked bool
		conns   func(got int) bool
	}{
		{"chunked 4 KiB", maxDrain, true, kept},
		{"chunked 100 B", 100, true, kept},
		{"known 4 KiB", maxDrain, false, kept},
		{"empty", 0, false, kept},
		{"known above 4 KiB", maxDrain + 1, false, func(n int) bool { return n == 1+discarded }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := strings.Repeat("x", c.size)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !c.chunked {
					w.Header().Set("Content-Length", strconv.Itoa(c.size))
				}
				w.WriteHeader(http.StatusServiceUnavailable)
				if c.chunked {
					w.(http.Flusher).Flush() // headers out now: no Content-Length
				}
				io.WriteString(w, body)
			}))
			newConns := startCountingConnections(t, srv)
			base := &http.Transport{}
			defer base.CloseIdleConnections()
			tr := NewTransport(base, WithBackoff(ConstantBackoff(0)), WithMaxAttempts(attempts), WithoutBudget(),
				WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(metricnoop.NewMeterProvider()))
			getEach(t, tr, srv.URL, operations)
			n := int(newConns.Load())
			if !c.conns(n) {
				t.Errorf("%d attempts opened %d connections", operations*attempts, n)
			}
			t.Logf("%d attempts opened %d connections", operations*attempts, n)
		})
	}
}

// baseFunc is a base RoundTripper made of a function.
type baseFunc func(*http.Request) (*http.Response, error)

func (f baseFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// deafBody is a response body whose Read ignores every context: it blocks
// until the body is closed, as an in-memory pipe or a custom base's body
// does.
type deafBody struct {
	once   sync.Once
	closed chan struct{}
}

func (b *deafBody) Read([]byte) (int, error) {
	<-b.closed
	return 0, io.ErrClosedPipe
}

func (b *deafBody) Close() error { b.once.Do(func() { close(b.closed) }); return nil }

// A caller that cancels during the drain of a discarded body gets its
// error at once, whatever the body's Read does: the cancellation closes
// the body, and ends the pause. Before, it waited for the drain's bound,
// the pause (6 s).
func TestCancellationEndsTheDrainOfABodyThatIgnoresItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var bodies []*deafBody
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			b := &deafBody{closed: make(chan struct{})}
			bodies = append(bodies, b)
			return &http.Response{StatusCode: http.StatusServiceUnavailable, ContentLength: -1, Body: b, Request: r}, nil
		})
		tr := NewTransport(base, WithBackoff(ConstantBackoff(6*time.Second)), WithDeadline(time.Minute), WithoutBudget(),
			WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(metricnoop.NewMeterProvider()))
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
		if took := time.Since(start); took != 200*time.Millisecond || !errors.Is(err, context.Canceled) {
			t.Errorf("canceled at 200ms during a drain bounded by a 6s pause: returned after %v with %v", took, err)
		}
		if len(bodies) != 1 {
			t.Fatalf("%d calls, want 1", len(bodies))
		}
		select {
		case <-bodies[0].closed:
		default:
			t.Error("the discarded body was left open")
		}
	})
}

// slowCountedBody is a response body that counts its Close calls: its
// Read delivers size bytes, 512 at a time, each after a millisecond (a
// loaded machine's drain), and fails once the body is closed.
type slowCountedBody struct {
	left   int
	closes atomic.Int32
}

func (b *slowCountedBody) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	if b.closes.Load() > 0 {
		return 0, io.ErrClosedPipe
	}
	if b.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), b.left, 512)
	b.left -= n
	return n, nil
}

func (b *slowCountedBody) Close() error {
	b.closes.Add(1)
	return nil
}

// Every response body otelretry discards is closed exactly once, also when
// its drain outlives its bound: a GET answered 503, 503, 200 with 4 KiB
// bodies under ConstantBackoff(0), whose drains take 8ms against the 2ms
// floor, so that the drain's cut closes each body while it is read. Before,
// the cut closed it and the close through its wrappers closed it again
// (seen under load on loopback: 1 to 4 bodies in 150). With otelhttp's
// wrapper above it (a recording tracer) and without (the no-op providers).
func TestDiscardedBodyIsClosedOnceWhenItsDrainIsCut(t *testing.T) {
	for name, tp := range map[string]trace.TracerProvider{
		"through otelhttp": sdktrace.NewTracerProvider(),
		"inject only":      tracenoop.NewTracerProvider(),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var bodies []*slowCountedBody
				base := baseFunc(func(r *http.Request) (*http.Response, error) {
					b := &slowCountedBody{left: maxDrain}
					bodies = append(bodies, b)
					status := http.StatusServiceUnavailable
					if len(bodies) == 3 {
						status = http.StatusOK
					}
					return &http.Response{StatusCode: status, ContentLength: maxDrain, Body: b, Request: r}, nil
				})
				tr := NewTransport(base, WithBackoff(ConstantBackoff(0)), WithoutBudget(),
					WithTracerProvider(tp), WithMeterProvider(metricnoop.NewMeterProvider()))
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				synctest.Wait()
				if len(bodies) != 3 {
					t.Fatalf("%d calls, want 3", len(bodies))
				}
				for i, b := range bodies {
					if n := b.closes.Load(); n != 1 {
						t.Errorf("body %d closed %d times, want once", i+1, n)
					}
				}
			})
		})
	}
}

// Under a zero pause, drainFloor gives a small discarded body drainPause
// (2ms) to drain, so that its connection is kept whatever the pause, and
// whatever ran between the answer and the drain (a Classifier, the
// telemetry): a Classifier that takes 3ms still leaves the 503's body its
// drain. A fix that counted the drain's bound from the answer alone
// closed it unread.
func TestASlowClassifierLeavesASmallBodyItsDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var bodies []*countingBody
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			b := &countingBody{r: strings.NewReader(strings.Repeat("x", 100))}
			bodies = append(bodies, b)
			status := http.StatusServiceUnavailable
			if len(bodies) == 2 {
				status = http.StatusOK
			}
			return &http.Response{StatusCode: status, ContentLength: 100, Body: b, Request: r}, nil
		})
		slow := Classifier(func(Answer) Classification {
			time.Sleep(3 * time.Millisecond) // a Classifier that looks something up
			return Classification{}
		})
		tr := NewTransport(base, WithBackoff(ConstantBackoff(0)), WithMaxAttempts(2), WithoutBudget(),
			WithClassifier(slow),
			WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(metricnoop.NewMeterProvider()))
		getEach(t, tr, "http://api.test/", 1)
		if len(bodies) != 2 {
			t.Fatalf("%d calls, want 2", len(bodies))
		}
		if bodies[0].read != 100 {
			t.Errorf("the discarded 503's body: read %d of 100 before it was closed, want it drained (drainPause floor)", bodies[0].read)
		}
	})
}

// The same on 127.0.0.1, counted in connections: 20 operations, each a 503
// with a 100-byte body then a 200, under a zero pause and a Classifier
// that takes 5ms, keep about one connection (with each 503's body closed
// unread, each retry dialled anew: 21).
func TestASlowClassifierCostsNoRetryItsConnection(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 1 {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, strings.Repeat("x", 100))
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	newConns := startCountingConnections(t, srv)
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	slow := Classifier(func(Answer) Classification {
		time.Sleep(5 * time.Millisecond)
		return Classification{}
	})
	tr := NewTransport(base, WithBackoff(ConstantBackoff(0)), WithMaxAttempts(2), WithoutBudget(), WithClassifier(slow),
		WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(metricnoop.NewMeterProvider()))
	const operations = 20
	getEach(t, tr, srv.URL, operations)
	if got := newConns.Load(); got > 1+operations/10 {
		t.Errorf("%d attempts opened %d connections, want about 1: each discarded 503 was closed unread", 2*operations, got)
	}
}

// startCountingConnections starts srv, closed when the test ends, and
// counts the connections it accepts.
func startCountingConnections(t *testing.T, srv *httptest.Server) *atomic.Int32 {
	var accepted atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return &accepted
}

// getEach sends n GETs of url through tr, one after the other, each body
// read to its end and closed.
func getEach(t *testing.T, tr http.RoundTripper, url string, n int) {
	for range n {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// A chunked body of exactly maxDrain bytes whose last chunk comes after
// its data is drained to its end, within the pause, and keeps its
// connection: the drain stopped at maxDrain bytes without seeing the end,
// and the body was closed before it (one byte less was kept).
func TestAChunkedBodyOfMaxDrainBytesWhoseEndComesLateKeepsItsConnection(t *testing.T) {
	for _, size := range []int{maxDrain - 1, maxDrain} {
		var calls atomic.Int32
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) > 1 {
				return
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			w.(http.Flusher).Flush() // chunked
			io.WriteString(w, strings.Repeat("x", size))
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond) // the last chunk follows
		}))
		newConns := startCountingConnections(t, srv)
		base := &http.Transport{}
		tr := NewTransport(base, WithBackoff(ConstantBackoff(100*time.Millisecond)), WithMaxAttempts(2), WithoutBudget(),
			WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(metricnoop.NewMeterProvider()))
		getEach(t, tr, srv.URL, 1)
		if n := newConns.Load(); calls.Load() != 2 || n != 1 {
			t.Errorf("a chunked %d-byte 503, then its retry: %d calls on %d connections, want 2 on 1", size, calls.Load(), n)
		}
		base.CloseIdleConnections()
	}
}
