// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// stalledBody is a request body whose Read blocks until it is closed (an
// io.Pipe never written), counting its closes.
type stalledBody struct {
	*io.PipeReader
	closes atomic.Int32
	closed chan struct{} // closed at the first Close
}

func newStalledBody(t *testing.T) *stalledBody {
	r, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	return &stalledBody{PipeReader: r, closed: make(chan struct{})}
}

func (b *stalledBody) Close() error {
	if b.closes.Add(1) == 1 {
		close(b.closed)
	}
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
				err = failsAtTheDeadline(t, rt, req)
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
	srv, requests, base := readingServer(t)
	rt := otelretry.NewTransport(base, otelretry.WithoutBudget(), otelretry.WithDeadline(200*time.Millisecond))
	stalled := newStalledBody(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, stalled)
	if err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(time.Minute, func() { stalled.CloseWithError(errors.New("watchdog: RoundTrip held past the deadline")) })
	defer watchdog.Stop()
	err = failsAtTheDeadline(t, rt, req)
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

// A copy a layer below asks for to resend the request by itself (net/http's
// HTTP/1 client after a failed write to a reused connection) is closed by
// the cut too, when it stalls: the base here does what net/http does, and
// reads the copy whatever its context says.
func TestAStalledCopyOfAResendBelowEndsAtTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stalled := newStalledBody(t)
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			trace := httptrace.ContextClientTrace(r.Context())
			trace.GetConn("api.test:80")
			trace.GotConn(httptrace.GotConnInfo{Reused: true})
			r.Body.Close()
			trace.WroteRequest(httptrace.WroteRequestInfo{Err: &net.OpError{Op: "write", Net: "tcp", Err: errors.New("broken pipe")}})
			body, err := r.GetBody()
			if err != nil {
				return nil, err
			}
			trace.GetConn("api.test:80")
			trace.GotConn(httptrace.GotConnInfo{})
			trace.WroteHeaders()
			_, err = io.Copy(io.Discard, body)
			body.Close()
			trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
			if err != nil {
				return nil, err
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		rt := otelretry.NewTransport(base, otelretry.WithoutBudget(), otelretry.WithDeadline(300*time.Millisecond),
			otelretry.WithIdempotentMethods(http.MethodPut), otelretry.WithMaxAttempts(1))
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/x", io.NopCloser(&onceReader{s: "payload"}))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = -1
		req.GetBody = func() (io.ReadCloser, error) { return stalled, nil }
		failsAtTheDeadline(t, rt, req)
		if n := stalled.closes.Load(); n != 1 {
			t.Errorf("the stalled copy closed %d times, want once", n)
		}
	})
}

// panickingStalledBody stalls its Read until it is closed; its Close closes
// the pipe, then panics.
type panickingStalledBody struct{ *io.PipeReader }

func (b panickingStalledBody) Close() error {
	b.PipeReader.Close()
	panic("request body Close panicked")
}

// The cut closes a stalled body on a goroutine of otelretry's own: a Close
// that panics there goes to otel.Handle, by its type only, instead of
// ending the process (docs/telemetry.md).
func TestAPanickingCloseAtTheCutGoesToOtelHandle(t *testing.T) {
	handled := captureOtelErrors(t)
	synctest.Test(t, func(t *testing.T) {
		r, w := io.Pipe()
		t.Cleanup(func() { w.Close() })
		rt := otelretry.NewTransport(readsWholeBody, otelretry.WithoutBudget(), otelretry.WithDeadline(300*time.Millisecond))
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/x", panickingStalledBody{r})
		if err != nil {
			t.Fatal(err)
		}
		failsAtTheDeadline(t, rt, req)
	})
	errs := handled()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "the request body's Close") || strings.Contains(errs[0].Error(), "request body Close panicked") {
		t.Errorf("otel.Handle got %v; want the panic, by its type only", errs)
	}
}

// blockingCloseBody is a caller's body whose Read blocks until the pipe is
// written or closed and whose Close blocks until released.
type blockingCloseBody struct {
	*io.PipeReader
	release chan struct{}
	closes  atomic.Int32
}

func (b *blockingCloseBody) Close() error {
	b.closes.Add(1)
	<-b.release
	return nil
}

// A base that, as net/http's HTTP/2 client does, returns once the request's
// context ends and closes the body later on a goroutine of its own: the
// cut's Close of the body, which blocks, is not waited for, so the
// deadline still bounds RoundTrip (virtual time: 4 s past the deadline).
func TestABlockingCloseAtTheCutHoldsNoRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			go func() { time.Sleep(time.Millisecond); r.Body.Close() }()
			return nil, context.Cause(r.Context())
		})
		rt := otelretry.NewTransport(base, otelretry.WithoutBudget(), otelretry.WithDeadline(time.Second))
		pr, pw := io.Pipe()
		defer pw.Close()
		body := &blockingCloseBody{PipeReader: pr, release: make(chan struct{})}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/x", body)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			resp, err := rt.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			done <- err
		}()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		select {
		case err := <-done:
			if err == nil {
				t.Error("RoundTrip succeeded, want the deadline")
			}
		default:
			t.Errorf("RoundTrip still held 4 s past its deadline, in the body's Close (closes %d)", body.closes.Load())
		}
		close(body.release)
		synctest.Wait()
		if n := body.closes.Load(); n != 1 {
			t.Errorf("the body closed %d times, want once", n)
		}
	})
}

// docs/time-and-bodies.md: a caller's body being read into the buffer
// holds its reservation until its Read returns; one whose Close does not
// end a Read that stalls (an io.NopCloser over a pipe) keeps it past the
// operation's end, and a later body finds the memory taken (memory_cap),
// until the Read returns.
func TestAStalledReadIntoTheBufferHoldsItsReservationUntilItReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		rt := otelretry.NewTransport(readsWholeBody, otelretry.WithTracerProvider(tp), otelretry.WithBodyBuffer(1000, 1000),
			otelretry.WithIdempotentMethods(http.MethodPut), otelretry.WithoutBudget(), otelretry.WithMaxAttempts(2))
		put := func(ctx context.Context, body io.Reader) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://api.test/x", io.NopCloser(body))
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = 1000
			if resp, err := rt.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		pr, pw := io.Pipe()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		put(ctx, pr) // ends at its deadline, its Read still stalled
		put(t.Context(), strings.NewReader(strings.Repeat("x", 1000)))
		if got := notBufferedReasons(spans); len(got) != 1 || got[0] != string(attrs.BodyBufferMemoryCap) {
			t.Fatalf("with the stalled Read: body_not_buffered %v, want one %s", got, attrs.BodyBufferMemoryCap)
		}
		pw.CloseWithError(errors.New("the source gave up"))
		synctest.Wait()
		put(t.Context(), strings.NewReader(strings.Repeat("x", 1000)))
		if got := notBufferedReasons(spans); len(got) != 1 {
			t.Errorf("once the Read returned: body_not_buffered %v, want none more", got)
		}
	})
}

// A server that answers before it read the body: net/http's HTTP/1 client
// returns the answer and goes on writing the body, so a streamed body that
// stalls would be read for ever; the cut stays set after an answer, and
// the operation's end (the answer read and closed) closes it, once. Over
// net/http on 127.0.0.1; a watchdog unblocks the Read after a minute, so
// that the test ends by itself.
func TestAStalledBodyAfterAnEarlyAnswerIsClosedAtTheOperationsEnd(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			c.Close()
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		served <- c
	}()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	rt := otelretry.NewTransport(base, otelretry.WithoutBudget(), otelretry.WithDeadline(200*time.Millisecond))
	stalled := newStalledBody(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+ln.Addr().String()+"/x", stalled)
	if err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(time.Minute, func() { stalled.CloseWithError(errors.New("watchdog")) })
	defer watchdog.Stop()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	defer (<-served).Close()
	<-stalled.closed
	if !watchdog.Stop() {
		t.Fatal("the body was closed by the watchdog alone")
	}
	if n := stalled.closes.Load(); n != 1 {
		t.Errorf("the body closed %d times, want once", n)
	}
}

// failsAtTheDeadline sends req through rt and returns its error, failing
// the test on an answer.
func failsAtTheDeadline(t *testing.T, rt http.RoundTripper, req *http.Request) error {
	t.Helper()
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("answered %d, want the deadline", resp.StatusCode)
	}
	return err
}

// A body a PrepareAttemptFunc put in place of the caller's (with its
// GetBody, as its godoc asks) is closed by the cut as the caller's is: a
// stalled one ends at the deadline, closed once.
func TestAStalledPreparedBodyEndsAtTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stalled := newStalledBody(t)
		rt := otelretry.NewTransport(readsWholeBody, otelretry.WithoutBudget(), otelretry.WithDeadline(100*time.Millisecond),
			otelretry.WithPrepareAttempt(func(req *http.Request, _ int) error {
				req.Body, req.ContentLength = stalled, int64(len("payload"))
				req.GetBody = func() (io.ReadCloser, error) { return stalled, nil }
				return nil
			}))
		ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true})
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://api.test/x", strings.NewReader("payload"))
		if err != nil {
			t.Fatal(err)
		}
		failsAtTheDeadline(t, rt, req)
		if n := stalled.closes.Load(); n != 1 {
			t.Errorf("the prepared body closed %d times, want once", n)
		}
	})
}

// A PrepareAttemptFunc that puts a body in place and then panics: the
// panic reaches the caller, and both bodies, the caller's and the hook's,
// are closed once (no call took either).
func TestABodyPutInPlaceByAPanickingHookIsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prepared := &countingBody{r: strings.NewReader("prepared")}
		rt := otelretry.NewTransport(readsWholeBody, otelretry.WithoutBudget(),
			otelretry.WithPrepareAttempt(func(req *http.Request, _ int) error {
				req.Body, req.ContentLength = prepared, int64(len("prepared"))
				panic("the hook panics after replacing the body")
			}))
		caller := &countingBody{r: strings.NewReader("payload")}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/x", caller)
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the hook's panic did not reach the caller")
				}
			}()
			rt.RoundTrip(req)
		}()
		synctest.Wait()
		if c, p := caller.closes.Load(), prepared.closes.Load(); c != 1 || p != 1 {
			t.Errorf("the caller's body closed %d times, the hook's %d; want once each", c, p)
		}
	})
}
