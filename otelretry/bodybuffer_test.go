// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// countingBody is a caller's body with no GetBody that is not an
// io.Seeker (as smithy-go's are): it counts its Closes.
type countingBody struct {
	r      io.Reader
	closes atomic.Int32
}

func (b *countingBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *countingBody) Close() error               { b.closes.Add(1); return nil }

// bufferServer answers with statuses in turn (the last one repeats)
// and records the body and Content-Length of every request it executed.
type bufferServer struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   []string
	lengths  []int64
	statuses []int
}

func newBufferServer(t *testing.T, statuses ...int) *bufferServer {
	s := &bufferServer{statuses: statuses}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies, s.lengths = append(s.bodies, string(b)), append(s.lengths, r.ContentLength)
		s.mu.Unlock()
		w.WriteHeader(s.statuses[min(n, len(s.statuses)-1)])
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *bufferServer) got() ([]string, []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...), append([]int64(nil), s.lengths...)
}

func bufferTransport(spans *tracetest.SpanRecorder, opts ...otelretry.Option) *otelretry.Transport {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	all := append([]otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithIdempotentMethods(http.MethodPut),
		otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget()}, opts...)
	return otelretry.NewTransport(http.DefaultTransport, all...)
}

// putWithoutGetBody is a PUT whose body has a known length and no GetBody.
func putWithoutGetBody(t *testing.T, ctx context.Context, url string, body io.Reader, length int64) (*http.Request, *countingBody) {
	t.Helper()
	cb := &countingBody{r: body}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, cb)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	if req.GetBody != nil {
		t.Fatal("the request has a GetBody")
	}
	return req, cb
}

// notBufferedReasons are the reasons of the body_not_buffered events on
// the operation spans.
func notBufferedReasons(spans *tracetest.SpanRecorder) []string {
	var out []string
	for _, op := range spantest.Operations(spans.Ended()) {
		for _, e := range op.Events() {
			if e.Name != attrs.EventBodyNotBuffered {
				continue
			}
			for _, kv := range e.Attributes {
				if kv.Key == attrs.BodyBufferReasonKey {
					out = append(out, kv.Value.AsString())
				}
			}
		}
	}
	return out
}

func TestBodyBufferReplaysABodyWithoutGetBody(t *testing.T) {
	srv := newBufferServer(t, 503, 503, 200)
	spans := tracetest.NewSpanRecorder()
	rt := bufferTransport(spans)
	const payload = `{"id":"42","name":"a small item"}`
	req, body := putWithoutGetBody(t, context.Background(), srv.URL, strings.NewReader(payload), int64(len(payload)))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d, want 200", resp.StatusCode)
	}
	bodies, lengths := srv.got()
	if len(bodies) != 3 {
		t.Fatalf("server executed %d requests, want 3", len(bodies))
	}
	for i := range bodies {
		if bodies[i] != payload || lengths[i] != int64(len(payload)) {
			t.Errorf("request %d: body %q, Content-Length %d; want the caller's %q, %d", i+1, bodies[i], lengths[i], payload, len(payload))
		}
	}
	if n := body.closes.Load(); n != 1 {
		t.Errorf("caller's body closed %d times, want 1", n)
	}
	if r := notBufferedReasons(spans); len(r) != 0 {
		t.Errorf("body_not_buffered events %v, want none", r)
	}
}

// The buffer is the source of resends below otelretry too: the attempt's
// copy has a GetBody, so net/http may replay a request it never wrote.
func TestBodyBufferGivesAttemptsAGetBody(t *testing.T) {
	var sawGetBody atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.GetBody != nil {
			if b, err := r.GetBody(); err == nil {
				got, _ := io.ReadAll(b)
				if string(got) == "abc" {
					sawGetBody.Add(1)
				}
			}
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	rt := otelretry.NewTransport(base, otelretry.WithIdempotentMethods(http.MethodPut))
	req, _ := putWithoutGetBody(t, context.Background(), "http://127.0.0.1:1/x", strings.NewReader("abc"), 3)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if sawGetBody.Load() != 1 {
		t.Error("the attempt's copy had no GetBody giving the caller's bytes")
	}
}

func TestBodyBufferTooLarge(t *testing.T) {
	srv := newBufferServer(t, 503)
	spans := tracetest.NewSpanRecorder()
	rt := bufferTransport(spans, otelretry.WithBodyBuffer(16, 1<<20))
	payload := strings.Repeat("x", 17)
	req, body := putWithoutGetBody(t, context.Background(), srv.URL, strings.NewReader(payload), 17)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	bodies, _ := srv.got()
	if len(bodies) != 1 || bodies[0] != payload {
		t.Errorf("server executed %q, want the one request, unchanged", bodies)
	}
	if got := notBufferedReasons(spans); len(got) != 1 || got[0] != attrs.BodyBufferTooLarge {
		t.Errorf("body_not_buffered reasons %v, want [%s]", got, attrs.BodyBufferTooLarge)
	}
	if r := operationReason(t, spans); r != string(attrs.ReasonNotReplayable) {
		t.Errorf("reason %q, want not_replayable", r)
	}
	if n := body.closes.Load(); n != 1 {
		t.Errorf("caller's body closed %d times, want 1", n)
	}
}

func TestBodyBufferUnknownLength(t *testing.T) {
	srv := newBufferServer(t, 503)
	spans := tracetest.NewSpanRecorder()
	rt := bufferTransport(spans)
	req, _ := putWithoutGetBody(t, context.Background(), srv.URL, strings.NewReader("streamed"), -1)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	bodies, lengths := srv.got()
	if len(bodies) != 1 || bodies[0] != "streamed" || lengths[0] != -1 {
		t.Errorf("server executed %q (lengths %v), want one chunked request", bodies, lengths)
	}
	if got := notBufferedReasons(spans); len(got) != 1 || got[0] != attrs.BodyBufferUnknownLength {
		t.Errorf("body_not_buffered reasons %v, want [%s]", got, attrs.BodyBufferUnknownLength)
	}
}

func TestBodyBufferDisabled(t *testing.T) {
	srv := newBufferServer(t, 503, 200)
	spans := tracetest.NewSpanRecorder()
	rt := bufferTransport(spans, otelretry.WithBodyBuffer(0, 0))
	req, _ := putWithoutGetBody(t, context.Background(), srv.URL, strings.NewReader("abc"), 3)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if bodies, _ := srv.got(); len(bodies) != 1 || resp.StatusCode != 503 {
		t.Errorf("server executed %d requests, status %d; want 1 and the 503 (not replayable)", len(bodies), resp.StatusCode)
	}
	if r := operationReason(t, spans); r != string(attrs.ReasonNotReplayable) {
		t.Errorf("reason %q, want not_replayable", r)
	}
}

// stallingBody blocks in Read until it is closed.
type stallingBody struct {
	closed chan struct{}
	once   sync.Once
	closes atomic.Int32
}

func (b *stallingBody) Read([]byte) (int, error) {
	<-b.closed
	return 0, errors.New("read on closed body")
}
func (b *stallingBody) Close() error {
	b.closes.Add(1)
	b.once.Do(func() { close(b.closed) })
	return nil
}

func TestBodyBufferStalledBodyEndsAtTheDeadline(t *testing.T) {
	srv := newBufferServer(t, 200)
	spans := tracetest.NewSpanRecorder()
	rt := bufferTransport(spans, otelretry.WithDeadline(300*time.Millisecond))
	body := &stallingBody{closed: make(chan struct{})}
	req, err := http.NewRequest(http.MethodPut, srv.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 10
	start := time.Now()
	resp, err := rt.RoundTrip(req)
	took := time.Since(start)
	if err == nil {
		resp.Body.Close()
		t.Fatal("no error")
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "request body") {
		t.Errorf("error %q: want a deadline error naming the request body", err)
	}
	if took < 250*time.Millisecond || took > 2*time.Second {
		t.Errorf("took %v, want about the 300ms deadline", took)
	}
	if bodies, _ := srv.got(); len(bodies) != 0 {
		t.Errorf("server executed %d requests, want none", len(bodies))
	}
	if n := body.closes.Load(); n != 1 {
		t.Errorf("caller's body closed %d times, want 1", n)
	}
}

type failingBody struct {
	countingBody
	err error
}

func (b *failingBody) Read(p []byte) (int, error) {
	n, _ := b.r.Read(p)
	if n > 0 {
		return n, nil
	}
	return 0, b.err
}

func TestBodyBufferReadErrorSendsNothing(t *testing.T) {
	srv := newBufferServer(t, 200)
	spans := tracetest.NewSpanRecorder()
	rt := bufferTransport(spans)
	readErr := errors.New("disk gone")
	body := &failingBody{countingBody: countingBody{r: strings.NewReader("abc")}, err: readErr}
	req, err := http.NewRequest(http.MethodPut, srv.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 10
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("no error")
	}
	if !errors.Is(err, readErr) || !strings.Contains(err.Error(), "request body") {
		t.Errorf("error %q: want the read error, naming the request body", err)
	}
	if bodies, _ := srv.got(); len(bodies) != 0 {
		t.Errorf("server executed %d requests, want none", len(bodies))
	}
	if n := body.closes.Load(); n != 1 {
		t.Errorf("caller's body closed %d times, want 1", n)
	}
}

// A body whose length is not its ContentLength is refused before anything
// is sent, as net/http would refuse it (after sending the headers).
func TestBodyBufferLengthMismatch(t *testing.T) {
	srv := newBufferServer(t, 200)
	rt := bufferTransport(tracetest.NewSpanRecorder())
	for _, payload := range []string{"short", strings.Repeat("long", 10)} {
		req, body := putWithoutGetBody(t, context.Background(), srv.URL, strings.NewReader(payload), 8)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%q: no error", payload)
		}
		if !strings.Contains(err.Error(), "ContentLength") {
			t.Errorf("%q: error %q, want it to name the ContentLength", payload, err)
		}
		if n := body.closes.Load(); n != 1 {
			t.Errorf("%q: caller's body closed %d times, want 1", payload, n)
		}
	}
	if bodies, _ := srv.got(); len(bodies) != 0 {
		t.Errorf("server executed %d requests, want none", len(bodies))
	}
}

// TestBodyBufferCapAcrossConcurrentOperations holds three buffered
// operations at the server, so that the Transport's cap (three bodies) is
// reached: five more operations go unbuffered (memory_cap), and once all
// have ended, the next is buffered again.
func TestBodyBufferCapAcrossConcurrentOperations(t *testing.T) {
	const size = 100
	arrived := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-release
	}))
	defer srv.Close()
	spans := tracetest.NewSpanRecorder()
	rt := bufferTransport(spans, otelretry.WithBodyBuffer(size, 3*size))
	send := func(wg *sync.WaitGroup) {
		defer wg.Done()
		req, _ := putWithoutGetBody(t, context.Background(), srv.URL, strings.NewReader(strings.Repeat("b", size)), size)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go send(&wg)
	}
	for range 3 {
		<-arrived
	}
	for range 5 {
		wg.Add(1)
		go send(&wg)
	}
	for range 5 {
		<-arrived
	}
	close(release)
	wg.Wait()
	got := notBufferedReasons(spans)
	if len(got) != 5 {
		t.Fatalf("body_not_buffered reasons %v, want 5 × %s", got, attrs.BodyBufferMemoryCap)
	}
	for _, r := range got {
		if r != attrs.BodyBufferMemoryCap {
			t.Errorf("reason %q, want %s", r, attrs.BodyBufferMemoryCap)
		}
	}
	// Every reservation was released: the next operation is buffered.
	wg.Add(1)
	go send(&wg)
	<-arrived
	wg.Wait()
	if got := notBufferedReasons(spans); len(got) != 5 {
		t.Errorf("after all ended: body_not_buffered reasons %v, want the same 5", got)
	}
}

// TestBodyBufferConcurrentChurn runs many operations at once under the race
// detector; every one ends, with identical bytes at the server.
func TestBodyBufferConcurrentChurn(t *testing.T) {
	srv := newBufferServer(t, 503, 200)
	rt := bufferTransport(tracetest.NewSpanRecorder(), otelretry.WithBodyBuffer(64, 64*4))
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Go(func() {
			payload := "payload-" + strconv.Itoa(i)
			req, body := putWithoutGetBody(t, context.Background(), srv.URL, strings.NewReader(payload), int64(len(payload)))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if n := body.closes.Load(); n != 1 {
				t.Errorf("caller's body closed %d times, want 1", n)
			}
		})
	}
	wg.Wait()
	bodies, _ := srv.got()
	for _, b := range bodies {
		if !strings.HasPrefix(b, "payload-") {
			t.Errorf("server executed body %q", b)
		}
	}
}

func operationReason(t *testing.T, spans *tracetest.SpanRecorder) string {
	t.Helper()
	ops := spantest.Operations(spans.Ended())
	if len(ops) != 1 {
		t.Fatalf("%d operation spans, want 1", len(ops))
	}
	var reason string
	for _, a := range spantest.Attempts(spans.Ended()) {
		v, _ := spantest.Attr(a, attrs.ReasonKey)
		reason = v.AsString()
	}
	return reason
}

// A write buffered only to tell a repeat's key (under WithOperationID with
// generated keys: its body has GetBody, or it can make one attempt only)
// that finds the buffers' memory taken gets a key of its own and is sent
// whole, with no body_not_buffered event: the body was replayable, or
// never to be resent. Before, the span said memory_cap for it.
func TestABodyBufferedOnlyToTellARepeatRecordsNoNotBuffered(t *testing.T) {
	const payload = "0123456789abcdefghij" // 20 bytes, with GetBody
	for name, tc := range map[string]struct {
		opID bool
		opts []otelretry.Option
	}{
		"too large":                      {true, []otelretry.Option{otelretry.WithBodyBuffer(10, 1<<20)}},
		"no operation id":                {false, []otelretry.Option{otelretry.WithBodyBuffer(64<<10, 10)}},
		"memory taken":                   {true, []otelretry.Option{otelretry.WithBodyBuffer(64<<10, 10)}},
		"memory taken, one attempt only": {true, []otelretry.Option{otelretry.WithBodyBuffer(64<<10, 10), otelretry.WithMaxAttempts(1)}},
	} {
		t.Run(name, func(t *testing.T) {
			spans := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			base := scripted.New(scripted.Step{Status: 201})
			rt := otelretry.NewTransport(base, append([]otelretry.Option{otelretry.WithTracerProvider(tp),
				otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())}, tc.opts...)...)
			ctx := context.Background()
			if tc.opID {
				ctx = otelretry.WithOperationID(ctx, "job-1")
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/orders", strings.NewReader(payload))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if calls := base.Calls(); len(calls) != 1 || string(calls[0].Body) != payload || calls[0].Header.Get("Idempotency-Key") == "" {
				t.Fatalf("calls %+v, want one with the payload and a key", calls)
			}
			if r := notBufferedReasons(spans); len(r) != 0 {
				t.Errorf("body_not_buffered reasons %v, want none: the body needed no buffer for retries", r)
			}
		})
	}
}

// errgroup.WithContext cancels its context with the group's first error as
// the cause: a sibling's *url.Error, URL, credentials and all. A caller
// canceled so while its body is being buffered gets that cause back, its
// URLs sanitized as every cause's are (Error's doc), in the error and in
// its result slot, and nothing is sent.
func TestACancelCauseWhileBufferingIsSanitized(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 200}})
		results := new(otelretry.Results)
		ctx, cancel := context.WithCancelCause(otelretry.WithResults(t.Context(), results))
		pr, pw := io.Pipe()
		defer pw.Close()
		const raw = "http://alice:OWN-PW@api.test/v1/items?token=OWN-TOKEN"
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, raw, pr)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = 10 // known length, no GetBody: buffered for retries
		cause := &url.Error{Op: "Get", URL: raw, Err: errors.New("connection refused")}
		go func() {
			time.Sleep(10 * time.Millisecond)
			cancel(cause)
		}()
		_, err = h.transprt.RoundTrip(req)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, cause.Err) {
			t.Fatalf("err %v: want context.Canceled and the cause kept", err)
		}
		last, ok := results.Last()
		if !ok {
			t.Fatal("no result")
		}
		for _, text := range []string{err.Error(), last.Err.Error()} {
			for _, secret := range []string{"OWN-PW", "OWN-TOKEN", "alice"} {
				if strings.Contains(text, secret) {
					t.Errorf("%q repeats %q", text, secret)
				}
			}
		}
		if n := len(h.base.Calls()); n != 0 {
			t.Errorf("%d calls, want 0", n)
		}
	})
}

// A body that breaks with its own io.ErrUnexpectedEOF while it is buffered
// (a proxied upload cut short) keeps that cause reachable with errors.Is,
// as docs/time-and-bodies.md promises and net/http alone does: it was
// taken for io.ReadFull's short read and replaced by a length mismatch.
func TestABodysOwnUnexpectedEOFWhileBufferedStaysReachable(t *testing.T) {
	srv := newBufferServer(t, 200)
	rt := bufferTransport(tracetest.NewSpanRecorder())
	req, _ := putWithoutGetBody(t, t.Context(), srv.URL, &failingBody{countingBody: countingBody{r: strings.NewReader("abc")}, err: io.ErrUnexpectedEOF}, 10)
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	if bodies, _ := srv.got(); len(bodies) != 0 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%d requests sent, err %v; want none sent, the body's io.ErrUnexpectedEOF reachable", len(bodies), err)
	}
}

// closePanicsBody is a caller's body whose Close panics, counting its
// calls.
type closePanicsBody struct {
	r      io.Reader
	closes atomic.Int32
}

func (b *closePanicsBody) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *closePanicsBody) Close() error {
	b.closes.Add(1)
	panic("request body Close exploded")
}

// A caller's body whose Close panics once it was buffered: the panic goes
// on to the caller, the body is closed once, and the buffer's memory is
// freed. It was closed twice (again by the cleanup after the panic), and
// the reservation was never freed: every later body found the memory
// taken, and was not retried.
func TestABufferedBodysClosePanicClosesItOnceAndFreesItsBuffer(t *testing.T) {
	srv := newBufferServer(t, 503, 200)
	const size = 100
	rt := bufferTransport(tracetest.NewSpanRecorder(), otelretry.WithBodyBuffer(size, size))
	body := &closePanicsBody{r: strings.NewReader(strings.Repeat("a", size))}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, srv.URL, body) // no GetBody: it is buffered
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	if p := roundTripRecovered(rt, req); p == nil {
		t.Fatal("the Close's panic did not reach the caller")
	}
	if n := body.closes.Load(); n != 1 {
		t.Errorf("the caller's body was closed %d times, want once", n)
	}
	next, _ := putWithoutGetBody(t, t.Context(), srv.URL, strings.NewReader(strings.Repeat("b", size)), size)
	resp, err := rt.RoundTrip(next)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the next body of the same size: status %d, want 200 after a retry from its buffer", resp.StatusCode)
	}
}

// watchedBody is a caller's body without GetBody (an io.NopCloser, or
// smithy-go's wrapper) that counts its Reads, those begun after its Close
// and those begun after RoundTrip returned (returned). delay slows each
// Read, as a body fed by a slow source that does not watch Close.
type watchedBody struct {
	r                                      io.Reader
	delay                                  time.Duration
	closed, returned                       atomic.Bool
	closes, reads, afterClose, afterReturn atomic.Int32
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	if b.closed.Load() {
		b.afterClose.Add(1)
	}
	if b.returned.Load() {
		b.afterReturn.Add(1)
	}
	if b.delay > 0 {
		time.Sleep(b.delay)
		p = p[:min(len(p), 64)]
	}
	return b.r.Read(p)
}

func (b *watchedBody) Close() error {
	b.closes.Add(1)
	b.closed.Store(true)
	return nil
}

// bufferingTransport buffers a PUT's body (no GetBody, known length), and
// answers 200.
func bufferingTransport() *otelretry.Transport {
	return otelretry.NewTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	}), otelretry.WithIdempotentMethods(http.MethodPut), otelretry.WithoutBudget())
}

// A body being buffered when the caller's deadline passes is closed once
// and read no more: no Read begins once the operation stopped waiting
// (the one in progress then is what the Close unblocks), so a caller that
// reuses its buffer once the body is closed, as net/http's contract lets
// it, races with nothing (before: 51 Reads after the Close).
func TestABufferedBodyIsNotReadAfterItIsClosed(t *testing.T) {
	payload := strings.Repeat("p", 4096) // 64 Reads of 64 bytes, 1 ms each
	body := &watchedBody{r: strings.NewReader(payload), delay: time.Millisecond}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://api.test/x", body)
	req.ContentLength = int64(len(payload))
	if _, err := bufferingTransport().RoundTrip(req); err == nil {
		t.Fatal("a body read past the caller's deadline: no error")
	}
	body.returned.Store(true)
	time.Sleep(100 * time.Millisecond) // the read would have gone on meanwhile
	if n, after := body.closes.Load(), body.afterClose.Load(); n != 1 || after > 1 {
		t.Errorf("caller's body closed %d times, %d Reads begun after its Close (at most the one racing it)", n, after)
	}
}

// A body whose caller stopped before the operation began is not read at
// all (net/http reads nothing of a request canceled before its call), and
// is closed once: 200 such operations, each caller reusing its buffer once
// RoundTrip returned (under -race).
func TestACanceledCallersBodyIsNotRead(t *testing.T) {
	tr := bufferingTransport()
	for range 200 {
		buf := []byte(strings.Repeat("p", 2048))
		body := &watchedBody{r: bytes.NewReader(buf)}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://api.test/x", body)
		req.ContentLength = int64(len(buf))
		if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled before it began: %v", err)
		}
		for i := range buf { // the caller reuses its buffer
			buf[i] = 'q'
		}
		if n, reads := body.closes.Load(), body.reads.Load(); n != 1 || reads != 0 {
			t.Fatalf("canceled before it began: closed %d times, read %d times", n, reads)
		}
	}
}

// TestBufferedBodiesStillOnTheWireStayUnderTotal: over HTTP/2, a server
// may answer before it read the request body (an upload answered with a
// streamed response); net/http's http2 transport then goes on writing the
// body from the buffer after RoundTrip returned. The Transport's buffered
// bodies in flight hold at most total: of 32 PUTs of 64 KiB, every one
// still being written (the server reads none of them until released),
// those over a total of 256 KiB are not buffered. All 32 were, the
// reservation given back as each operation ended.
func TestBufferedBodiesStillOnTheWireStayUnderTotal(t *testing.T) {
	const (
		size  = 64 << 10
		total = 4 * size
		ops   = 32
	)
	release := make(chan struct{})
	var got sync.Map // op index -> bytes the server read after release
	var answered atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet { // the warm-up: the connection and its SETTINGS
			return
		}
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // answered before the body was read
		answered.Add(1)
		<-release
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Header.Get("X-Op"), len(b))
	}))
	srv.EnableHTTP2 = true
	srv.Config.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: 16 << 10}
	srv.StartTLS()
	defer srv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	rt := otelretry.NewTransport(srv.Client().Transport,
		otelretry.WithTracerProvider(tp), otelretry.WithIdempotentMethods(http.MethodPut),
		otelretry.WithoutBudget(), otelretry.WithBodyBuffer(size, total))

	if resp, err := srv.Client().Get(srv.URL); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	payload := bytes.Repeat([]byte("p"), size)
	var resps []*http.Response
	for i := range ops {
		req, _ := putWithoutGetBody(t, context.Background(), srv.URL, bytes.NewReader(payload), size)
		req.Header.Set("X-Op", string(rune('A'+i)))
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		if resp.ProtoMajor != 2 {
			t.Fatalf("proto %s, want HTTP/2", resp.Proto)
		}
		resps = append(resps, resp)
	}
	// Every RoundTrip returned; no body has been read by the server past
	// its 16 KiB stream window: each is still being written from its buffer.
	notBuffered := 0
	for _, r := range notBufferedReasons(spans) {
		if r == attrs.BodyBufferMemoryCap {
			notBuffered++
		}
	}
	buffered := ops - notBuffered
	t.Logf("%d of %d operations buffered their %d-byte body; all %d still being written", buffered, ops, size, ops)

	close(release)
	for _, resp := range resps {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := 0
		got.Range(func(_, v any) bool {
			if v.(int) == size {
				n++
			}
			return true
		})
		if n == ops || time.Now().After(deadline) {
			got.Range(func(k, v any) bool {
				if v.(int) != size {
					t.Logf("op %v: server read %d bytes", k, v)
				}
				return true
			})
			t.Logf("server read the whole %d-byte body of %d operations after their RoundTrip returned", size, n)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if inFlight := int64(buffered) * size; inFlight > total {
		t.Errorf("buffered bodies in flight together hold %d bytes, want at most total = %d (WithBodyBuffer(%d, %d))",
			inFlight, total, size, total)
	}
}

// A base may use a request after its RoundTrip returned (the RoundTripper
// contract lets it close the body on another goroutine; net/http's HTTP/2
// writes it after the answer), and a layer below resends through GetBody
// after closing the body it sent. A base that closes its copy, returns,
// and then asks GetBody for a fresh one (a resend still under way) is
// refused (the buffer was released), and the Transport's buffer total
// (WithBodyBuffer) forgets no bytes: two bodies held at once by bases are
// not both buffered under a total that fits one (the second is refused:
// body_not_buffered memory_cap). The late copy freed the reservation a
// second time, and the second was buffered.
func TestABufferCopyAskedForAfterItsOperationEndedIsNotFreedTwice(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(map[bool]string{false: "control without late GetBody", true: "late GetBody"}[late], func(t *testing.T) {
			bufferAskedForLate(t, late)
		})
	}
}

func bufferAskedForLate(t *testing.T, late bool) {
	const size = 10
	payload := bytes.Repeat([]byte("x"), size)

	lateDone := make(chan struct{})
	proceedLate := make(chan struct{})
	var mu sync.Mutex
	var holding []io.ReadCloser
	holdNext := false
	call := 0
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		call++
		n := call
		hold := holdNext
		mu.Unlock()
		switch {
		case n == 1:
			// Send the body, close it, answer; a resend below starts
			// after RoundTrip returned.
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			getBody := r.GetBody
			go func() {
				defer close(lateDone)
				<-proceedLate
				if getBody == nil {
					t.Error("the attempt's request has no GetBody")
					return
				}
				if !late {
					return
				}
				b, err := getBody()
				if err != nil {
					return
				}
				io.Copy(io.Discard, b)
				b.Close()
			}()
		case hold:
			mu.Lock()
			holding = append(holding, r.Body) // still being written
			mu.Unlock()
		default:
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	rt := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithIdempotentMethods(http.MethodPut),
		otelretry.WithoutBudget(), otelretry.WithBodyBuffer(size, size))

	do := func() {
		req, _ := putWithoutGetBody(t, context.Background(), "http://api.test/x", bytes.NewReader(payload), size)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	do()               // op 1: returned, its buffer let go
	close(proceedLate) // its base's late resend opens a copy, reads it, closes it
	<-lateDone

	mu.Lock()
	holdNext = true
	mu.Unlock()
	do() // op 2: its body still being written by the base: holds the whole total
	do() // op 3: must find the memory taken
	reasons := notBufferedReasons(spans)
	t.Logf("body_not_buffered reasons: %v", reasons)
	memCap := 0
	for _, r := range reasons {
		if r == attrs.BodyBufferMemoryCap {
			memCap++
		}
	}
	if memCap != 1 {
		t.Errorf("op 3 buffered its %d-byte body while op 2's copy (%d bytes) was still held, under WithBodyBuffer(%d, %d): %d bytes held, want at most %d (want one body_not_buffered memory_cap, got %d)",
			size, size, size, size, 2*size, size, memCap)
	}
	mu.Lock()
	for _, b := range holding {
		b.Close()
	}
	mu.Unlock()
}

// A base that reports its write through httptrace, closes its copy of the
// buffered body, answers, and then (after RoundTrip returned, the operation
// ended, its buffer released) asks GetBody for a fresh body, as a resend
// below would. The buffer refuses (errBufferReleased): no body is taken,
// nothing is resent, and the ended operation's telemetry does not change:
// no wire_late or wire_resend event, no "retry wire" log record. The
// refused GetBody was counted as a resend.
func TestARefusedLateGetBodyRecordsNoResend(t *testing.T) {
	for _, late := range []bool{false, true} {
		name := map[bool]string{false: "control: no late GetBody", true: "late GetBody refused"}[late]
		t.Run(name, func(t *testing.T) {
			const size = 16
			gotErr := make(chan error, 1)
			proceed := make(chan struct{})
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				tr := httptrace.ContextClientTrace(r.Context())
				tr.GetConn("api.test:80")
				tr.GotConn(httptrace.GotConnInfo{})
				tr.WroteHeaders()
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				tr.WroteRequest(httptrace.WroteRequestInfo{})
				getBody := r.GetBody
				go func() {
					<-proceed
					if !late {
						gotErr <- nil
						return
					}
					if getBody == nil {
						gotErr <- io.ErrNoProgress
						return
					}
					b, err := getBody()
					if err == nil {
						b.Close()
					}
					gotErr <- err
				}()
				return &http.Response{StatusCode: 200, Header: http.Header{}, ContentLength: -1,
					Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
			})
			sr := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
			var logs bytes.Buffer
			rt := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
				otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
				otelretry.WithIdempotentMethods(http.MethodPut), otelretry.WithoutBudget(),
				otelretry.WithBodyBuffer(size, size))
			req, _ := putWithoutGetBody(t, context.Background(), "http://api.test/x", bytes.NewReader(bytes.Repeat([]byte("b"), size)), size)
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			close(proceed) // RoundTrip returned: the operation ended
			gErr := <-gotErr
			t.Logf("late GetBody: %v", gErr)
			if late && gErr == nil {
				t.Fatalf("the late GetBody was not refused")
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()

			lateEv, resends, lateWrites := wireEventsOfTheAttempt(t, sr)
			logged := strings.Count(logs.String(), `"msg":"retry wire"`)
			t.Logf("wire_late=%d (writes %v) wire_resend=%d \"retry wire\" records=%d", lateEv, lateWrites, resends, logged)
			if lateEv != 0 || resends != 0 || logged != 0 {
				t.Errorf("a GetBody refused after the operation ended (no body taken, nothing resent) is recorded as a resend: %d wire_late (writes %v), %d wire_resend span events, %d \"retry wire\" log records; want none",
					lateEv, lateWrites, resends, logged)
			}
		})
	}
}

// readingServer is a server on 127.0.0.1 that reads each request's body
// whole and counts the requests, and net/http's Transport to reach it;
// both close when the test ends.
func readingServer(t *testing.T) (srv *httptest.Server, requests *atomic.Int32, base *http.Transport) {
	t.Helper()
	requests = new(atomic.Int32)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(srv.Close)
	base = &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	return srv, requests, base
}

// A GetBody that returns no body and no error for a request that has one
// (a bug of the caller's) made the resend carry no body at all: the bytes
// on the wire are the caller's, so it is a GetBody that failed, and
// nothing is sent again (a reviewer's find).
func TestAGetBodyReturningNoBodyIsNotResentEmpty(t *testing.T) {
	h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, otelretry.WithoutBudget(),
		otelretry.WithIdempotentMethods("PUT"), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/x", strings.NewReader("hello"))
	req.GetBody = func() (io.ReadCloser, error) { return nil, nil }
	resp, err := h.transprt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("RoundTrip answered %d after %d calls; want GetBody's failure", resp.StatusCode, len(h.base.Calls()))
	}
	var oe *otelretry.Error
	if !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeStop || oe.Reason != attrs.ReasonNotReplayable || !strings.Contains(err.Error(), "GetBody") {
		t.Errorf("err = %v; want stop, not_replayable, naming GetBody", err)
	}
	if n := len(h.base.Calls()); n != 1 {
		t.Errorf("the base got %d calls, want 1 (no resend without the body)", n)
	}
}
