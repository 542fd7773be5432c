// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// responseBody wraps the body of a response handed to the caller. Closing
// it releases the attempt's context: the body is bounded by the caller's
// context alone, not by the attempt timeout, which bounded only the wait
// for the headers. It also names the operation that produced it, so that
// the next hop of a redirect chain (http.Client sets Request.Response to
// this response) stays inside the same operation contract. A body that is
// also an io.Writer (a 101 Switching Protocols connection) stays one.
type responseBody struct {
	io.ReadCloser
	a    *attempt
	once sync.Once
}

func (b *responseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.a.release)
	return err
}

func (b *responseBody) operation() *operation { return b.a.op }

type responseReadWriteCloser struct {
	*responseBody
	w io.Writer
}

func (b responseReadWriteCloser) Write(p []byte) (int, error) { return b.w.Write(p) }

// chainedOperation returns the operation that produced the response a
// redirect follows, if it went through an otelretry Transport.
func chainedOperation(req *http.Request) *operation {
	if req.Response == nil || req.Response.Body == nil {
		return nil
	}
	if b, ok := req.Response.Body.(interface{ operation() *operation }); ok {
		return b.operation()
	}
	return nil
}

// handOver wraps resp's body for the caller (see responseBody). The
// wrapper lives in the operation, so wrapping a plain body allocates
// nothing.
func (op *operation) handOver(resp *http.Response, a *attempt) {
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	op.body = responseBody{ReadCloser: resp.Body, a: a}
	if w, ok := resp.Body.(io.ReadWriteCloser); ok {
		resp.Body = responseReadWriteCloser{&op.body, w}
		return
	}
	resp.Body = &op.body
}

// maxDrain bounds how much of a discarded response body is read so that its
// connection can be reused; a longer body is closed unread.
const maxDrain = 4 << 10

// drainPause is the least time the drain of an answer's body may take
// before a retry, whatever the pause (see drainFloor), so that even with no
// backoff (ConstantBackoff(0), a full jitter near 0) the connection is kept
// rather than closed with the body unread. The drain usually ends at once,
// and the next attempt starts when the pause has passed: the pause
// recorded (retry.backoff_ms) is the one waited for. The decision reserves
// the bound against the deadline, as it does a pause.
const drainPause = 2 * time.Millisecond

// drainFloor is the least time the drain of a discarded body of length n
// (its ContentLength, below 0 when unknown, as for a chunked body) may
// take: drainPause, or 0 for an empty body, which needs no drain, and for
// one known to be longer than maxDrain, which is closed unread.
func drainFloor(n int64) time.Duration {
	if n == 0 || n > maxDrain {
		return 0
	}
	return drainPause
}

// drainBuffers lends discard its read buffer.
var drainBuffers = sync.Pool{New: func() any { return new([512]byte) }}

// discard drains (at most maxDrain bytes, for at most bound: the verdict's
// drain) and closes a response that will not be returned, so that its
// connection can be reused and its client span ends, then releases the
// attempt. The drain ends when the attempt's context does: when the bound
// passes (the timer cancels it, see expire) or the caller cancels. Its end
// cancels a net/http body read and closes the base's body, which unblocks
// a body that ignores its context, so that neither a stalled body nor one
// that ignores the cancellation holds the operation. A body whose Close
// itself blocks is beyond any bound. The response is closed here, on the
// operation's goroutine, where the telemetry its wrapper runs may panic.
func discard(resp *http.Response, a *attempt, bound time.Duration) {
	if resp != nil && resp.Body != nil {
		if bound > 0 {
			a.state.Store(stateDraining)
			a.timer.Reset(bound)
			stop := context.AfterFunc(&a.ctx, a.raw.close)
			drain(resp.Body)
			if !stop() {
				a.raw.close() // returns once the AfterFunc's close has
			}
			a.timer.Stop()
		}
		resp.Body.Close()
		a.raw.closedAbove()
	}
	a.release()
}

func drain(body io.Reader) {
	buf := drainBuffers.Get().(*[512]byte)
	defer drainBuffers.Put(buf)
	for left := maxDrain; left > 0; {
		n, err := body.Read(buf[:min(left, len(buf))])
		left -= n
		if err != nil {
			return
		}
	}
}

// closeResponse closes a response that is dropped unread.
func closeResponse(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
}
