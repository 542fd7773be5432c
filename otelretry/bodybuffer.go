// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// Defaults of WithBodyBuffer.
const (
	defaultBodyBufferPerRequest = 64 << 10 // 64 KiB
	defaultBodyBufferTotal      = 8 << 20  // 8 MiB across the Transport
)

// bodyPool is the Transport's buffer memory for request bodies: bytes
// reserved by the operations that hold a buffer, never above total.
type bodyPool struct {
	perRequest, total int64
	used              atomic.Int64
}

// init sets the pool's limits.
func (p *bodyPool) init(perRequest, total int64) { p.perRequest, p.total = perRequest, total }

func (p *bodyPool) enabled() bool { return p.perRequest > 0 && p.total > 0 }

// reserve takes n bytes if they fit under the cap.
func (p *bodyPool) reserve(n int64) bool {
	for {
		used := p.used.Load()
		if used+n > p.total {
			return false
		}
		if p.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

func (p *bodyPool) free(n int64) { p.used.Add(-n) }

// bufferedBody is a caller's body read into memory, the source of every
// attempt's body and of every resend below otelretry (GetBody).
type bufferedBody struct {
	data []byte
	err  error // the body could not be read: nothing may be sent
	pool *bodyPool
	// holders: the operation, the reading goroutine while it runs, and
	// each copy not yet closed; the last to let go frees the reservation,
	// so that a read that outlives its operation (a body that ignores
	// Close) and a copy still being sent after it (net/http writes a body
	// after RoundTrip returned: HTTP/2, an early answer) still count.
	holders atomic.Int32
}

// bufferCopy is one reader of a buffer (an attempt's body, a resend's
// from GetBody), holding the buffer's reservation until it is closed, as
// the RoundTripper contract has its base do; one a base drops unclosed
// lets go when it is collected. Its cost: net/http's HTTP/1 client sends
// the headers of a body it does not know to be in memory (only its own
// types and io.NopCloser of them) in a write of their own, one more write
// than for a bytes.Reader, where no wrapper (otelhttp's, with client spans)
// hides the body already. The bound on the memory is what is kept.
type bufferCopy struct {
	bytes.Reader
	b       *bufferedBody
	closed  atomic.Bool
	cleanup runtime.Cleanup
}

func (c *bufferCopy) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.cleanup.Stop()
		c.b.letGo()
	}
	return nil
}

// errBufferReleased is why a buffer is not copied once every holder let
// go of it: its operation ended (a hedge prepared after its race was
// over, a resend below after RoundTrip returned), and its reservation is
// given back.
var errBufferReleased = errors.New("otelretry: the operation ended: its buffered body is released")

// hold takes a holder for a copy, unless none is left.
func (b *bufferedBody) hold() bool {
	for {
		n := b.holders.Load()
		if n == 0 {
			return false
		}
		if b.holders.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (b *bufferedBody) getBody() (io.ReadCloser, error) {
	if b.err != nil {
		return nil, b.err
	}
	if !b.hold() {
		return nil, errBufferReleased
	}
	c := &bufferCopy{b: b}
	c.Reader.Reset(b.data)
	c.cleanup = runtime.AddCleanup(c, (*bufferedBody).letGo, b)
	return c, nil
}

func (b *bufferedBody) letGo() {
	if b.holders.Add(-1) == 0 {
		b.pool.free(int64(len(b.data)))
	}
}

var (
	errBodyReadDeadline = fmt.Errorf("not read by the operation deadline (%w)", context.DeadlineExceeded)
	errRequestCanceled  = errors.New("request canceled")
	errReadStopped      = errors.New("the operation stopped waiting for the body")
)

// stoppedAlready is why the caller stopped (its context, or its
// request's Cancel), nil when it has not.
func stoppedAlready(ctx context.Context, cancel <-chan struct{}) error {
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-cancel:
		return errRequestCanceled
	default:
		return nil
	}
}

// stoppableReader reads the caller's body until the operation stops
// waiting for it: no Read begins after that, so none begins after the
// operation closed the body, which a caller may reuse once it is closed.
type stoppableReader struct {
	r       io.Reader
	stopped atomic.Bool
}

func (s *stoppableReader) Read(p []byte) (int, error) {
	if s.stopped.Load() {
		return 0, errReadStopped
	}
	return s.r.Read(p)
}

// bufferBody reads the caller's body, of length n, into a buffer within
// left, unless the pool's memory is taken (it reports why it did not:
// BodyBufferMemoryCap). The caller's body is closed, once, whatever came
// of the read: a stalled read is unblocked by it, and no read begins once
// the wait ended (a read already begun is what the Close unblocks, as
// net/http's Transport closes a body it stops writing). A body that cannot
// be read, or is not read in time, leaves an error in the buffer, which
// ends the operation before any call; one whose caller stopped before the
// read began is not read at all.
func bufferBody(ctx context.Context, req *http.Request, pool *bodyPool, n int64, left time.Duration) (*bufferedBody, string) {
	if err := stoppedAlready(ctx, req.Cancel); err != nil {
		b := &bufferedBody{err: &bufferReadError{err}, pool: pool}
		b.holders.Store(1)
		return b, ""
	}
	if !pool.reserve(n) {
		return nil, attrs.BodyBufferMemoryCap
	}
	b := &bufferedBody{data: make([]byte, n), pool: pool}
	b.holders.Store(2)
	done := make(chan error, 1)
	var waiting readWait
	body := &stoppableReader{r: req.Body}
	go func() {
		read, err := false, error(nil)
		defer func() {
			v := recover()
			// The read's hold goes before the operation hears of its end,
			// so that the memory is given back once RoundTrip returned (or
			// panicked with the read's panic).
			b.letGo()
			if read {
				done <- err
				return
			}
			waiting.handOver(done, v, read)
		}()
		err = readExactly(body, b.data)
		read = true
	}()
	timer := time.NewTimer(left)
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		err = errBodyReadDeadline
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-req.Cancel: // nil, and never ready, unless http.Client set it
		err = errRequestCanceled
	}
	body.stopped.Store(true) // before the operation closes the body
	if _, panicked := err.(readPanic); !panicked && !waiting.stop() {
		err = <-done // a panic of the read, handed over as the wait ended
	}
	if p, ok := err.(readPanic); ok {
		// On the caller's goroutine, where the read would have run; the
		// operation's cleanup closes the caller's body, once.
		b.letGo()
		if p.value == nil {
			runtime.Goexit()
		}
		panic(p.value)
	}
	if err != nil {
		b.err = &bufferReadError{err}
	}
	return b, "" // the caller closes req.Body, once the operation holds b
}

// readWait is where a panic of the caller's body's Read, on the goroutine
// that buffers it, goes: to the operation, which panics with it on the
// caller's goroutine, while the operation waits for the read; to
// otel.Handle once it stopped waiting, where it would end the process.
type readWait struct{ state atomic.Int32 } // waiting, stopped or panicked

const (
	readWaiting = iota
	readStopped
	readPanicked
)

// stop ends the wait; false when a panic was handed over first, which done
// then holds.
func (w *readWait) stop() bool { return w.state.CompareAndSwap(readWaiting, readStopped) }

// handOver, deferred by the reading goroutine with what it recovered, v,
// hands a panic of the read, or its runtime.Goexit (a read that neither
// returned nor panicked), to the operation, or reports a panic when the
// operation stopped waiting.
func (w *readWait) handOver(done chan<- error, v any, returned bool) {
	if v == nil && returned {
		return
	}
	if w.state.CompareAndSwap(readWaiting, readPanicked) {
		done <- readPanic{v}
		return
	}
	if v != nil {
		handleStrayPanic("a request body's Read", v)
	}
}

// readPanic carries a panic of the read to the operation: nil for
// runtime.Goexit.
type readPanic struct{ value any }

func (readPanic) Error() string { return "the request body's Read panicked" }

// bodySource is where an operation's attempts take their bodies: the
// caller's request, and its buffer when the body was buffered.
type bodySource struct {
	// body and getBody are the caller's Body and GetBody, read once at the
	// operation's start: a hedge makes its body on a goroutine of its
	// own, which may run on once RoundTrip returned and the caller reuses
	// its request.
	body     io.ReadCloser
	getBody  func() (io.ReadCloser, error)
	hasBody  bool
	buffered *bufferedBody
	// released: the operation let go of the buffer. Copies taken before
	// stay readable until they are closed (a hedge prepared on its own
	// goroutine may outlive the operation); none is given once every
	// holder let go (errBufferReleased).
	released atomic.Bool
}

// forAttempt is the body attempt n starts from: the caller's for the
// first, a fresh copy from the caller's GetBody for the others; a copy of
// the buffer for every attempt when the body was buffered.
func (s *bodySource) forAttempt(n int) (io.ReadCloser, error) {
	if s.buffered != nil {
		return s.buffered.getBody()
	}
	if !s.hasBody {
		return s.body, nil
	}
	if n == 1 {
		return &streamedBody{ReadCloser: s.body}, nil
	}
	body, err := s.getBody()
	switch {
	case err != nil:
		return nil, err
	case body == nil:
		// A resend with no body would change the bytes on the wire.
		return nil, errGetBodyNil
	}
	return &streamedBody{ReadCloser: body}, nil
}

// streamedUnlessInMemory is body as the base gets it: wrapped in a
// streamedBody unless it is one already, or a copy of the buffer.
func streamedUnlessInMemory(body io.ReadCloser) io.ReadCloser {
	switch body.(type) {
	case *bufferCopy, *streamedBody:
		return body
	}
	return &streamedBody{ReadCloser: body}
}

// streamedBody is a body otelretry did not buffer (the caller's, or a copy
// from a GetBody) as the base gets it: closed once at most, so that a cut
// can close it while the base still reads it (wire.closeStreamingAtCut)
// and the base's own Close after that does not reach the caller's body
// again.
type streamedBody struct {
	io.ReadCloser
	closed atomic.Bool
	// failed: a Read failed, with an error other than io.EOF, before the
	// body was closed: the request's body broke as the base read it.
	failed atomic.Bool
	// alsoFailed, when set (before the base gets the body), is set with
	// failed: a copy for a resend below tells its attempt's wire.
	alsoFailed *atomic.Bool
}

// reportFailureTo makes a failed Read set flag too; called before the base
// gets the body.
func (b *streamedBody) reportFailureTo(flag *atomic.Bool) { b.alsoFailed = flag }

func (b *streamedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && !b.closed.Load() {
		b.failed.Store(true)
		if b.alsoFailed != nil {
			b.alsoFailed.Store(true)
		}
	}
	return n, err
}

func (b *streamedBody) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	return b.ReadCloser.Close()
}

// again is what makes the caller's body again for a resend below: the
// buffer's copy, the caller's GetBody, or nil when it has none.
func (s *bodySource) again() func() (io.ReadCloser, error) {
	if b := s.buffered; b != nil && b.err == nil {
		return b.getBody
	}
	if !s.hasBody || s.getBody == nil {
		return nil
	}
	return s.getBody
}

// bytes are the body every attempt sends, when they are known: none for a
// request without a body, the buffer's once read; told is false for a body
// that was not buffered.
func (s *bodySource) bytes() (body []byte, told bool) {
	switch {
	case !s.hasBody:
		return nil, true
	case s.replayable():
		return s.buffered.data, true
	}
	return nil, false
}

// useBuffer makes the buffer the source of every attempt's body.
func (s *bodySource) useBuffer(b *bufferedBody) { s.buffered = b }

// replayable reports whether the body was buffered, and read.
func (s *bodySource) replayable() bool { return s.buffered != nil && s.buffered.err == nil }

// err is why the buffered body cannot be sent, if it cannot.
func (s *bodySource) err() error {
	if s.buffered == nil || s.buffered.err == nil {
		return nil
	}
	return s.buffered.err
}

// release lets go of the buffer, when the operation ends.
func (s *bodySource) release() {
	if b := s.buffered; b != nil && s.released.CompareAndSwap(false, true) {
		b.letGo()
	}
}

// bodyErrors keeps the last error other than io.EOF its reader returned.
type bodyErrors struct {
	r   io.Reader
	err error
}

func (b *bodyErrors) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// readExactly fills buf from r and checks that r ends there, as net/http
// checks a body against its ContentLength.
func readExactly(r io.Reader, buf []byte) error {
	body := &bodyErrors{r: r}
	n, err := io.ReadFull(body, buf)
	switch {
	case body.err != nil:
		// The body's own error, io.ErrUnexpectedEOF too (an upload a proxy
		// cut short), which io.ReadFull passes on as its own short read's.
		return body.err
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("ContentLength=%d with Body length %d", len(buf), n)
	case err != nil:
		return err
	}
	var probe [1]byte
	for {
		m, err := r.Read(probe[:])
		if m > 0 {
			return fmt.Errorf("ContentLength=%d with a longer Body", len(buf))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
