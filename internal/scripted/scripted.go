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
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body) // test bodies are small
		req.Body.Close()
	}
	t.mu.Lock()
	i := len(t.calls)
	t.calls = append(t.calls, Call{Method: req.Method, URL: req.URL.String(), Header: req.Header.Clone(), Body: body, At: time.Now()})
	step := t.steps[min(i, len(t.steps)-1)]
	t.mu.Unlock()

	ctx := req.Context()
	if step.Hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if err := wait(ctx, step.Delay); err != nil {
		return nil, err
	}
	if step.Err != nil {
		return nil, step.Err
	}
	h := step.Header
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{
		StatusCode:    step.Status,
		Status:        http.StatusText(step.Status),
		Header:        h.Clone(),
		Body:          io.NopCloser(bytes.NewReader([]byte(step.Body))),
		ContentLength: int64(len(step.Body)),
		Request:       req,
		Proto:         "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}, nil
}

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
