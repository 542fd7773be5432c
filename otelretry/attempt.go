package otelretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

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
	op    *operation
	n     int           // number within this operation (the recorded number adds op.attemptBase)
	start time.Duration // since op.start
	end   time.Duration // when the headers (or the failure) came, since op.start

	ctx    attemptContext
	cancel context.CancelCauseFunc
	timer  *time.Timer
	// state resolves the race between the answer and the timer: whichever
	// moves it from stateWaiting first decides whether the attempt timed out.
	state atomic.Int32
	// trace counts the writes of the request on the wire (WroteRequest).
	trace   httptrace.ClientTrace
	writes  atomic.Int32
	written atomic.Bool // a write completed without error
	// headersOut: the request's headers were written on the wire, so the
	// server may have started to act on it (WroteHeaders, or a write).
	headersOut atomic.Bool
	// rewinds counts the fresh bodies a lower layer asked for (GetBody)
	// to send the request again within this attempt: synchronous evidence
	// of a resend, where WroteRequest may report the write late.
	rewinds atomic.Int32
	// guarded: GetBody refuses once the request was written (see
	// guardResend).
	guarded bool

	req http.Request // the caller's request, copied to carry ctx
	out *http.Request
	// span is the attempt's span: the transport's own INTERNAL span (own),
	// or otelhttp's CLIENT span, found in the context of the request that
	// reaches innermost.
	span      trace.Span
	own       bool
	viaClient bool
	concluded bool
	ev        attemptEvent
	err       error // the attempt's error as reported upward (attemptError)
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

// newAttempt sets attempt n up, to start at start (since op.start): its
// body (the caller's for the first, a fresh one from GetBody for the
// others), its span when the transport makes attempt spans, its context and
// timer, its copy of the request, and the user's preparation.
func (op *operation) newAttempt(n int, start time.Duration) (*attempt, error) {
	body := op.req.Body
	if n > 1 && op.hasBody {
		var err error
		if body, err = op.req.GetBody(); err != nil {
			return nil, fmt.Errorf("otelretry: GetBody: %w", err)
		}
	}
	a := &op.first
	if n > 1 {
		a = new(attempt) // the base may still hold the earlier one
	}
	a.op, a.n, a.start = op, n, start
	op.current = a
	parent := op.ctx
	if op.t.attemptSpans {
		parent, a.span = op.t.tracer.Start(op.ctx, op.t.cfg.attemptName(op.req), op.t.internal...)
		a.own = true
	}
	cctx, cancel := context.WithCancelCause(parent)
	a.cancel = cancel
	a.trace.WroteHeaders, a.trace.WroteRequest = a.wroteHeaders, a.wroteRequest
	a.ctx = attemptContext{Context: httptrace.WithClientTrace(cctx, &a.trace), a: a}
	// WithContext is inlined and its copy does not escape: the request is
	// copied into a, with no allocation of its own.
	a.req = *op.req.WithContext(&a.ctx)
	a.req.Body = body
	if a.req.Header == nil {
		a.req.Header = http.Header{} // otelhttp and propagators write into it
	}
	op.guardResend(a)
	a.out = &a.req
	if prepare := op.t.cfg.prepare; prepare != nil {
		a.out = a.req.Clone(&a.ctx)
		if err := prepare(a.out, op.attemptBase+n); err != nil {
			a.release()
			if a.own {
				a.span.SetStatus(codes.Error, string(attrs.ReasonPrepareFailed))
				a.span.End()
			}
			if body != nil {
				body.Close() // no call takes it
			}
			op.callerBody = false
			return nil, prepareError{err}
		}
	}
	a.timer = time.AfterFunc(min(op.t.cfg.attemptTimeout, op.limit-start), a.expire)
	return a, nil
}

// expire is the attempt timer's function: the headers did not come in
// time, or a discarded body did not drain within its bound (the timer is
// re-armed for that, see discard).
func (a *attempt) expire() {
	if a.state.CompareAndSwap(stateWaiting, stateTimedOut) {
		a.cancel(errAttemptTimeout)
	} else if a.state.Load() == stateDraining {
		a.cancel(drainCutError{a.ev.errorType()})
	}
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
	if info.Err == nil {
		a.written.Store(true)
		a.headersOut.Store(true)
	}
}

// wroteHeaders is httptrace's WroteHeaders hook: from here on a server may
// act on the request, even before its body arrives.
func (a *attempt) wroteHeaders() { a.headersOut.Store(true) }

// guardResend keeps net/http from resending a write behind the transport's
// back. http.Transport resends a request on a reused keep-alive connection
// that died when it deems the request replayable: GET, HEAD, OPTIONS,
// TRACE, or any method carrying Idempotency-Key or X-Idempotency-Key, with
// no body or a GetBody. For a write this policy does not treat as
// repeatable, only the header case applies. The attempt's GetBody then
// hands out a fresh body only while the request was never written (a
// resend of a request that never left the client stays possible), and
// refuses with errResendRefused once it was, so the attempt fails and its
// outcome is unknown instead of the write being repeated unseen. A
// bodyless request is shielded with an empty body that is not
// http.NoBody, because net/http asks for no body to resend an empty one;
// for POST and PUT this costs a Transfer-Encoding: chunked header with an
// empty body.
func (op *operation) guardResend(a *attempt) {
	a.guarded = !op.repeatable && (!op.hasBody || op.req.GetBody != nil) && netHTTPIdempotencyKey(op.req.Header)
	if a.guarded && !op.hasBody {
		a.req.Body, a.req.ContentLength = emptyBody{}, 0
	}
	if a.guarded || (op.hasBody && op.req.GetBody != nil) {
		a.req.GetBody = a.getBody
	}
}

// getBody is the attempt's GetBody: it counts the lower layer's request
// for a fresh body (a resend within the attempt) and, when guarded,
// refuses it once the request was written.
func (a *attempt) getBody() (io.ReadCloser, error) {
	if a.guarded && a.written.Load() {
		return nil, errResendRefused
	}
	a.rewinds.Add(1)
	if !a.op.hasBody {
		return emptyBody{}, nil
	}
	return a.op.req.GetBody()
}

// wireWrites is the attempt's count of writes on the wire so far: what
// httptrace reported, and at least one more than the fresh bodies a lower
// layer took to resend it.
func (a *attempt) wireWrites() int32 {
	w := a.writes.Load()
	if r := a.rewinds.Load(); r > 0 {
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
	if t.client != nil {
		if !t.noopMeter || op.span.IsRecording() {
			a.viaClient = true
			return t.client.RoundTrip(a.out)
		}
		op.carrier = headerCarrier{req: a.out}
		t.prop.Inject(a.out.Context(), &op.carrier)
	}
	return a.roundTrip(a.out)
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
func (a *attempt) conclude(resp *http.Response, err error) (*http.Response, error) {
	op := a.op
	t := op.t
	a.end = op.since()
	timedOut := !a.state.CompareAndSwap(stateWaiting, stateAnswered)
	if a.timer != nil {
		a.timer.Stop()
	}
	switch {
	case err != nil:
		// A response with an error: as http.Client does, the error wins
		// and the response is closed.
		closeResponse(resp)
		resp = nil
	case resp == nil:
		err = fmt.Errorf("otelretry: RoundTripper implementation (%T) returned a nil *Response with a nil error", t.base)
	case timedOut:
		// The timer won the race by a hair: the context is canceled, so
		// the body could not be read.
		closeResponse(resp)
		resp, err = nil, errAttemptTimeout
	}
	if timedOut && !errors.Is(err, errAttemptTimeout) {
		// A base that reports its canceled context rather than its cause:
		// say what happened, and keep what it said.
		err = fmt.Errorf("%w (%w)", errAttemptTimeout, err)
	}

	ev := &a.ev
	ev.attempt = op.attemptBase + a.n
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
		in.written = a.headersOut.Load()
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
	op.record(span, a.own, ev)
	a.concluded = true
	if err != nil {
		return nil, a.err
	}
	if a.viaClient && span.IsRecording() {
		if _, rw := resp.Body.(io.ReadWriteCloser); !rw && resp.Body != nil {
			resp.Body = &lateWrites{ReadCloser: resp.Body, a: a, span: span}
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
	if err == io.EOF {
		b.complete()
	}
	return n, err
}

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
