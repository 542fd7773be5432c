// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// attempt is one network call of an operation.
//
// Its context is a standard context.WithCancelCause child of the
// operation's context. A timer (time.AfterFunc) cancels it with
// errAttemptTimeout if the response headers do not arrive in time, and is
// stopped when they do: the attempt timeout bounds the wait for an answer,
// while the body of a response handed to the caller is bounded by the
// caller's context alone, as with http.Transport's ResponseHeaderTimeout.
// The context is canceled for good when the attempt is released: when the
// caller closes the returned body, or when the transport is done with a
// response it does not return.
type attempt struct {
	op     *operation
	n      int           // number within this operation
	number int           // the recorded number (see attemptNumber)
	start  time.Duration // since op.start, when it is sent
	end    time.Duration // when the headers (or the failure) came, since op.start

	ctx    attemptContext
	cancel context.CancelCauseFunc
	timer  *time.Timer
	// trace holds the httptrace hooks (GotConn, WroteHeaders, WroteRequest)
	// that report what reached the wire.
	trace httptrace.ClientTrace

	req  http.Request // the caller's request, copied to carry ctx
	out  *http.Request
	body io.ReadCloser // the body it sends; closed by unsent if it never goes
	// drained is the discarded response body being drained (see discard).
	drained io.ReadCloser
	// span is the attempt's span: the transport's own INTERNAL span (own),
	// or otelhttp's CLIENT span, found in the context of the request that
	// reaches innermost.
	span trace.Span
	// fields holds the event's fields while otelhttp's RoundTrip finishes
	// (see writeFields).
	fields []attribute.KeyValue
	ev     attemptEvent
	err    error // the attempt's error as reported upward (attemptError)
	// late wraps the body of a response on otelhttp's span (see conclude).
	late lateWrites

	// The 4-byte and 1-byte fields come last, together, so that the struct
	// packs without padding: an attempt after the first is an allocation of
	// its own, and this keeps it in a smaller size class.

	// state resolves the race between the answer and the timer: whichever
	// moves it from stateWaiting first decides whether the attempt timed out.
	state   atomic.Int32
	writes  atomic.Int32
	written atomic.Bool // a write completed without error
	// gotConn: the base took a connection for the request (GotConn), so
	// its writing may have begun; headersOut: it reported the headers
	// written (WroteHeaders); connWriteFailed: it reported a write that
	// failed writing to the connection itself (a *net.OpError), as HTTP/1
	// does when a request never left. See reachedWire and getBody.
	gotConn, headersOut, connWriteFailed atomic.Bool
	// resendAfter is the count of writes (at least 1) at the time a lower
	// layer that had taken a connection asked for a fresh body (GetBody):
	// a resend is coming, which WroteRequest may report late.
	resendAfter atomic.Int32
	drainClose  sync.Once // closes drained once (see closeDrained)
	// guarded: GetBody refuses once the request was written (see
	// guardResend).
	guarded bool
	sent    bool
	own     bool
	// viaClient: the attempt goes through otelhttp; inClient: otelhttp's
	// RoundTrip is running (see writeFields).
	viaClient bool
	inClient  bool
	concluded bool
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

// prepareError is a PrepareFunc's error.
type prepareError struct{ error }

func (e prepareError) Unwrap() error { return e.error }

// errPrepareRetarget is the cause when a PrepareFunc changed what the
// policy was decided for: the method or the host.
var errPrepareRetarget = errors.New("otelretry: PrepareFunc changed the request's method or host")

// newAttempt sets attempt n up: its body (the caller's for the first, a
// fresh one from GetBody for the others), its context and the timer that
// bounds it, its copy of the request, the user's preparation, the guard
// against resends below, and its span when the transport makes attempt
// spans. When the attempt cannot be made, it returns the verdict that ends
// the operation, with its cause: GetBody or the preparation failed, or
// they took the time that was left.
func (op *operation) newAttempt(n int) (*attempt, verdict, error) {
	body := op.req.Body
	if n > 1 && op.hasBody {
		var err error
		if body, err = op.req.GetBody(); err != nil {
			return nil, verdict{decision: attrs.DecisionStop, reason: attrs.ReasonNotReplayable},
				op.sanitize(fmt.Errorf("otelretry: GetBody: %w", err), nil)
		}
	}
	a := &op.first
	if n > 1 {
		a = new(attempt) // the base may still hold the earlier one
	}
	a.op, a.n, a.body = op, n, body
	a.number = op.attemptNumber(n)
	op.current = a
	prepare := op.t.cfg.prepare
	parent := op.ctx
	if op.t.attemptSpans && prepare == nil {
		parent, a.span = op.t.tracer.Start(op.ctx, op.t.cfg.attemptName(op.req), op.t.internal...)
		a.own = true
	}
	cctx, cancel := context.WithCancelCause(parent)
	a.cancel = cancel
	a.trace.GotConn, a.trace.WroteHeaders, a.trace.WroteRequest = a.gotConnection, a.wroteHeaders, a.wroteRequest
	a.ctx = attemptContext{Context: httptrace.WithClientTrace(cctx, &a.trace), a: a}
	// WithContext is inlined and its copy does not escape: the request is
	// copied into a, with no allocation of its own.
	a.req = *op.req.WithContext(&a.ctx)
	a.req.Body = body
	if a.req.Header == nil {
		a.req.Header = http.Header{} // otelhttp and propagators write into it
	}
	a.out = &a.req
	// The timer is armed before the preparation, which counts against the
	// attempt: a slow hook cannot carry the call past the deadline.
	now := op.since()
	a.timer = time.AfterFunc(min(op.t.cfg.attemptTimeout, op.limit-now), a.expire)
	if prepare != nil {
		a.out = a.req.Clone(&a.ctx)
		err := prepare(a.out, a.number)
		if err == nil && (methodOf(a.out) != op.method || a.out.URL == nil || a.out.URL.Host != op.req.URL.Host) {
			err = errPrepareRetarget
		}
		if err != nil {
			a.unsent()
			return nil, verdict{decision: attrs.DecisionStop, reason: attrs.ReasonPrepareFailed}, op.sanitize(prepareError{err}, a.out.URL)
		}
		now = op.since() // the preparation took time
	}
	a.start = now
	if a.start >= op.limit || a.state.Load() == stateTimedOut {
		a.unsent()
		return nil, verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonDeadline}, nil
	}
	op.guardResend(a) // after the preparation: on the headers that are sent
	if op.t.attemptSpans && prepare != nil {
		var ctx context.Context
		ctx, a.span = op.t.tracer.Start(a.out.Context(), op.t.cfg.attemptName(op.req), op.t.internal...)
		a.own = true
		a.out = a.out.WithContext(ctx)
	}
	return a, verdict{}, nil
}

// unsent releases an attempt that will not be sent, and closes the body
// no call takes.
func (a *attempt) unsent() {
	a.release()
	if a.body != nil {
		a.body.Close()
		a.body = nil
	}
	a.op.callerBody = false
}

// attemptNumber is the number of attempt n of the operation: counting on
// from the earlier operations under the same WithOperationID (redirect
// hops and repeats by an outer layer alike), or from the hops before this
// one in a redirect chain, so that request ids stay unique.
func (op *operation) attemptNumber(n int) int {
	if op.oc != nil {
		return int(op.oc.attempts.Add(1))
	}
	return op.attemptBase + n
}

// expire is the attempt timer's function: the headers did not come in
// time, or a discarded body did not drain within its bound (the timer is
// re-armed for that, see discard).
func (a *attempt) expire() {
	if a.state.CompareAndSwap(stateWaiting, stateTimedOut) {
		a.cancel(errAttemptTimeout)
	} else if a.state.Load() == stateDraining {
		a.cancel(drainCutError{a.ev.errorType()})
		// A body that ignores its context is unblocked by closing it.
		a.closeDrained()
	}
}

// closeDrained closes the body being drained, once: the drain's bound
// (from the timer's goroutine) and the drain's end may both close it.
func (a *attempt) closeDrained() {
	a.drainClose.Do(func() {
		if a.drained != nil {
			a.drained.Close()
		}
	})
}

// release ends the attempt: its timer stops and its context is canceled.
// It may be called more than once.
func (a *attempt) release() {
	if a.timer != nil {
		a.timer.Stop()
	}
	a.cancel(nil)
}

// drainCutError cancels the attempt's context when a discarded body did
// not drain within its bound. Its error.type is the answer's, so that the
// client span keeps the one it had.
type drainCutError struct{ errorType string }

func (drainCutError) Error() string {
	return "otelretry: discarded response body not drained before the next attempt; connection closed"
}
func (e drainCutError) ErrorType() string { return e.errorType }

// abandon cleans up after a panic (r, nil for runtime.Goexit) in the base,
// a hook or the transport itself: it releases the attempt and ends its
// own span with an event naming the panic.
func (a *attempt) abandon(r any) {
	if a.cancel != nil {
		a.release()
	}
	if !a.sent && a.body != nil {
		a.body.Close() // the panic came before any call took it
		a.body = nil
	}
	if a.own && !a.concluded {
		a.span.AddEvent(attrs.EventPanic, trace.WithAttributes(panicAttributes(r)...))
		a.span.SetStatus(codes.Error, attrs.EventPanic)
		a.span.End()
	}
}

// wroteRequest is httptrace's WroteRequest hook: one call per write of the
// request on the wire, including a resend net/http makes by itself.
func (a *attempt) wroteRequest(info httptrace.WroteRequestInfo) {
	a.writes.Add(1)
	switch {
	case info.Err == nil:
		a.written.Store(true)
	case failedConnWrite(info.Err):
		a.connWriteFailed.Store(true)
	}
}

// failedConnWrite reports whether err is a failed write to the connection
// itself. It is a function of its own so that the *net.OpError errors.As
// needs is allocated only when a write failed, not on every write.
func failedConnWrite(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "write"
}

// reachedWire reports whether the request may have reached the server, so
// that the server may have begun to act on it even before its body
// arrived: a write completed, or the headers were reported written and
// writing to the connection did not fail. (HTTP/1 reports its headers
// before it flushes them; a flush that fails is a failed write to the
// connection, and such a request never left: net/http may resend it
// safely. HTTP/2 and HTTP/3 report a body write cut by a stream reset,
// after the headers left.)
func (a *attempt) reachedWire() bool {
	return a.written.Load() || (a.headersOut.Load() && !a.connWriteFailed.Load())
}

// gotConnection is httptrace's GotConn hook (see getBody).
func (a *attempt) gotConnection(httptrace.GotConnInfo) { a.gotConn.Store(true) }

// wroteHeaders is httptrace's WroteHeaders hook (see reachedWire).
func (a *attempt) wroteHeaders() { a.headersOut.Store(true) }

// guardResend keeps a layer below the transport from resending a write
// behind its back. net/http resends a request by itself when it deems it
// replayable and the failure allows it: HTTP/1 on a keep-alive connection
// that died (GET, HEAD, OPTIONS, TRACE, or any method carrying
// Idempotency-Key or X-Idempotency-Key), HTTP/2 on REFUSED_STREAM, a
// GOAWAY, and also PROTOCOL_ERROR (golang/go#47635), which proves nothing;
// quic-go's HTTP/3 client on a rejected stream. Each asks for a fresh body
// through GetBody, or reuses a request that has none. So for a write the
// policy does not treat as repeatable, the attempt's GetBody hands out a
// fresh body only while the request never reached the wire (a resend of a
// request that never left stays possible) and refuses with
// errResendRefused once it may have: the attempt fails, its outcome unknown,
// instead of the write being repeated unseen. A bodyless write is given an
// empty body that is not http.NoBody, so that the lower layer must ask,
// wherever it might resend without asking (see Transport.resendsBodyless);
// over HTTP/1 that sends POST, PUT and PATCH with Transfer-Encoding:
// chunked and an empty body instead of Content-Length: 0.
func (op *operation) guardResend(a *attempt) {
	out := a.out
	a.guarded = !op.repeatable && !op.t.cfg.trustResends && (!op.hasBody || out.GetBody != nil)
	if a.guarded && !op.hasBody && (netHTTPIdempotencyKey(out.Header) || op.t.resendsBodyless(out.URL)) {
		out.Body, out.ContentLength = emptyBody{}, 0
	}
	if a.guarded || (op.hasBody && out.GetBody != nil) {
		out.GetBody = a.getBody
	}
}

// getBody is the attempt's GetBody: it notes a lower layer's request for a
// fresh body to send the attempt again and, when guarded, refuses it once
// the request may have left. That is decided on what the lower layer
// reported before it asked, never on what it may report after: HTTP/2 and
// HTTP/3 clients can ask before they report the headers they wrote, so
// once a connection was taken the resend is refused, unless a write was
// reported failed with none completed (HTTP/1's resend of a request that
// never left). A request refused that way which had not left after all (a
// connection found unusable) ends check_state: the safe side.
func (a *attempt) getBody() (io.ReadCloser, error) {
	if a.guarded && (a.written.Load() || (a.gotConn.Load() && !a.connWriteFailed.Load())) {
		return nil, errResendRefused
	}
	if a.gotConn.Load() {
		// A resend of a request that went to a connection: WroteRequest may
		// report the first write, or this one, only after the attempt's
		// span ended, so count it now.
		a.resendAfter.Store(max(a.writes.Load(), 1))
	}
	if !a.op.hasBody {
		return emptyBody{}, nil
	}
	return a.op.req.GetBody()
}

// wireWrites is the attempt's count of writes on the wire so far: what
// httptrace reported, and one more than the writes when a lower layer
// asked for a fresh body to resend it.
func (a *attempt) wireWrites() int32 {
	w := a.writes.Load()
	if r := a.resendAfter.Load(); r > 0 {
		w = max(w, r+1)
	}
	return w
}

// netHTTPIdempotencyKey reports whether h carries a header that makes
// net/http treat any method as replayable (Request.isReplayable).
func netHTTPIdempotencyKey(h http.Header) bool {
	_, a := h["Idempotency-Key"]
	_, b := h["X-Idempotency-Key"]
	return a || b
}

type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyBody) Close() error             { return nil }

// send sends attempt a through the otelhttp client transport, or straight
// to innermost when otelhttp would record nothing (see
// Transport.noopMeter); the trace context is injected either way.
func (op *operation) send(a *attempt) (*http.Response, error) {
	t := op.t
	a.sent = true
	if t.client != nil {
		if !t.noopMeter || op.recording {
			a.viaClient, a.inClient = true, true
			resp, err := t.client.RoundTrip(a.out)
			a.inClient = false
			a.writeFields()
			return resp, err
		}
		op.carrier = headerCarrier{req: a.out}
		t.prop.Inject(a.out.Context(), &op.carrier)
	}
	return a.roundTrip(a.out)
}

// writeFields writes the attempt event's fields that conclude left for
// after otelhttp's RoundTrip: with a response, otelhttp's span stays open
// until the body is read, and once otelhttp has added its response
// attributes, the event's fields go on in one append (written before them,
// they would make the SDK grow the span's attribute slice twice).
func (a *attempt) writeFields() {
	if a.fields != nil {
		a.span.SetAttributes(a.fields...)
		a.fields = nil
	}
}

// innermost is the RoundTripper inside otelhttp: it sends each attempt to
// the base and decides what follows while otelhttp's CLIENT span for the
// attempt is still open (otelhttp ends it as soon as an error comes back).
type innermost struct{ t *Transport }

func (i innermost) RoundTrip(r *http.Request) (*http.Response, error) {
	if a, ok := r.Context().Value(attemptKey{}).(*attempt); ok && a.op.t == i.t && !a.concluded {
		return a.roundTrip(r)
	}
	return i.t.base.RoundTrip(r)
}

// roundTrip sends r, the attempt's request as it reaches the innermost
// layer, to the base, and concludes the attempt.
func (a *attempt) roundTrip(r *http.Request) (*http.Response, error) {
	if a.viaClient {
		a.span = trace.SpanFromContext(r.Context())
	}
	defer a.abandonSpanOnPanic()
	resp, err := a.op.t.base.RoundTrip(r)
	return a.conclude(resp, err)
}

// abandonSpanOnPanic is deferred around the base and the hooks: otelhttp
// does not end its span when its inner RoundTripper panics, so the
// attempt's span is ended here with an event naming the panic before the
// panic goes on (RoundTrip's own deferred cleanup ends the operation).
func (a *attempt) abandonSpanOnPanic() {
	if a.concluded {
		return
	}
	r := recover()
	if a.viaClient && a.span != nil {
		if a.span.IsRecording() {
			// otelhttp recorded the raw url.full; the attempt event, which
			// overwrites it, was never written.
			a.span.SetAttributes(attrs.URLFullKey.String(a.op.sanitizedURL()))
			a.span.AddEvent(attrs.EventPanic, trace.WithAttributes(panicAttributes(r)...))
			a.span.SetStatus(codes.Error, attrs.EventPanic)
		}
		a.span.End()
	}
	if r != nil {
		panic(r)
	}
}

// conclude turns what the base returned into the attempt's answer,
// gathers the decision's input, decides, and records the attempt event. It
// returns what the layer above should see: the response, or the
// sanitized error, never both.
func (a *attempt) conclude(resp *http.Response, err error) (_ *http.Response, _ error) {
	op := a.op
	t := op.t
	a.end = op.since()
	timedOut := !a.state.CompareAndSwap(stateWaiting, stateAnswered)
	if a.timer != nil {
		a.timer.Stop()
	}
	defer func() {
		if !a.concluded {
			closeResponse(resp) // a hook panicked: nobody else will close it
		}
	}()
	switch {
	case err != nil:
		// A response with an error: as http.Client does, the error wins
		// and the response is closed.
		closeResponse(resp)
		resp = nil
	case resp == nil:
		err = fmt.Errorf("otelretry: RoundTripper implementation (%T) returned a nil *Response with a nil error", t.base)
	case resp.StatusCode < 100 || resp.StatusCode > 999:
		closeResponse(resp)
		resp, err = nil, fmt.Errorf("otelretry: RoundTripper implementation (%T) returned a response with status %d", t.base, resp.StatusCode)
	case resp.Body == nil && resp.ContentLength > 0 && methodOf(a.out) != http.MethodHead:
		// As http.Client and otelhttp do: such a response cannot be read.
		resp, err = nil, fmt.Errorf("otelretry: RoundTripper implementation (%T) returned a *Response with content length %d but a nil Body", t.base, resp.ContentLength)
	case timedOut:
		// The timer won the race by a hair: the context is canceled, so
		// the body could not be read.
		closeResponse(resp)
		resp, err = nil, errAttemptTimeout
	case resp.Body == nil:
		resp.Body = http.NoBody
	}
	if timedOut && !errors.Is(err, errAttemptTimeout) {
		// A base that reports its canceled context rather than its cause:
		// say what happened, and keep what it said.
		err = fmt.Errorf("%w (%w)", errAttemptTimeout, err)
	}

	ev := &a.ev
	ev.attempt = a.number
	ev.elapsed = a.end - a.start
	ev.remaining = op.limit - a.start
	ev.writes = a.wireWrites()
	in := op.inputAt(phaseAttempt, a.end)
	in.attemptsLeft = op.maxAttempts - a.n
	answer := Answer{Request: a.out, Attempt: ev.attempt}
	if err != nil {
		class := classify(err)
		switch {
		case in.callerCanceled:
			class = attrs.ErrorClassCanceled
		case timedOut || in.callerDeadline:
			class = attrs.ErrorClassTimeout
		}
		ev.class, in.class, in.notProcessed = class, class, neverSent(err, class)
		in.written = a.reachedWire()
		answer.Err, answer.ErrorClass = err, class
	} else {
		ev.status = resp.StatusCode
		in.status, in.retryableStatus = resp.StatusCode, t.isRetryableStatus(resp.StatusCode)
		answer.StatusCode, answer.Header = resp.StatusCode, resp.Header
		// resp.Header.Get without canonicalizing the canonical key.
		if v := resp.Header["Retry-After"]; len(v) > 0 && v[0] != "" {
			ev.retryAfter, ev.retryAfterError = ParseRetryAfter(v[0], op.start.Add(a.end))
			ev.hasRetryAfter = ev.retryAfterError == nil
			in.retryAfter, answer.RetryAfter = ev.retryAfter, ev.retryAfter
		}
	}
	if prev := op.lastEvent; prev != nil && prev.verdict.decision == attrs.DecisionRetry {
		answer.PreviousPause = prev.verdict.pause
	}
	if classifier := t.cfg.classifier; classifier != nil {
		in.classifier = classifier(answer)
		if in.classifier.kind == classNotProcessed && err != nil {
			e := in.classifier.evidence
			ev.class, ev.evidence, in.class, in.notProcessed = e.Class, e, e.Class, true
		}
	}
	ok := success(ev.status)
	if t.cfg.classifier != nil {
		// The classifier took time: decide on the time left now.
		in.remaining = op.limit - op.since()
	}
	if b := t.budget; b != nil && ev.class != attrs.ErrorClassCanceled {
		b.record(op.key(), op.start.Add(a.end), budgetObservation{
			success:  ok,
			failure:  ev.class != "" || in.retryableStatus,
			timeout:  ev.class == attrs.ErrorClassTimeout,
			status:   ev.status,
			pushback: ev.retryAfter,
		})
	}
	ev.verdict = op.settle(in, a.n, &answer, a.end)
	op.lastEvent = ev
	if err != nil {
		a.err = newAttemptError(err, ev.class, op.req.URL)
	}
	span := a.span
	if span == nil {
		span = nonRecording // no attempt span: logs and metrics only
	}
	var later *[]attribute.KeyValue
	if a.inClient && err == nil {
		later = &a.fields
	}
	recording := span.IsRecording() // once: the SDK locks the span for it
	op.record(span, recording, a.own, ev, later)
	a.concluded = true
	if err != nil {
		return nil, a.err
	}
	// A base that reported nothing through httptrace (one that is not
	// net/http's) will not report a write late either.
	if a.viaClient && recording && (a.gotConn.Load() || ev.writes > 0) {
		if _, rw := resp.Body.(io.ReadWriteCloser); !rw {
			// The wrapper lives in the attempt, which outlives the body.
			a.late = lateWrites{ReadCloser: resp.Body, a: a, span: span}
			resp.Body = &a.late
		}
	}
	return resp, nil
}

// lateWrites sits under otelhttp's body wrapper and completes the attempt
// span's count of writes on the wire before otelhttp ends the span (at the
// body's end or close): an HTTP/2 request body, and a resend net/http
// makes, may finish writing after the response headers arrived.
type lateWrites struct {
	io.ReadCloser
	a    *attempt
	span trace.Span
	done atomic.Bool
}

func (b *lateWrites) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.complete()
	case err != nil && b.a.ev.errorType() != "":
		// A failed answer's body broke while it was read (or drained):
		// otelhttp records the read error's type as error.type, which
		// must stay the answer's.
		err = bodyReadError{err, b.a.ev.errorType()}
	}
	return n, err
}

// bodyReadError is a body read error whose semantic-conventions
// error.type is the failed answer's (its status code).
type bodyReadError struct {
	err       error
	errorType string
}

func (e bodyReadError) Error() string     { return e.err.Error() }
func (e bodyReadError) Unwrap() error     { return e.err }
func (e bodyReadError) ErrorType() string { return e.errorType }

func (b *lateWrites) Close() error {
	b.complete()
	return b.ReadCloser.Close()
}

func (b *lateWrites) complete() {
	if !b.done.CompareAndSwap(false, true) {
		return
	}
	recorded, now := b.a.ev.writes, b.a.wireWrites()
	if now <= recorded {
		return
	}
	b.span.SetAttributes(attrs.WireWritesKey.Int(int(now)))
	for i := max(recorded, 1); i < now; i++ {
		b.span.AddEvent(attrs.EventWireResend, trace.WithAttributes(attrs.WireWritesKey.Int(int(i+1))))
	}
}

// headerCarrier injects into an attempt's header, copying it on the first
// write: the caller's header is never written, and nothing is copied when
// the propagators have nothing to inject.
type headerCarrier struct {
	req    *http.Request
	copied bool
}

func (c *headerCarrier) Get(key string) string { return c.req.Header.Get(key) }

func (c *headerCarrier) Keys() []string { return propagation.HeaderCarrier(c.req.Header).Keys() }

func (c *headerCarrier) Set(key, value string) {
	if !c.copied {
		h := c.req.Header.Clone()
		if h == nil {
			h = make(http.Header, 1)
		}
		c.req.Header, c.copied = h, true
	}
	// http.Header.Set, with the keys of the W3C propagators canonicalized
	// without an allocation.
	switch key {
	case "traceparent":
		key = "Traceparent"
	case "tracestate":
		key = "Tracestate"
	case "baggage":
		key = "Baggage"
	default:
		key = http.CanonicalHeaderKey(key)
	}
	c.req.Header[key] = []string{value}
}

// nonRecording stands for the span of an attempt that has none.
var nonRecording = trace.SpanFromContext(context.Background())
