// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// Defaults of WithBodyBuffer.
const (
	DefaultBodyBufferPerRequest = 64 << 10 // 64 KiB
	DefaultBodyBufferTotal      = 8 << 20  // 8 MiB across the Transport
)

// bodyPool is the Transport's buffer memory for request bodies: bytes
// reserved by the operations that hold a buffer, never above total.
type bodyPool struct {
	perRequest, total int64
	used              atomic.Int64
}

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
	// holders: the operation, and the reading goroutine while it runs;
	// the last to let go frees the reservation, so that a read that
	// outlives its operation (a body that ignores Close) still counts.
	holders atomic.Int32
}

func (b *bufferedBody) open() io.ReadCloser { return io.NopCloser(bytes.NewReader(b.data)) }

func (b *bufferedBody) getBody() (io.ReadCloser, error) {
	if b.err != nil {
		return nil, b.err
	}
	return b.open(), nil
}

func (b *bufferedBody) letGo() {
	if b.holders.Add(-1) == 0 {
		b.pool.free(int64(len(b.data)))
	}
}

// bufferReadError is why a body to buffer could not be had: a read error,
// a length that is not its ContentLength, or a read not done by the
// deadline. Nothing was sent.
type bufferReadError struct{ err error }

func (e *bufferReadError) Error() string {
	return "otelretry: reading the request body to buffer it for retries: " + e.err.Error() + "; nothing sent"
}
func (e *bufferReadError) Unwrap() error { return e.err }

var errBodyReadDeadline = fmt.Errorf("not read by the operation deadline (%w)", context.DeadlineExceeded)

// bufferBody makes the caller's body replayable when it is not: a body of
// known length up to the per-request limit, while the Transport's memory
// allows, is read into a buffer within the operation's deadline, and the
// caller's body is closed. Otherwise the body stays as it is, not
// replayable, and the operation span says why (body_not_buffered). A body
// that cannot be read, or is not read by the deadline, leaves an error
// that ends the operation before any call.
func (op *operation) bufferBody() {
	p := &op.t.bodies
	req := op.req
	if op.policy.replayable || !p.enabled() || op.policy.noRetry || op.policy.maxAttempts < 2 {
		return
	}
	n := req.ContentLength
	switch {
	case n <= 0:
		op.notBuffered(attrs.BodyBufferUnknownLength)
		return
	case n > p.perRequest:
		op.notBuffered(attrs.BodyBufferTooLarge)
		return
	}
	left := op.clock.limit - op.since()
	if left <= 0 {
		return // the first decision ends it
	}
	if !p.reserve(n) {
		op.notBuffered(attrs.BodyBufferMemoryCap)
		return
	}
	b := &bufferedBody{data: make([]byte, n), pool: p}
	b.holders.Store(2)
	done := make(chan error, 1)
	go func() {
		defer b.letGo()
		done <- readExactly(req.Body, b.data)
	}()
	timer := time.NewTimer(left)
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		err = errBodyReadDeadline
	case <-op.ctx.Done():
		err = context.Cause(op.ctx)
	case <-req.Cancel: // nil, and never ready, unless http.Client set it
		err = errors.New("request canceled")
	}
	// The caller's body is closed here, once, whatever came of the read:
	// a stalled read is unblocked by it.
	req.Body.Close()
	op.progress.callerBody = false
	if err != nil {
		b.err = &bufferReadError{err}
	}
	op.buffered = b
	op.policy.replayable = b.err == nil
}

// readExactly fills buf from r and checks that r ends there, as net/http
// checks a body against its ContentLength.
func readExactly(r io.Reader, buf []byte) error {
	n, err := io.ReadFull(r, buf)
	switch {
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

// notBuffered records on the operation span why the body was not
// buffered.
func (op *operation) notBuffered(reason string) {
	if op.tel.recording {
		op.span.AddEvent(attrs.EventBodyNotBuffered, trace.WithAttributes(attrs.BodyBufferReasonKey.String(reason)))
	}
}

// bodyErr is why the buffered body cannot be sent, if it cannot.
func (op *operation) bodyErr() error {
	if op.buffered == nil || op.buffered.err == nil {
		return nil
	}
	return op.buffered.err
}

// releaseBody lets go of the operation's buffer, when it ends.
func (op *operation) releaseBody() {
	if b := op.buffered; b != nil {
		op.buffered = nil
		b.letGo()
	}
}
