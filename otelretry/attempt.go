// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// attempt is one network call of an operation.
//
// It first prepares its request (out): a copy of the caller's request with
// its own header map and context, its body (the caller's for the first
// attempt, a fresh one from GetBody for the others), run through the
// user's PrepareFunc. That prepared request is the attempt's one subject:
// the policy judges it, the wire carries it, and the attempt event
// records it.
//
// Its context is a standard context.WithCancelCause child of the
// operation's context. Once the attempt is sent, a timer (time.AfterFunc)
// cancels it with errAttemptTimeout if the answer does not come in time
// (see waitBound and the httptrace hooks in wire.go), and is stopped when
// the response headers arrive: the timer bounds the wait for an answer,
// while the body of a response handed to the caller is bounded by the
// caller's context alone, as with http.Transport's ResponseHeaderTimeout.
// The context is canceled for good when the attempt is released: when the
// caller closes the returned body, or when the transport is done with a
// response it does not return.
type attempt struct {
	op    *operation
	n     int           // number within this operation, from 1
	start time.Duration // since the operation's start, when it is sent
	end   time.Duration // when the headers (or the failure) came

	ctx    attemptContext
	cancel context.CancelCauseFunc
	timer  *time.Timer
	// state resolves the race between the answer and the timer: whichever
	// moves it from stateWaiting first decides whether the attempt timed out.
	state atomic.Int32

	copy requestCopy   // the prepared request's storage when no PrepareFunc clones it
	out  *http.Request // the prepared request
	body io.ReadCloser // the body the attempt holds until the base takes it

	wire wire
	// span is the attempt's span: otelhttp's CLIENT span, found in the
	// context of the request that reaches innermost, or the transport's
	// own INTERNAL span.
	span trace.Span
	ev   attemptEvent
	// raw is the base's response body, beneath any wrapper, while the
	// transport holds it (see rawBody).
	raw rawBody
}

// requestCopy holds an attempt's copy of the caller's request and of its
// URL, so that a hook that writes into the copy it is shown
// (Answer.Request) changes neither the caller's request nor the next
// attempt's, at no allocation of their own.
type requestCopy struct {
	req http.Request
	url url.URL
}

const (
	stateWaiting  int32 = iota // for the response headers
	stateAnswered              // the headers (or a failure) came in time
	stateTimedOut              // the timer fired first
	stateDraining              // a discarded body is being drained (see discard)
)

// attemptContext is the attempt's context: the standard cancel context,
// and the attempt itself for innermost to find. Only Value is its own;
// cancellation is the embedded context's, so contexts derived from it
// (http.Transport derives one per request) attach to it directly.
type attemptContext struct {
	context.Context
	a *attempt
}

type attemptKey struct{}

func (c *attemptContext) Value(key any) any {
	if key == (attemptKey{}) {
		return c.a
	}
	return c.Context.Value(key)
}

// newAttempt prepares attempt n: its body, its context and the timer that
// bounds it, its prepared request, the resend guard, and its span when the
// transport makes attempt spans. When the prepared attempt may not be sent
// (decide, phasePrepared), it returns the verdict that ends the operation,
// with its cause.
func (op *operation) newAttempt(n int) (*attempt, verdict, error) {
	a := &op.first
	if n > 1 {
		a = new(attempt) // the base may still hold the earlier one
	}
	a.op, a.n = op, n
	a.ev.attempt = op.attemptNumber(n)
	op.progress.current = a
	a.arm()
	body, err := op.attemptBody(n)
	var prepErr, changed error
	if err == nil {
		a.body = body
		op.progress.callerBody = false // the attempt holds it now, and closes it if it is not sent
		a.out = a.copyRequest()
		prepErr = a.prepare()
		if prepErr == nil {
			if n == 1 {
				op.judgeFirst(a.out)
			}
			changed = op.prepareChanged(a.out, n)
		}
	}
	in := op.inputAt(phasePrepared, op.since())
	in.bodyUnavailable, in.prepareFailed, in.prepareChanged = err != nil, prepErr != nil, changed != nil
	if v := decide(in); !v.goAhead() {
		a.unsent()
		op.abandonPlanned(a.ev.attempt, v)
		return nil, v, op.prepareCause(a, err, prepErr, changed)
	}
	a.start = op.since()
	a.ev.url = op.preparedURL(a.out)
	a.timer = time.AfterFunc(a.waitBound(), a.expire)
	a.guard()
	a.wire.live.Store(true)
	if op.t.mode == sendWithOwnSpan {
		ctx, span := op.t.tracer.Start(a.out.Context(), op.t.cfg.attemptName(op.req), op.t.internal...)
		a.span = span
		a.out = a.out.WithContext(ctx)
	}
	return a, verdict{}, nil
}

// prepareCause is the cause of an attempt that was not sent, sanitized.
func (op *operation) prepareCause(a *attempt, bodyErr, prepErr, changed error) error {
	var wireURL *url.URL
	if a.out != nil {
		wireURL = a.out.URL
	}
	var readErr *bufferReadError
	switch {
	case errors.As(bodyErr, &readErr):
		return op.sanitize(bodyErr, nil)
	case bodyErr != nil:
		return op.sanitize(getBodyError{bodyErr}, nil)
	case prepErr != nil:
		return op.sanitize(prepareError{prepErr}, wireURL)
	case changed != nil:
		return op.sanitize(prepareError{changed}, wireURL)
	}
	return nil
}

// preparedURL is the URL a PrepareFunc may have changed, for the attempt
// event and errors to sanitize; nil when no PrepareFunc ran, and the URL
// is the caller's, sanitized once per operation.
func (op *operation) preparedURL(out *http.Request) *url.URL {
	if op.t.cfg.prepare == nil {
		return nil
	}
	return out.URL
}

// attemptBody is the body attempt n starts from: the caller's for the
// first, a fresh copy from the caller's GetBody for the others; a copy of
// the buffer for every attempt when the body was buffered (bufferBody).
func (op *operation) attemptBody(n int) (io.ReadCloser, error) {
	if op.buffered != nil {
		return op.buffered.getBody()
	}
	if n == 1 || !op.policy.hasBody {
		return op.req.Body, nil
	}
	return op.req.GetBody()
}

// arm gives the attempt its context. Its timer starts when the prepared
// attempt is sent (see newAttempt); the preparation is bounded by the
// deadline alone (see prepare).
func (a *attempt) arm() {
	cctx, cancel := context.WithCancelCause(a.op.ctx)
	a.cancel = cancel
	a.ctx = attemptContext{Context: httptrace.WithClientTrace(cctx, a.traceHooks()), a: a}
}

// waitBound is the first bound of a sent attempt. A cut proves only what it
// proves: a cut before the request got a connection proves it was not sent
// and can be retried, but a cut after it was written leaves a write's
// outcome unknown. So the attempt timeout bounds the whole wait only where
// a cut can be followed up (cutRetryable); otherwise it bounds getting a
// connection and writing the headers, from the moment the base reports it
// is getting a connection (gettingConnection), and the deadline bounds the
// rest. A base that reports nothing through httptrace gets the deadline
// alone for such a request: nothing would tell what its cut proved.
func (a *attempt) waitBound() time.Duration {
	left := a.op.clock.limit - a.start
	if a.cutRetryable() {
		return min(a.op.policy.attemptTimeout, left)
	}
	return left
}

// cutRetryable reports whether the attempt timeout may cut the attempt
// once its request was written: when the policy may repeat it, or when a
// state check (WithStateCheck) will resolve the unknown outcome a cut
// leaves, and may let it be sent again. Cutting any other write would buy
// nothing: it could not be retried, and an answer on its way would be lost.
func (a *attempt) cutRetryable() bool {
	return a.op.policy.repeatable || a.op.t.cfg.stateCheck != nil
}

// copyRequest makes the attempt's copy of the caller's request, with the
// attempt's context and body and a header map of its own: a deep copy
// (Request.Clone) when a PrepareFunc may change it, else a copy held in
// the attempt, whose header map alone is cloned.
func (a *attempt) copyRequest() *http.Request {
	req := a.op.req
	if a.op.t.cfg.prepare != nil {
		out := req.Clone(&a.ctx)
		out.Body = a.body
		if out.Header == nil {
			out.Header = http.Header{}
		}
		return out
	}
	// WithContext is inlined and its copy does not escape: the request is
	// copied into a, with no allocation of its own.
	c := &a.copy
	c.req = *req.WithContext(&a.ctx)
	c.url = *req.URL
	c.req.URL = &c.url
	c.req.Body = a.body
	c.req.Header = req.Header.Clone()
	if c.req.Header == nil {
		c.req.Header = http.Header{} // otelhttp and propagators write into it
	}
	a.wire.source = a.callerBodyAgain()
	return &c.req
}

// callerBodyAgain is what makes the caller's body again for a resend
// below: the buffer's copy, the caller's GetBody, or nil when it has none.
func (a *attempt) callerBodyAgain() func() (io.ReadCloser, error) {
	if b := a.op.buffered; b != nil && b.err == nil {
		return b.getBody
	}
	if !a.op.policy.hasBody || a.op.req.GetBody == nil {
		return nil
	}
	return a.op.req.GetBody
}

// prepare runs the user's PrepareFunc on the attempt's copy. A body it
// replaced is closed; what makes the prepared body again (wire.source) is
// its GetBody, or the caller's when the body is still the caller's: a
// GetBody left from the caller's request refuses once the body was
// replaced, so that the caller's bytes never go out in place of the
// prepared ones.
func (a *attempt) prepare() error {
	hook := a.op.t.cfg.prepare
	if hook == nil {
		return nil
	}
	out, given := a.out, a.out.Body
	replaced := false
	if caller := a.callerBodyAgain(); caller != nil {
		out.GetBody = func() (io.ReadCloser, error) {
			if replaced {
				return nil, errNoPreparedBody
			}
			return caller()
		}
	}
	// The hook's context ends at the deadline with DeadlineExceeded, as a
	// context deadline does (the attempt's own context ends only when it is
	// canceled): a hook that waits on it sees the deadline it ran into.
	ctx, cancel := context.WithDeadline(&a.ctx, a.op.clock.deadline)
	defer cancel()
	hooked := out.WithContext(ctx)
	err := hook(hooked, a.ev.attempt)
	out = hooked.WithContext(&a.ctx)
	a.out = out
	if out.Header == nil {
		out.Header = http.Header{} // no headers, as the PrepareFunc meant; never a nil map below
	}
	replaced = out.Body != given
	if replaced && given != nil {
		given.Close()
	}
	if !replaced && sameHeader(out.Trailer, a.op.req.Trailer) {
		// Clone copied the caller's Trailer map, and the values the
		// caller's body sets while it is read go into the caller's: net/http
		// writes the sent request's map after the body's EOF. Unless the
		// PrepareFunc changed the trailers, the caller's map is sent.
		out.Trailer = a.op.req.Trailer
	}
	a.body, a.wire.source = out.Body, out.GetBody
	if !hasBody(out) {
		a.wire.source = nil
	}
	return err
}

func hasBody(r *http.Request) bool { return r.Body != nil && r.Body != http.NoBody }

// sameHeader reports whether two header maps hold the same values.
func sameHeader(a, b http.Header) bool { return maps.EqualFunc(a, b, slices.Equal) }

// guard sets up the resend guard on the prepared request (see wire), as
// planResends says.
func (a *attempt) guard() {
	out, w := a.out, &a.wire
	w.guarded = guardsResends(a.op.policy.repeatable, a.op.t.cfg.trustResends)
	w.plan = planResends(hasBody(out), w.source != nil, w.guarded, a.op.t.mayGoOverHTTP2(out.URL))
	switch w.plan {
	case resendWithEvidence, resendNever:
		out.GetBody = nil
	case resendPrepared:
		out.GetBody = w.getBody
	case resendHiddenKeys:
		hideIdempotencyKeys(out.Header)
	}
}

// unsent releases an attempt that will not be sent, and closes the body
// no call takes.
func (a *attempt) unsent() {
	a.release()
	if a.body != nil {
		a.body.Close()
		a.body = nil
	}
	a.op.progress.callerBody = false
}

// expire is the attempt timer's function: the headers did not come in
// time, or a discarded body did not drain within its bound (the timer is
// re-armed for that, see discard).
func (a *attempt) expire() {
	if a.state.CompareAndSwap(stateWaiting, stateTimedOut) {
		a.cancel(errAttemptTimeout)
	} else if a.state.Load() == stateDraining {
		a.cancel(drainCutError{a.ev.errorType()}) // which closes the body (see discard)
	}
}

// rearm restarts the attempt timer for d while the attempt still waits for
// its answer: httptrace's hooks move it from phase to phase. A hook that
// comes late (WroteRequest may fire after RoundTrip returned) finds the
// attempt answered and changes nothing.
func (a *attempt) rearm(d time.Duration) {
	if a.state.Load() == stateWaiting {
		a.timer.Reset(d)
	}
}

// release ends the attempt: its timer stops and its context is canceled.
// It may be called more than once.
func (a *attempt) release() {
	if a.timer != nil {
		a.timer.Stop()
	}
	if a.cancel != nil {
		a.cancel(nil)
	}
}

// abandon cleans up after a panic in the base, a hook, the telemetry or
// the transport itself: it releases the attempt, closes a request body no
// call took, and the base's response body (the one being handed over
// included), beneath any wrapper. It runs no telemetry (see
// endAfterPanic); a body's Close that panics does not stop it.
func (a *attempt) abandon() {
	a.release()
	if b := a.body; b != nil {
		a.body = nil
		afterPanic(func() { b.Close() }) // the panic came before any call took it
	}
	afterPanic(a.raw.close)
}

// endAfterPanic ends the attempt's span with an event naming the panic r
// (nil for runtime.Goexit).
func (a *attempt) endAfterPanic(r any) {
	if a.span == nil {
		return
	}
	if a.op.t.mode == sendThroughClient && a.span.IsRecording() {
		// otelhttp recorded the raw url.full; the attempt event, which
		// overwrites it, may not have been written.
		a.span.SetAttributes(attrs.URLFullKey.String(a.ev.sanitizedURL(a.op)))
	}
	endWithPanic(a.span, r)
}

// exchange sends r, the prepared request as it reaches the innermost
// layer, to the base and returns what came back: a usable response or an
// error, never both.
func (a *attempt) exchange(r *http.Request) (*http.Response, error) {
	a.body = nil // the base owns the body now
	resp, err := a.op.t.base.RoundTrip(r)
	a.end = a.op.since()
	timedOut := !a.state.CompareAndSwap(stateWaiting, stateAnswered)
	a.timer.Stop()
	resp, err = usableResponse(a.op.t.base, resp, err, methodOf(r))
	switch {
	case timedOut && err == nil:
		// The timer won the race by a hair: the context is canceled, so
		// the body could not be read.
		closeResponse(resp)
		return nil, errAttemptTimeout
	case timedOut && !errors.Is(err, errAttemptTimeout):
		// A base that reports its canceled context rather than its cause:
		// say what happened, and keep what it said.
		return nil, fmt.Errorf("%w (%w)", errAttemptTimeout, err)
	case err == nil:
		a.raw.body = resp.Body
	}
	return resp, err
}

// usableResponse checks what a base returned as http.Client and otelhttp
// do: a response with an error is closed and the error wins; a nil
// response, a status outside 100–999 or a nil body with a length are
// errors.
func usableResponse(base http.RoundTripper, resp *http.Response, err error, method string) (*http.Response, error) {
	switch {
	case err != nil:
		closeResponse(resp)
		return nil, err
	case resp == nil:
		return nil, fmt.Errorf("otelretry: RoundTripper implementation (%T) returned a nil *Response with a nil error", base)
	case resp.StatusCode < 100 || resp.StatusCode > 999:
		closeResponse(resp)
		return nil, fmt.Errorf("otelretry: RoundTripper implementation (%T) returned a response with status %d", base, resp.StatusCode)
	case resp.Body == nil && resp.ContentLength > 0 && method != http.MethodHead:
		return nil, fmt.Errorf("otelretry: RoundTripper implementation (%T) returned a *Response with content length %d but a nil Body", base, resp.ContentLength)
	case resp.Body == nil:
		resp.Body = http.NoBody
	}
	return resp, nil
}

// watchLateWrites wraps, under otelhttp's body wrapper, the body of a
// response on a recording CLIENT span whose base reports its writes, so
// that writes reported after the headers are counted (see lateWrites). A
// base that reported nothing through httptrace will not report late.
func (a *attempt) watchLateWrites(resp *http.Response) {
	if !a.span.IsRecording() || !a.wire.reportsWrites() {
		return
	}
	if _, rw := resp.Body.(io.ReadWriteCloser); rw {
		return
	}
	// The wrapper lives in the attempt, which outlives the body.
	a.wire.late = lateWrites{ReadCloser: resp.Body, a: a, span: a.span}
	resp.Body = &a.wire.late
}

// conclude turns what the exchange returned into the attempt's result: it
// observes the answer, asks the classifier, gathers the decision's input,
// charges the budget, decides, and records the attempt event once. It
// returns the response or the sanitized error (never both) with the
// verdict.
func (a *attempt) conclude(resp *http.Response, err error) result {
	op := a.op
	answer := a.observe(resp, err)
	in := a.gather(answer, op.t.cfg.classify(answer))
	if o, ok := budgetCharge(in, a.ev.retryAfter); ok && op.t.budget != nil {
		op.t.budget.record(op.key(), op.clock.start.Add(a.end), o)
	}
	v := op.settle(in, a.n, &answer)
	a.ev.verdict = v
	op.progress.lastEvent = &a.ev
	a.record()
	if err != nil {
		ae := newAttemptError(err, a.ev.class, op.req.URL, a.ev.url)
		ae.verdict, ae.decided = v, true
		return result{err: ae, v: v}
	}
	return result{resp: resp, v: v}
}

// observe records what came back in the attempt event and returns it as
// the hooks see it (Answer): a status and its Retry-After, or an error and
// its class.
func (a *attempt) observe(resp *http.Response, err error) Answer {
	op, ev := a.op, &a.ev
	ev.elapsed = a.end - a.start
	ev.remaining = op.clock.limit - a.start
	ev.writes = a.wire.writesSoFar()
	answer := Answer{Request: a.out, Attempt: ev.attempt}
	if prev := op.progress.lastEvent; prev != nil && prev.verdict.decision == attrs.DecisionRetry {
		answer.PreviousPause = prev.verdict.pause
	}
	if err != nil {
		in := op.inputAt(phaseAttempt, a.end)
		ev.class = observedClass(classify(err), a.state.Load() == stateTimedOut, in.callerCanceled, in.callerDeadline)
		answer.Err, answer.ErrorClass = err, ev.class
		return answer
	}
	ev.status = resp.StatusCode
	if ev.writes == 0 && a.wire.reportsWrites() {
		// An answer proves the request went out: an HTTP/2 client may report
		// the write (WroteRequest) only after the response arrived.
		ev.writes = 1
	}
	answer.StatusCode, answer.Header, answer.contentLength = resp.StatusCode, resp.Header, resp.ContentLength
	// resp.Header.Get without canonicalizing the canonical key.
	if v := resp.Header["Retry-After"]; len(v) > 0 && v[0] != "" {
		ev.retryAfter, ev.retryAfterError = ParseRetryAfter(v[0], op.clock.start.Add(a.end))
		ev.hasRetryAfter = ev.retryAfterError == nil
		answer.RetryAfter = ev.retryAfter
	}
	return answer
}

// gather builds the decision's input from the attempt's answer and the
// classifier's verdict, at the time left after the classifier ran. The
// class the attempt records is the one recordedClass returns.
func (a *attempt) gather(answer Answer, c Classification) input {
	op, ev := a.op, &a.ev
	in := op.inputAt(phaseAttempt, op.since())
	in.attemptsLeft = op.policy.maxAttempts - a.n
	in.classifier = c
	if answer.Err != nil {
		var wireEvidence Evidence
		proved := false
		if a.wire.plan == resendWithEvidence {
			wireEvidence, proved = h2Unprocessed(answer.Err)
		}
		ev.class, ev.evidence = recordedClass(ev.class, c, wireEvidence)
		in.class, in.written = ev.class, a.wire.reachedWire()
		unsent := neverSent(answer.Err, ev.class) || a.wire.unsentByTrace()
		in.notProcessed = provedUnprocessed(unsent, in.written, c, proved)
		return in
	}
	in.status, in.retryableStatus = ev.status, op.t.isRetryableStatus(ev.status)
	in.retryAfter = ev.retryAfter
	in.drainFloor = drainFloor(answer.contentLength)
	return in
}

// record writes the attempt event once: on the attempt's span (ending it
// when it is the transport's own), the log and the metrics.
func (a *attempt) record() {
	span := a.span
	if span == nil {
		span = nonRecording // no attempt span: logs and metrics only
	}
	a.op.record(span, a.op.t.mode == sendWithOwnSpan, &a.ev)
}

// rawBody is the response body the base returned, beneath the wrappers
// that run telemetry (otelhttp's ends its span when it is closed). Closing
// it runs none, which may panic, so that any goroutine may close it (to
// unblock a drain, see discard) and so may the cleanup after a panic (see
// abandon). It is closed once.
type rawBody struct {
	body io.Closer
	once sync.Once
}

func (r *rawBody) close() {
	r.once.Do(func() {
		if r.body != nil {
			r.body.Close()
		}
	})
}

// closedAbove records that the body was closed through its wrappers, so
// that it is not closed again.
func (r *rawBody) closedAbove() { r.once.Do(func() {}) }

// nonRecording stands for the span of an attempt that has none.
var nonRecording = trace.SpanFromContext(context.Background())
