// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// releaser is what a response body lets go of when it is closed: the
// attempt that produced it.
type releaser interface {
	release()
	// bodyBroke is told of a read error of the body, as it comes up
	// through otelhttp's body wrapper (see attempt.bodyBroke); closed:
	// the caller had closed the body, which may be why.
	bodyBroke(err error, closed bool)
	// bodyClosing is told before the body is closed, before otelhttp's
	// wrapper ends its span (see attempt.bodyClosing).
	bodyClosing()
	// closeBase closes the base's body beneath any wrapper, running no
	// telemetry: after a panic or a runtime.Goexit in the wrapper's Close.
	closeBase()
}

// responseBody wraps the body of a response handed to the caller. Closing
// it, or reading it to its end, releases the attempt's context: the body
// is bounded by the caller's context alone, not by the attempt timeout,
// which bounded only the wait for the headers. A body that is also an
// io.Writer (a 101 Switching Protocols connection) stays one.
type responseBody struct {
	io.ReadCloser
	owner releaser
	// released: the attempt was released (release), once. A flag, not a
	// sync.Once: the release cancels the attempt's context, which asks
	// the caller's context (a type of the caller's own) for its Done and
	// Value, and a Close on another goroutine must not wait on that code.
	released atomic.Bool
	// closed: the caller closed the body; a read on another goroutine
	// that fails after it was stopped by the caller, not broken.
	closed atomic.Bool
}

func (b *responseBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		// Read to its end, the body needs its attempt no more: released
		// now, as net/http frees a request at EOF, a body never closed
		// leaves no context under the caller's (each held about 5 KB for
		// as long as the caller's context lived).
		b.release()
	case err != nil:
		b.owner.bodyBroke(err, b.closed.Load())
		err = handedOver(err)
	}
	return n, err
}

func (b *responseBody) Close() error {
	b.closed.Store(true)
	defer b.release() // also when the base's Close panics
	recorded, closed := false, false
	defer func() {
		if !recorded { // the telemetry panicked: the base's body (and what wraps it) is closed all the same
			afterPanic(func() { b.ReadCloser.Close() })
		}
		if !closed {
			// The wrapper's Close panicked or exited (otelhttp ends its
			// span, and so runs the user's span processors, before it
			// closes the body beneath): the base's body is closed all the
			// same, and its connection freed.
			afterPanic(b.owner.closeBase)
		}
	}()
	b.owner.bodyClosing()
	recorded = true
	err := b.ReadCloser.Close()
	closed = true
	return err
}

// release releases the attempt, the first time only.
func (b *responseBody) release() {
	if b.released.CompareAndSwap(false, true) {
		b.owner.release()
	}
}

type responseReadWriteCloser struct {
	*responseBody
	w io.Writer
}

func (b responseReadWriteCloser) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	if err != nil {
		b.owner.bodyBroke(err, b.closed.Load()) // otelhttp's wrapper records a write error as it does a read error
	}
	return n, err
}

// chainKey is the context key under which a redirect's Response.Request
// carries the chain its operation started (see withChain).
type chainKey struct{}

// redirect reports whether http.Client follows a response of status.
func redirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// answerToRead reports whether a success with status is an answer whose
// body the caller reads (a 2xx), not a redirect http.Client drains and
// follows, nor a 101's connection. A 3xx it does not follow (300, 304)
// is no such answer: it stays a success the caller got, its key let go
// even when its body breaks (only a 2xx whose body broke is no success:
// docs/decisions.md).
func answerToRead(status int) bool { return status >= 200 && status < 300 }

// sendAgain reports whether a redirect with status asks for the request
// again, elsewhere, body and all: 307 and 308. A write answered so was
// not applied there, so a repeat to the same URL keeps its key (see
// identity.settleKey); the hop to the other URL takes a key of its own. After a 301, 302 or 303 http.Client sends a GET:
// the write itself is not sent again, and may have been applied (a
// post/redirect/get).
func sendAgain(status int) bool {
	return status == http.StatusTemporaryRedirect || status == http.StatusPermanentRedirect
}

// withChain returns req, the request a redirect answered, to set as the
// response's Request, with the chain c its operation started: the next
// hop (Request.Response set to the response) finds it there, through any
// layer above that wraps the body (otelhttp's does) but keeps the
// response.
func withChain(req *http.Request, c *chain) *http.Request {
	return req.WithContext(context.WithValue(req.Context(), chainKey{}, c))
}

// chainOf returns the chain of the operation that produced the response a
// redirect follows, if it went through an otelretry Transport and req is
// its next hop: below the same boundary as that operation's context, at (a
// request a hook copies from the one it is handed, StateCheck.Request, a
// redirect hop's, which carries Response, and sends with its own context
// is below another: an operation of its own), and the first to follow it.
// Any later request that carries the same response starts anew: one the
// caller builds again from a finished chain's last resp.Request, and a
// hop a layer above sends again after it failed, which is a new operation
// as every try of a layer above is (net/http forks and otelhttp clones the
// request it sends, so no request can be told to be the first one again).
func chainOf(req *http.Request, at *boundary) *chain {
	if req.Response == nil || req.Response.Request == nil {
		return nil
	}
	c, _ := req.Response.Request.Context().Value(chainKey{}).(*chain)
	if c == nil || c.at != at || !c.followed.CompareAndSwap(false, true) {
		return nil
	}
	return c
}

// handOver wraps resp's body for the caller in rb (see responseBody),
// which the operation holds, so that wrapping a plain body allocates
// nothing.
func handOver(resp *http.Response, rb *responseBody, owner releaser) {
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	rb.ReadCloser, rb.owner = resp.Body, owner
	if w, ok := resp.Body.(io.ReadWriteCloser); ok {
		resp.Body = responseReadWriteCloser{rb, w}
		return
	}
	resp.Body = rb
}

// drainBuffers lends drain its read buffer.
var drainBuffers = sync.Pool{New: func() any { return new([512]byte) }}

// drain reads at most maxDrain bytes of a body that will not be returned,
// so that its connection can be reused.
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
	// A body's end may come after its last byte (a chunked body's last
	// chunk): one more read, of nothing, sees it, so that a body of exactly
	// maxDrain bytes keeps its connection too.
	_, _ = body.Read(buf[:0])
}

// closeResponse closes a response that is dropped unread.
func closeResponse(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
}

// rawBody stands directly above the response body the base returned,
// beneath the wrappers that run telemetry (otelhttp's ends its span when
// it is closed), so that the base's body is closed exactly once, whoever
// closes it and in whatever order: the wrappers above (the caller, or a
// discard), the cut of a drain that outlived its bound, or the cleanup
// after a panic. io.Closer leaves a second Close undefined, and a custom
// base's body may not allow it. Closing it runs no telemetry, which may
// panic, so that any goroutine may close it (to unblock a drain) and so
// may the cleanup after a panic.
type rawBody struct {
	body io.ReadCloser
	// closed: Close began; no read reaches the base's body after it, so
	// that a body whose Read goes on after its Close cannot carry a drain
	// past its cut.
	closed atomic.Bool
	// discardedAs is the error.type of the answer whose body is being
	// discarded, "" for a body handed over: a read error of the drain
	// keeps it, so that otelhttp's span keeps the answer's (see discard).
	discardedAs string
	// known is what the request is known by, which a read error may name
	// (see sanitizedReadError).
	known requestText
	once  sync.Once
	err   error // what the base's Close returned
}

func (r *rawBody) Read(p []byte) (int, error) {
	if r.closed.Load() {
		return 0, r.cut(http.ErrBodyReadAfterClose)
	}
	n, err := r.body.Read(p)
	if err != nil && err != io.EOF {
		err = r.cut(sanitizedReadError(err, r.known))
	}
	return n, err
}

// discarding notes that the body is drained to be discarded, the answer's
// error.type errorType (see cut).
func (r *rawBody) discarding(errorType string) { r.discardedAs = errorType }

// cut is a read error of the body: a discarded body's, whatever ended its
// drain (its cut, the cut's cancellation, a break), keeps its answer's
// error.type.
func (r *rawBody) cut(err error) error {
	if r.discardedAs == "" {
		return err
	}
	return newBodyError(err, "", r.discardedAs)
}

// Close closes the base's body, once; a later call returns the first
// one's error, once that first call returned.
func (r *rawBody) Close() error {
	r.close()
	return r.err
}

func (r *rawBody) close() {
	r.closed.Store(true)
	r.once.Do(func() {
		if r.body == nil {
			return
		}
		if err := r.body.Close(); err != nil {
			r.err = sanitizedReadError(err, r.known) // it may name the request as a read error may
		}
	})
}

// closeAlone closes the base's body on a goroutine of otelretry's own (the
// cut of a drain, the caller's cancellation during one), where nothing
// could recover a panic of the base's Close: it is reported through
// otel.Handle instead of ending the process.
func (r *rawBody) closeAlone() {
	defer reportPanic("a response body's Close")
	r.close()
}

// reportPanic, deferred on a goroutine of otelretry's own that runs user
// code nobody waits for, reports a panic of it through otel.Handle and
// drops it, where it would end the process.
func reportPanic(what string) {
	if v := recover(); v != nil {
		handleStrayPanic(what, v)
	}
}

// hold keeps the base's body and returns what stands for it above: r, or,
// for a body that is also a writer (a 101 Switching Protocols connection),
// one that stays a writer. http.NoBody, which has nothing to close, stays
// itself, so that the layers above still see an empty body.
func (r *rawBody) hold(body io.ReadCloser, known requestText) io.ReadCloser {
	r.body, r.known = body, known
	if body == http.NoBody {
		return body
	}
	if w, ok := body.(io.ReadWriteCloser); ok {
		return rawReadWriteCloser{r, w}
	}
	return r
}

// rawReadWriteCloser is a held body that is also a writer.
type rawReadWriteCloser struct {
	*rawBody
	w io.Writer
}

func (b rawReadWriteCloser) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	if err != nil {
		err = sanitizedReadError(err, b.known)
	}
	return n, err
}

// endWatch sits under otelhttp's body wrapper and calls its end function
// once, at the body's end or close, before otelhttp ends its span: an
// HTTP/2 request body, and a resend net/http makes, may finish writing
// after the response headers arrived (see the late writes in
// operation.conclude). For a failed answer it also keeps error.type the
// answer's when the body breaks while it is read.
type endWatch struct {
	io.ReadCloser
	// answer is the attempt's event, once it was judged: its error.type.
	answer *attemptEvent
	end    func()
	done   atomic.Bool
}

func (b *endWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.ended()
	case err != nil && b.answer.errorType() != "":
		// otelhttp records the read error's type as error.type, which
		// must stay the answer's.
		err = newBodyError(err, "", b.answer.errorType())
	}
	return n, err
}

func (b *endWatch) Close() error {
	b.ended()
	return b.ReadCloser.Close()
}

func (b *endWatch) ended() {
	if b.end != nil && b.done.CompareAndSwap(false, true) {
		b.end()
	}
}

// hasBody reports whether r has a body to send: not nil nor http.NoBody.
func hasBody(r *http.Request) bool { return r.Body != nil && r.Body != http.NoBody }
