// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// failsOnSpanEnd is a span processor that panics, or calls
// runtime.Goexit, in OnEnd of the n-th span named name it sees (and of
// every later one, with every): otelhttp ends an attempt's span in the
// body's Read at EOF or in its Close, before it closes the body beneath.
type failsOnSpanEnd struct {
	sdktrace.SpanProcessor
	name   string
	n      int32
	goexit bool
	every  bool
	seen   atomic.Int32
}

func (p *failsOnSpanEnd) OnEnd(s sdktrace.ReadOnlySpan) {
	p.SpanProcessor.OnEnd(s)
	if s.Name() != p.name {
		return
	}
	if seen := p.seen.Add(1); seen == p.n || p.every && seen > p.n {
		if p.goexit {
			runtime.Goexit()
		}
		panic("span processor")
	}
}

// closeCounted is a base's body that counts its Closes.
type closeCounted struct {
	io.Reader
	closed *atomic.Int32
}

func (b *closeCounted) Close() error { b.closed.Add(1); return nil }

// spanEndScene is one operation whose span processor fails at the end of
// an attempt's span (see failsOnSpanEnd).
type spanEndScene struct {
	name           string
	spanName       string
	nth            int32
	every, readAll bool // readAll: the caller reads the body to its end, then closes it
	method, body   string
	answer         func(n int32) (status int, delay time.Duration) // of call n, from 1; a delay ignores the context
	opts           []Option
}

// run plays the scene once, panicking or exiting, and reports how many
// base bodies were made and closed, and the buffer bytes still reserved.
func (sc spanEndScene) run(t *testing.T, goexit bool) (made, closed int32, reserved int64) {
	var m, c atomic.Int32
	synctest.Test(t, func(t *testing.T) {
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			n := m.Add(1)
			if r.Body != nil {
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
			status, d := sc.answer(n)
			time.Sleep(d)
			return &http.Response{StatusCode: status, Header: http.Header{}, ContentLength: -1,
				Body: &closeCounted{strings.NewReader(strings.Repeat("x", 100)), &c}, Request: r}, nil
		})
		proc := &failsOnSpanEnd{SpanProcessor: tracetest.NewSpanRecorder(), name: sc.spanName, n: sc.nth, goexit: goexit, every: sc.every}
		tr := NewTransport(base, append([]Option{WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc)))}, sc.opts...)...)
		done := make(chan struct{})
		go func() { // the caller, whose goroutine the processor may end
			defer close(done)
			defer func() { recover() }()
			var body io.Reader
			if sc.body != "" {
				body = strings.NewReader(sc.body)
			}
			req, _ := http.NewRequestWithContext(context.Background(), cmp.Or(sc.method, http.MethodGet), "http://api.test/x", body)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			if sc.readAll {
				func() {
					defer func() { recover() }()
					io.Copy(io.Discard, resp.Body)
				}()
			}
		}()
		<-done
		time.Sleep(time.Minute) // a loser's answer, and its discard
		synctest.Wait()
		reserved = tr.shared.bodies.used.Load()
	})
	return m.Load(), c.Load(), reserved
}

// A span processor that panics or calls runtime.Goexit as an attempt's
// span ends leaves no base body, and no connection, open, on any body
// path: the caller's Close (otelhttp ends its span before it closes the
// body beneath), a read to EOF, a retry's discard, a buffered body's, a
// hedge loser's discard on its own goroutine, and a hedge winner let go
// of after the loser's goroutine ended (where a cleanup step's own Goexit
// used to skip the steps after it).
func TestASpanProcessorFailingAtAnAttemptSpansEndLeavesNoBaseBodyOpen(t *testing.T) {
	ok := func(int32) (int, time.Duration) { return http.StatusOK, 0 }
	retryThenOK := func(n int32) (int, time.Duration) {
		if n == 1 {
			return http.StatusServiceUnavailable, 0
		}
		return http.StatusOK, 0
	}
	slowFirst := func(n int32) (int, time.Duration) {
		if n == 1 {
			return http.StatusOK, 10 * time.Second
		}
		return http.StatusOK, 0
	}
	buffered := []Option{WithBodyBuffer(1024, 4096), WithIdempotentMethods(http.MethodPut)}
	hedged := []Option{WithHedging(Hedging{Delay: time.Second, MaxShare: 1}), WithDeadline(time.Hour), WithAttemptTimeout(time.Hour)}
	scenes := []spanEndScene{
		{name: "the caller's Close", spanName: "GET", nth: 1, answer: ok},
		{name: "a read to EOF", spanName: "GET", nth: 1, readAll: true, answer: ok},
		{name: "a retry's discard", spanName: "GET", nth: 1, answer: retryThenOK},
		{name: "a buffered body's discard", spanName: "PUT", nth: 1, answer: retryThenOK, method: http.MethodPut, body: "payload", opts: buffered},
		{name: "a buffered body's Close", spanName: "PUT", nth: 2, answer: retryThenOK, method: http.MethodPut, body: "payload", opts: buffered},
		{name: "a hedge's first span end", spanName: "GET", nth: 1, answer: slowFirst, opts: hedged},
		{name: "a hedge's second span end", spanName: "GET", nth: 2, answer: slowFirst, opts: hedged},
		{name: "a hedge's, without client spans", spanName: "GET", nth: 1, answer: slowFirst, opts: append([]Option{WithoutClientSpans()}, hedged...)},
		{name: "every span end of a hedged read", spanName: "GET", nth: 1, every: true, answer: slowFirst, opts: hedged},
	}
	for _, sc := range scenes {
		for _, goexit := range []bool{false, true} {
			t.Run(sc.name+map[bool]string{false: ", panic", true: ", Goexit"}[goexit], func(t *testing.T) {
				if made, closed, reserved := sc.run(t, goexit); made != closed || reserved != 0 {
					t.Errorf("%d base bodies made, %d closed, %d bytes of buffer still reserved; want all closed and none", made, closed, reserved)
				}
			})
		}
	}
}
