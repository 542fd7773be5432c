// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"
)

// closePanics is a base's response body whose Read blocks until it is
// closed, as a body that ignores its context does, and whose Close
// panics once it has unblocked the Read.
type closePanics struct {
	closed chan struct{}
	once   sync.Once
}

func (b *closePanics) Read([]byte) (int, error) {
	<-b.closed
	return 0, io.EOF
}

func (b *closePanics) Close() error {
	b.once.Do(func() { close(b.closed) })
	panic("the base's body Close: boom")
}

// TestBodyClosePanicOnOwnGoroutineIsReported: a retried answer's body
// that does not drain within its bound is closed on a goroutine of
// otelretry's own, where a panic of the base's Close would end the
// process: it is reported through otel.Handle, and the operation goes on
// to its retry.
func TestBodyClosePanicOnOwnGoroutineIsReported(t *testing.T) {
	errs := captureOtelErrors(t)
	calls := 0
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		if calls == 1 {
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, ContentLength: -1,
				Body: &closePanics{closed: make(chan struct{})}, Request: r}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	rt := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
		otelretry.WithAttemptTimeout(50*time.Millisecond))
	resp, err := rt.RoundTrip(get(t, context.Background(), "http://api.test/items"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls != 2 {
		t.Fatalf("status %d after %d calls, want the retry's 200", resp.StatusCode, calls)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(errs()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := errs(); len(got) != 1 || !strings.Contains(got[0].Error(), "a response body's Close panicked") ||
		!strings.Contains(got[0].Error(), "(a string;") || strings.Contains(got[0].Error(), "boom") {
		t.Fatalf("otel.Handle got %v, want the Close's panic named by its type only", got)
	}
}

// stallThenPanic is a request body of a known length whose Read stalls
// until the body is closed, then panics with a value that names a URL
// with its password.
type stallThenPanic struct {
	closed chan struct{}
	once   sync.Once
}

func (b *stallThenPanic) Read([]byte) (int, error) {
	<-b.closed
	panic("read of s3://AKIAEXAMPLE:SECRET@bucket/object failed")
}

func (b *stallThenPanic) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// TestAStrayPanicsValueNeverReachesOtelHandle: a panic of user code on a
// goroutine of otelretry's own, once nobody waits for it (a request
// body's Read that outlived the deadline), is reported through
// otel.Handle by its type only, as every other channel names a panic: its
// value may carry a secret. Before, its value was formatted whole.
func TestAStrayPanicsValueNeverReachesOtelHandle(t *testing.T) {
	errs := captureOtelErrors(t)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Error("a request whose body was never buffered was sent")
		return nil, errors.New("unreachable")
	})
	rt := otelretry.NewTransport(base, otelretry.WithDeadline(50*time.Millisecond))
	ctx := otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/search", &stallThenPanic{closed: make(chan struct{})})
	req.ContentLength = 16 // known and small: buffered before the first call
	if resp, err := rt.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatal("a body never read was sent")
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(errs()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	got := errs()
	if len(got) != 1 || !strings.Contains(got[0].Error(), "a request body's Read panicked") {
		t.Fatalf("otel.Handle got %v, want the Read's panic", got)
	}
	if strings.Contains(got[0].Error(), "SECRET") {
		t.Errorf("otel.Handle got the panic's value: %q", got[0].Error())
	}
}

// readPanics is a caller's request body whose Read panics; it counts its
// Closes.
type readPanics struct{ closes *atomic.Int32 }

func (readPanics) Read([]byte) (int, error) { panic("the caller's body Read: boom") }

func (b readPanics) Close() error {
	b.closes.Add(1)
	return nil
}

// TestBodyReadPanicWhileBufferingReachesTheCaller: the caller's body is
// read into the retry buffer on a goroutine of otelretry's own; a panic of
// its Read comes back on the caller's goroutine, as the read would panic
// there without otelretry, and the buffer's memory is given back.
func TestBodyReadPanicWhileBufferingReachesTheCaller(t *testing.T) {
	calls := 0
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, r.Body)
		if calls++; calls == 1 {
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	// The memory holds one body: a second operation's body is buffered, and
	// its 503 retried, only if the first gave the memory back.
	rt := otelretry.NewTransport(base, otelretry.WithBodyBuffer(5, 5))
	repeatable := otelretry.WithIntent(context.Background(), otelretry.Intent{Repeatable: true})
	var closes atomic.Int32
	panicked := func() (v any) {
		defer func() { v = recover() }()
		req, _ := http.NewRequestWithContext(repeatable, http.MethodPut, "http://api.test/items/1", readPanics{&closes})
		req.ContentLength = 5
		rt.RoundTrip(req)
		return nil
	}()
	if panicked != "the caller's body Read: boom" {
		t.Fatalf("RoundTrip panicked with %v, want the Read's panic", panicked)
	}
	if n := closes.Load(); n != 1 {
		t.Errorf("the caller's body was closed %d times, want once", n)
	}
	req, _ := http.NewRequestWithContext(repeatable, http.MethodPut, "http://api.test/items/1", io.NopCloser(strings.NewReader("hello")))
	req.ContentLength = 5
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls != 2 {
		t.Fatalf("the next body: status %d after %d calls, want its 503 retried (the memory given back)", resp.StatusCode, calls)
	}
}

// goexitBody is a caller's body whose Read calls runtime.Goexit, as
// t.FailNow in a test double's Read does.
type goexitBody struct{ closes *atomic.Int32 }

func (goexitBody) Read([]byte) (int, error) { runtime.Goexit(); return 0, nil }
func (b goexitBody) Close() error {
	b.closes.Add(1)
	return nil
}

// A runtime.Goexit of the caller's body's Read while otelretry buffers it
// on a goroutine of its own ends the caller's goroutine at once, as a
// Goexit in any other user code otelretry runs does. Before, it was taken
// for no panic at all: RoundTrip waited out the whole deadline (30s) and
// then blamed a body "not read by the operation deadline".
func TestBodyReadGoexitWhileBufferingEndsTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			io.Copy(io.Discard, r.Body)
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		rt := otelretry.NewTransport(base, otelretry.WithDeadline(30*time.Second))
		repeatable := otelretry.WithIntent(context.Background(), otelretry.Intent{Repeatable: true})
		var closes atomic.Int32
		req, _ := http.NewRequestWithContext(repeatable, http.MethodPut, "http://api.test/items/1", goexitBody{&closes})
		req.ContentLength = 5 // known and small: buffered before the first call
		start := time.Now()
		returned := false
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := rt.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
			returned = true
		}()
		<-done
		if took := time.Since(start); took != 0 || returned {
			t.Errorf("RoundTrip returned %v after %v; want the Read's Goexit to end the caller's goroutine at once", returned, took)
		}
		if n := closes.Load(); n != 1 {
			t.Errorf("the caller's body was closed %d times, want once", n)
		}
	})
}

// panicOnClose is a body whose Close panics.
type panicOnClose struct{ io.Reader }

func (panicOnClose) Close() error { panic("close exploded") }

// Closing the body handed to the caller releases the attempt's context
// (responseBody), also when the base's Close panics: the panic goes on to
// the caller, and the attempt's context, registered under the caller's,
// is not left behind (with a caller's context that has a Done channel of
// its own, one goroutine of the context package per operation).
func TestAReturnedBodysClosePanicReleasesTheAttempt(t *testing.T) {
	for name, opts := range map[string][]otelretry.Option{"client span": nil, "without client spans": {otelretry.WithoutClientSpans()}} {
		t.Run(name, func(t *testing.T) {
			var attemptCtx context.Context
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				attemptCtx = r.Context()
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: panicOnClose{strings.NewReader("ok")}, Request: r}, nil
			})
			rec := tracetest.NewSpanRecorder()
			tr := otelretry.NewTransport(base, append(opts, otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))...)
			resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			io.ReadAll(resp.Body)
			func() {
				defer func() {
					if recover() == nil {
						t.Error("the Close's panic did not reach the caller")
					}
				}()
				resp.Body.Close()
			}()
			if s, e := len(rec.Started()), len(rec.Ended()); s != e {
				t.Errorf("%d spans started, %d ended", s, e)
			}
			if attemptCtx.Err() == nil {
				t.Error("the attempt's context is still live after the caller closed the body (its Close panicked)")
			}
		})
	}
}

// neverDone is a caller's context that lives on after the operation (a
// server's or a worker's) and is none of package context's own: a watch
// registered on it waits on a goroutine of its own until it is stopped.
type neverDone struct {
	context.Context
	done chan struct{}
}

func (c neverDone) Done() <-chan struct{} { return c.done }

// A 503 whose body's Read panics while it is drained before the retry:
// the panic reaches the caller, and the operation leaves nothing on the
// caller's context. The drain's watch on it was left registered (its
// goroutine waiting, holding the attempt and the base's body for as long
// as the context lives).
func TestResponseBodyReadPanicWhileDrainedLeavesNoWatch(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 503, Header: http.Header{}, Body: readPanics{new(atomic.Int32)}, ContentLength: -1, Request: r}, nil
	})
	rt := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	ctx := neverDone{context.Background(), make(chan struct{})}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the body's panic did not reach the caller")
			}
		}()
		rt.RoundTrip(req)
	}()
}

// panicOnWireLog is a slog handler that panics on the "retry wire" record:
// the late writes recorded as the caller closes the body handed over.
type panicOnWireLog struct{}

func (panicOnWireLog) Enabled(context.Context, slog.Level) bool { return true }
func (panicOnWireLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "retry wire" {
		panic("slog handler boom")
	}
	return nil
}
func (h panicOnWireLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h panicOnWireLog) WithGroup(string) slog.Handler      { return h }

// lateWritesBody reports two writes after the headers (a base whose
// writes end after its answer began) and counts its Close.
type lateWritesBody struct {
	trace    *httptrace.ClientTrace
	r        io.Reader
	reported bool
	closed   *atomic.Int32
}

func (b *lateWritesBody) Read(p []byte) (int, error) {
	if !b.reported {
		b.reported = true
		b.trace.WroteRequest(httptrace.WroteRequestInfo{})
		b.trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	return b.r.Read(p[:min(len(p), 16)])
}

func (b *lateWritesBody) Close() error { b.closed.Add(1); return nil }

// The caller closes the body handed over before its end; recording the
// late writes then runs the slog handler, which panics. The telemetry
// that panics has what the operation holds released (doc.go): the base's
// body was left open, and otelhttp's span never ended (its wrapper's
// Close was never called).
func TestALateWritesTelemetryPanicOnCloseStillClosesTheBody(t *testing.T) {
	for _, own := range []bool{false, true} {
		name := "client spans"
		if own {
			name = "without client spans"
		}
		t.Run(name, func(t *testing.T) {
			var closed atomic.Int32
			var base http.RoundTripper = roundTripFunc(func(r *http.Request) (*http.Response, error) {
				tr := httptrace.ContextClientTrace(r.Context())
				tr.GetConn("api.test:80")
				tr.GotConn(httptrace.GotConnInfo{})
				tr.WroteHeaders()
				return &http.Response{StatusCode: 200, Header: http.Header{}, ContentLength: -1, Request: r,
					Body: &lateWritesBody{trace: tr, r: strings.NewReader(`{"id":1}` + strings.Repeat(" ", 4096)), closed: &closed}}, nil
			})
			sr := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
			opts := []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithLogger(slog.New(panicOnWireLog{}))}
			if own {
				base = otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tp))
				opts = append(opts, otelretry.WithoutClientSpans())
			}
			rt := otelretry.NewTransport(base, opts...)
			resp, err := rt.RoundTrip(get(t, t.Context(), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 8)
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatal(err)
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Error("the slog handler's panic did not reach the caller")
					}
				}()
				resp.Body.Close()
			}()
			if n := closed.Load(); n != 1 {
				t.Errorf("the base's body was closed %d times, want 1 (the panic left it open)", n)
			}
			if s, e := len(sr.Started()), len(sr.Ended()); s != e {
				for _, sp := range sr.Started() {
					if sp.EndTime().IsZero() {
						t.Errorf("span %q never ended", sp.Name())
					}
				}
				t.Errorf("%d spans started, %d ended", s, e)
			}
		})
	}
}
