// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package scripted

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// Step is one scripted result.
type Step struct {
	// Delay is how long the call takes before answering. When the request
	// context ends first, the call fails with the context's error, as a
	// real transport would.
	Delay time.Duration
	// Status is the response status; ignored when Err or Hang is set.
	Status int
	// Header is the response header.
	Header http.Header
	// Body is the response body.
	Body string
	// Err fails the call with this error after Delay.
	Err error
	// Hang blocks until the request context ends (a timeout).
	Hang bool
	// Stall makes the response body deliver Body, then block until the
	// request context ends, as a net/http body whose server stopped
	// sending does.
	Stall bool
	// Panic makes the call panic with this value after Delay.
	Panic any
	// AlsoErr returns this error together with the response, which a
	// RoundTripper must not do.
	AlsoErr error
	// NilResponse returns neither a response nor an error, which a
	// RoundTripper must not do either.
	NilResponse bool
}

// Call is what the transport saw of one request.
type Call struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
	At     time.Time
}

// Transport plays Steps in order; past the end it repeats the last step.
type Transport struct {
	mu    sync.Mutex
	steps []Step
	calls []Call
	open  int // response bodies not closed yet
}

// New returns a Transport playing steps.
func New(steps ...Step) *Transport { return &Transport{steps: steps} }

// Calls returns a copy of the calls received so far.
func (t *Transport) Calls() []Call {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Call(nil), t.calls...)
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	var readErr error
	if req.Body != nil {
		body, readErr = io.ReadAll(req.Body) // test bodies are small
		req.Body.Close()
	}
	t.mu.Lock()
	i := len(t.calls)
	t.calls = append(t.calls, Call{Method: req.Method, URL: req.URL.String(), Header: req.Header.Clone(), Body: body, At: time.Now()})
	step := t.steps[min(i, len(t.steps)-1)]
	t.mu.Unlock()

	ctx := req.Context()
	if readErr != nil {
		return nil, readErr // as net/http does when the body fails while it is written
	}
	if step.Hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if err := wait(ctx, step.Delay); err != nil {
		return nil, err
	}
	if step.Panic != nil {
		panic(step.Panic)
	}
	if step.Err != nil {
		return nil, step.Err
	}
	if step.NilResponse {
		return nil, nil
	}
	h := step.Header
	if h == nil {
		h = http.Header{}
	}
	var rb io.ReadCloser = io.NopCloser(bytes.NewReader([]byte(step.Body)))
	length := int64(len(step.Body))
	if step.Stall {
		rb = &stalledBody{ctx: ctx, data: []byte(step.Body)}
		length = -1
	}
	t.mu.Lock()
	t.open++
	t.mu.Unlock()
	return &http.Response{
		StatusCode:    step.Status,
		Status:        http.StatusText(step.Status),
		Header:        h.Clone(),
		Body:          &trackedBody{ReadCloser: rb, t: t},
		ContentLength: length,
		Request:       req,
		Proto:         "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}, step.AlsoErr
}

// OpenBodies returns how many response bodies were handed out and not
// closed yet.
func (t *Transport) OpenBodies() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open
}

// trackedBody counts the response bodies left open.
type trackedBody struct {
	io.ReadCloser
	t    *Transport
	once sync.Once
}

func (b *trackedBody) Close() error {
	b.once.Do(func() {
		b.t.mu.Lock()
		b.t.open--
		b.t.mu.Unlock()
	})
	return b.ReadCloser.Close()
}

// stalledBody delivers data, then blocks until ctx ends and fails with
// its error, as a net/http body does when its request is canceled.
type stalledBody struct {
	ctx  context.Context
	data []byte
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		return n, nil
	}
	<-b.ctx.Done()
	return 0, context.Cause(b.ctx)
}

func (b *stalledBody) Close() error { return nil }

func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
