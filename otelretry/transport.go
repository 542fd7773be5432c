// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

// Transport is an http.RoundTripper that retries requests within one
// deadline and records every operation and attempt as spans, logs and
// metrics. Create it with NewTransport. It is safe for concurrent use.
type Transport struct {
	cfg  config
	base http.RoundTripper
	// client is otelhttp's client transport around innermost{t}, through
	// which attempts are sent so that each is one CLIENT span; nil with
	// WithoutClientSpans.
	client  http.RoundTripper
	tracer  trace.Tracer
	prop    propagation.TextMapPropagator
	metrics *metrics.Recorder
	budget  *Budget
	// noopTracer: the tracer is the no-op one (trace/noop), whose spans are
	// skipped where that is invisible (see startOperationSpan).
	noopTracer bool
	// noopMeter: the meter provider is the no-op one. An attempt whose
	// operation span does not record then skips otelhttp, which would
	// record nothing, and only gets the trace context injected (see send).
	noopMeter bool
	// attemptSpans: attempts get the transport's own INTERNAL span
	// (WithoutClientSpans, with a tracer that may record).
	attemptSpans bool
	// internal is the start option of the transport's own spans, built once.
	internal []trace.SpanStartOption
	// retryableStatus[code-400] is cfg.retryableStatuses as an array.
	retryableStatus [200]bool
	repeats         repeatCounter
	// h1Only: the base is an *http.Transport that speaks HTTP/2 only over
	// TLS, so a plain-http request goes over HTTP/1 (see resendsBodyless).
	h1Only bool
}

var _ http.RoundTripper = (*Transport)(nil)

// NewTransport wraps base (http.DefaultTransport when nil). Defaults: 3
// attempts, a 30s operation deadline, a 10s wait for each attempt's
// response headers, exponential backoff from 100ms to 2s with full jitter,
// a retry budget per host, global tracer, meter and propagator providers.
//
// Each attempt is sent through an otelhttp client transport, so that it is
// one CLIENT span, a child of the operation span, which also carries the
// attempt event; WithoutClientSpans sends attempts straight to base under
// an INTERNAL attempt span instead. With the no-op MeterProvider of
// metric/noop, an attempt whose operation span does not record goes
// straight to base too, as otelhttp would record nothing, and only its
// trace context is injected.
func NewTransport(base http.RoundTripper, opts ...Option) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	cfg := newConfig(opts)
	if cfg.err != nil {
		otel.Handle(cfg.err) // the values were ignored; requests go on
	}
	tp := cfg.tracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := cfg.meterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	prop := cfg.propagators
	if prop == nil {
		prop = otel.GetTextMapPropagator()
	}
	rec, err := metrics.NewRecorder(mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version)))
	if err != nil {
		otel.Handle(err) // The recorder falls back to no-ops; requests go on.
	}
	t := &Transport{
		cfg:      cfg,
		base:     base,
		tracer:   tp.Tracer(ScopeName, trace.WithInstrumentationVersion(Version)),
		prop:     prop,
		metrics:  rec,
		budget:   cfg.budget,
		internal: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)},
	}
	for code := range cfg.retryableStatuses {
		t.retryableStatus[code-400] = true // WithRetryableStatuses keeps 400–599
	}
	if t.budget == nil && !cfg.noBudget {
		t.budget = NewBudget()
	}
	// Only the no-op implementations are detected, by type: the global
	// providers delegate to whatever is installed later and are always
	// used in full.
	_, t.noopTracer = t.tracer.(tracenoop.Tracer)
	_, t.noopMeter = mp.(metricnoop.MeterProvider)
	if ht, ok := base.(*http.Transport); ok {
		t.h1Only = ht.Protocols == nil || !ht.Protocols.UnencryptedHTTP2()
	}
	if cfg.clientSpans {
		name := cfg.attemptName
		t.client = otelhttp.NewTransport(innermost{t},
			otelhttp.WithTracerProvider(tp),
			otelhttp.WithMeterProvider(mp),
			otelhttp.WithPropagators(prop),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return name(r) }))
	} else {
		t.attemptSpans = !t.noopTracer
	}
	return t
}

// resendsBodyless reports whether a layer below may resend a bodyless
// request to u without asking for a body: HTTP/2 and HTTP/3 clients do,
// on errors they deem retryable. Only net/http's *http.Transport on a
// plain-http URL, without unencrypted HTTP/2, is known to speak HTTP/1,
// which resends a bodyless write only when it carries an idempotency key.
func (t *Transport) resendsBodyless(u *url.URL) bool {
	return !t.h1Only || u == nil || u.Scheme != "http"
}

// CloseIdleConnections closes the idle connections of the base transport,
// if it has any (http.Client.CloseIdleConnections calls it).
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// operation is the state of one RoundTrip. It is allocated once per
// RoundTrip and holds the first attempt and the buffers its telemetry
// needs, so that the hot path allocates little else of its own.
type operation struct {
	t    *Transport
	req  *http.Request // the caller's request; never modified
	ctx  context.Context
	span trace.Span
	// recording is span.IsRecording(), read once: the SDK takes the span's
	// lock for each call, and a span that records stops only when it ends,
	// which only the operation does (on the no-op path span may be the
	// caller's, which never records).
	recording bool
	id        string // "" until first needed: see opID

	method string
	// start is when the operation began; every later instant is kept as
	// the time since start (see since). limit is the time from start to
	// the deadline, which for a redirect hop is the first hop's.
	start       time.Time
	deadline    time.Time
	limit       time.Duration
	maxAttempts int
	// attemptBase is the number of attempts earlier hops of a redirect
	// chain made: attempt numbers and request ids keep counting.
	attemptBase int
	// oc is the caller's WithOperationID state: attempt numbers count on
	// across the operations made under it.
	oc        *operationContext
	redirects int // hops before this one in a redirect chain
	repeat    int // operations made before this one under the same context

	repeatable bool // safe to repeat (see input.repeatable)
	contract   bool // repeatable by the user's word, not the method
	noRetry    bool
	replayable bool
	hasBody    bool
	// callerBody: the caller's body was not handed to an attempt yet, so
	// RoundTrip must close it if it ends before the first call.
	callerBody bool

	attempts  int // network calls made by this operation
	lastEvent *attemptEvent
	current   *attempt // the attempt in progress, for cleanup after a panic
	ended     bool

	cleanURL  string
	labels    attribute.Set // extra metric labels (WithMetricAttributes)
	budgetKey string
	keyed     bool

	// kv holds the attributes of the span being written, so that each span
	// gets them in one SetAttributes call; see attrs.
	kv *[24]attribute.KeyValue
	// body wraps the returned response's body (see handOver).
	body responseBody
	// carrier injects the trace context on the direct path (see send).
	carrier headerCarrier
	first   attempt
}

// RoundTrip runs one logical operation: it sends req, and sends it again
// while the decision rules allow, each attempt a child span of the
// operation span. It returns the last response received, whatever the
// outcome, or an *Error when no response can be returned. req is not
// modified; its body is closed.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeBody(req)
		return nil, errNilURL // as net/http does, before any telemetry
	}
	op := &operation{t: t, req: req, method: methodOf(req), start: time.Now(), callerBody: req.Body != nil}
	defer op.abandonOnPanic() // the user's formatters and labelers run in begin
	op.begin()
	return op.run()
}

func (op *operation) run() (*http.Response, error) {
	for n := 1; ; n++ {
		now := op.since()
		if v := decide(op.inputAt(phaseBeforeCall, now)); !v.goAhead() {
			return nil, op.fail(v, op.callerErr(), now)
		}
		a, v, err := op.newAttempt(n)
		if a == nil {
			return nil, op.fail(v, err, op.since())
		}
		op.attempts, op.callerBody = n, false
		resp, err := op.send(a)
		if !a.concluded {
			// Only a wrapper between the transport and its innermost
			// RoundTripper could skip it; decide here instead.
			resp, err = a.conclude(resp, err)
		}
		v = a.ev.verdict
		switch v.decision {
		case attrs.DecisionRetry:
			discard(resp, a, v.pause)
			op.pause(a.end+v.pause, v.pause)
			continue
		case attrs.DecisionCheckState:
			a.release()
			sv, stored := op.checkState(a, err)
			switch sv.decision {
			case attrs.DecisionRetry:
				continue
			case attrs.DecisionReturn:
				return op.succeed(stored, nil, sv), nil
			}
			return nil, op.fail(sv, err, op.since())
		}
		if resp != nil {
			return op.succeed(resp, a, v), nil
		}
		a.release()
		return nil, op.fail(v, err, a.end)
	}
}

// begin opens the operation: its limits (the earliest of the caller's
// context deadline, the Transport's or the request's deadline, and the
// deadline of the redirect chain it continues), what the request is
// allowed, and its span.
func (op *operation) begin() {
	t, req := op.t, op.req
	ctx := req.Context()
	intent, _ := IntentFromContext(ctx)
	op.maxAttempts = t.cfg.maxAttempts
	if intent.MaxAttempts > 0 {
		op.maxAttempts = intent.MaxAttempts
	}
	limit := t.cfg.deadline
	if intent.Deadline > 0 {
		limit = intent.Deadline
	}
	op.deadline = op.start.Add(limit)
	if d, ok := ctx.Deadline(); ok && d.Before(op.deadline) {
		op.deadline = d
	}
	oc := operationContextOf(ctx)
	op.oc = oc
	if prev := chainedOperation(req); prev != nil {
		// A redirect hop: same contract as the hop it follows.
		op.id = prev.opID()
		op.attemptBase = prev.attemptBase + prev.attempts
		op.redirects = prev.redirects + 1
		if prev.deadline.Before(op.deadline) {
			op.deadline = prev.deadline
		}
	} else if oc != nil {
		op.repeat = int(oc.operations.Add(1) - 1)
	}
	if oc != nil && op.id == "" {
		op.id = oc.id
	}
	op.limit = op.deadline.Sub(op.start)

	op.hasBody = req.Body != nil && req.Body != http.NoBody
	op.replayable = !op.hasBody || req.GetBody != nil
	// A contract is the user's word that repeating is safe where the method
	// alone does not say so (WithIdempotentMethods, an Idempotency-Key
	// under WithIdempotencyKeyContract, or Intent.Repeatable). It is
	// recorded so that readers can tell a legitimate resend of a write
	// from a blind one.
	safe := safeMethod(op.method)
	op.contract = !safe && (intent.Repeatable || t.cfg.idempotentMethods[op.method] || t.hasIdempotencyKey(req))
	op.repeatable = safe || op.contract
	op.noRetry = intent.NoRetry
	if f := t.cfg.metricAttributes; f != nil {
		op.labels = metrics.NewLabels(f(req)...)
	}
	op.ctx, op.span = t.startOperationSpan(ctx, op)
	op.recording = op.span.IsRecording()
	if oc == nil && op.redirects == 0 && op.recording {
		if parent := trace.SpanContextFromContext(ctx); parent.IsValid() {
			op.repeat = t.repeats.next(parent)
		}
	}
}

// startOperationSpan starts the operation's INTERNAL span, with the
// attributes samplers need given at start. With the no-op tracer and a
// parent that does not record, Start would return the parent's span (or,
// with no parent, an empty span) in a context that carries nothing new;
// the parent's span and ctx itself are returned instead, without naming
// the span or copying the context.
func (t *Transport) startOperationSpan(ctx context.Context, op *operation) (context.Context, trace.Span) {
	if t.noopTracer {
		if parent := trace.SpanFromContext(ctx); !parent.IsRecording() {
			return ctx, parent
		}
		return t.tracer.Start(ctx, "", t.internal...)
	}
	u := op.req.URL
	kv := append(op.attrs(),
		attrs.OperationIDKey.String(op.opID()),
		attrs.HTTPRequestMethodKey.String(op.method),
		attrs.URLFullKey.String(op.sanitizedURL()),
		attrs.ServerAddressKey.String(u.Hostname()),
	)
	if port := serverPort(u); port > 0 {
		kv = append(kv, attrs.ServerPortKey.Int(port))
	}
	return t.tracer.Start(ctx, t.cfg.operationName(op.req), t.internal[0], trace.WithAttributes(kv...))
}

// serverPort is the URL's port, or the scheme's default, or 0.
func serverPort(u *url.URL) int {
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return n
	}
	switch u.Scheme {
	case "http":
		return 80
	case "https":
		return 443
	}
	return 0
}

func (t *Transport) hasIdempotencyKey(req *http.Request) bool {
	for _, h := range t.cfg.idempotencyHeaders {
		if req.Header.Get(h) != "" {
			return true
		}
	}
	return false
}

func (t *Transport) isRetryableStatus(code int) bool {
	return code >= 400 && code <= 599 && t.retryableStatus[code-400]
}

// since reads the clock: the time since the operation began. It reads only
// the monotonic clock, and every duration and deadline check is taken
// from it.
func (op *operation) since() time.Duration { return time.Since(op.start) }

// opID returns the operation id: the chain's or the caller's
// (WithOperationID), else one generated on first use, so that an operation
// nobody records or reports does not pay for one. Spans, log records,
// errors and state checks all read it here, so they agree.
func (op *operation) opID() string {
	if op.id == "" {
		op.id = NewOperationID()
	}
	return op.id
}

// kvBuffers lends operations their attribute buffer. A span copies the
// attributes it is given, so the buffer is reused for each span of the
// operation, and returned when the operation ends.
var kvBuffers = sync.Pool{New: func() any { return new([24]attribute.KeyValue) }}

// attrs returns the operation's attribute buffer, empty. It is taken from
// kvBuffers on first use, so that operations whose spans do not record
// never hold one.
func (op *operation) attrs() []attribute.KeyValue {
	if op.kv == nil {
		op.kv = kvBuffers.Get().(*[24]attribute.KeyValue)
	}
	return op.kv[:0]
}

// metricServer is the server.address metric label: the host when
// WithMetricsServerAddress asked for it, else "" (and the URL is not read).
// It is decided here only; the Recorder labels what it is given.
func (op *operation) metricServer() string {
	if !op.t.cfg.metricsServer {
		return ""
	}
	return op.req.URL.Hostname()
}

func (op *operation) sanitizedURL() string {
	if op.cleanURL == "" {
		op.cleanURL = SanitizeURL(op.req.URL)
	}
	return op.cleanURL
}

// callerErr is the caller's reason to stop: its context's error, or, when
// http.Client's Timeout closed the legacy Request.Cancel channel before its
// context noticed (it does, for a RoundTripper that is not
// *http.Transport), the error that context is about to report.
func (op *operation) callerErr() error {
	ctx := op.req.Context()
	if err := ctx.Err(); err != nil {
		return err
	}
	if op.req.Cancel != nil {
		select {
		case <-op.req.Cancel:
			if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
				return context.DeadlineExceeded
			}
			return context.Canceled
		default:
		}
	}
	return nil
}

// inputAt gathers the part of a decision's input that the operation knows
// at now (since op.start); attempt results are added by the caller.
func (op *operation) inputAt(p phase, now time.Duration) input {
	in := input{
		phase:        p,
		remaining:    op.limit - now,
		attemptsLeft: op.maxAttempts - op.attempts,
		repeatable:   op.repeatable,
		noRetry:      op.noRetry,
		replayable:   op.replayable,
	}
	switch err := op.callerErr(); {
	case err == nil:
	case errors.Is(err, context.Canceled):
		in.callerCanceled = true
	default:
		in.callerDeadline = true
	}
	return in
}

// settle decides on in, asking the Backoff (retry n, after answer) and
// the retry budget only when decide needs their answers, at now.
func (op *operation) settle(in input, n int, answer *Answer, now time.Duration) verdict {
	v := decide(in)
	if v.needPause {
		in.pauseAsked = true
		in.backoff = op.t.cfg.backoffFor(n, *answer)
		v = decide(in)
	}
	if v.needBudget {
		in.budgetAsked = true
		if b := op.t.budget; b != nil {
			in.budget = b.admit(op.key(), op.start.Add(now), op.start.Add(now+v.pause))
		}
		v = decide(in)
	}
	return v
}

// key is the operation's retry budget key, computed once.
func (op *operation) key() string {
	if !op.keyed {
		op.budgetKey, op.keyed = op.t.budget.key(op.req), true
	}
	return op.budgetKey
}

// pause waits until the next attempt may start (until, since op.start),
// or until the caller gives up: the next decision sees which.
func (op *operation) pause(until, d time.Duration) {
	op.t.metrics.RecordBackoff(op.ctx, metrics.Backoff{Method: op.method, ServerAddress: op.metricServer(), Labels: op.labels, Duration: d})
	wait := until - op.since()
	if wait <= 0 {
		return
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-op.ctx.Done():
	case <-op.req.Cancel: // nil, and never ready, unless http.Client set it
	}
}

// succeed ends the operation with a response for the caller. The
// attempt's context (a, nil for a stored response) stays alive until the
// body is closed, so the body can be read.
func (op *operation) succeed(resp *http.Response, a *attempt, v verdict) *http.Response {
	if a != nil {
		op.handOver(resp, a)
		resp.Request = op.req
	}
	op.end(v.decision.Outcome(), op.since())
	return resp
}

// sanitize returns err with a message from which the URLs the request is
// known by (the caller's, and u, the attempt's when a hook changed it)
// are sanitized, for errors that did not come through an attempt: a hook's
// or GetBody's.
func (op *operation) sanitize(err error, u *url.URL) error {
	if err == nil {
		return nil
	}
	msg := sanitizeErrorText(err.Error(), err, op.req.URL)
	if u != nil {
		msg = sanitizeErrorText(msg, nil, u)
	}
	return &attemptError{err: err, msg: msg, class: attrs.ErrorClassOther}
}

// fail ends the operation at now with an error.
func (op *operation) fail(v verdict, cause error, now time.Duration) error {
	if op.callerBody {
		closeBody(op.req)
		op.callerBody = false
	}
	op.end(v.decision.Outcome(), now)
	return &Error{Outcome: v.decision.Outcome(), Reason: v.reason, OperationID: op.opID(), Attempts: op.attempts,
		Err: cause, unknownWrite: v.unknownWrite}
}

// end writes the operation span's attributes, ends it and records the
// operation's metrics.
func (op *operation) end(outcome attrs.Outcome, now time.Duration) {
	op.ended = true
	errorType := ""
	if outcome != attrs.OutcomeReturn {
		errorType = string(outcome)
		if op.lastEvent != nil && op.lastEvent.errorType() != "" {
			errorType = op.lastEvent.errorType()
		}
	}
	if op.recording {
		kv := append(op.attrs(),
			attrs.DeadlineMsKey.Int64(ms(op.limit)),
			attrs.AttemptsKey.Int(op.attempts),
			outcome.Attribute(),
		)
		if errorType != "" {
			kv = append(kv, attrs.ErrorTypeKey.String(errorType))
		}
		if op.contract {
			kv = append(kv, attrs.IdempotencyContractKey.Bool(true))
		}
		if op.redirects > 0 {
			kv = append(kv, attrs.RedirectsKey.Int(op.redirects))
		}
		if op.repeat > 0 {
			kv = append(kv, attrs.RepeatKey.Int(op.repeat))
		}
		op.span.SetAttributes(kv...)
		if outcome != attrs.OutcomeReturn {
			op.span.SetStatus(codes.Error, string(outcome))
		}
	}
	op.span.End()
	op.releaseBuffer()
	op.t.metrics.RecordOperation(op.ctx, metrics.Operation{
		Method:        op.method,
		ServerAddress: op.metricServer(),
		Labels:        op.labels,
		Outcome:       outcome,
		ErrorType:     errorType,
		Attempts:      op.attempts,
		Duration:      now,
	})
}

func (op *operation) releaseBuffer() {
	if op.kv != nil {
		clear(op.kv[:]) // retain no ids or URLs in the pool
		kvBuffers.Put(op.kv)
		op.kv = nil
	}
}

// abandonOnPanic is deferred by RoundTrip. When a base RoundTripper or a
// hook panics (or calls runtime.Goexit), it ends the operation's spans
// with an event naming the panic, releases what the operation holds, and
// lets the panic go on: a retry layer must not hide a crash, but must not
// leave spans open or timers running either.
func (op *operation) abandonOnPanic() {
	if op.ended {
		return
	}
	r := recover()
	op.ended = true
	if a := op.current; a != nil {
		a.abandon(r)
	}
	if op.callerBody {
		closeBody(op.req)
	}
	if op.span != nil { // nil: the panic came before the span started
		if op.span.IsRecording() {
			op.span.AddEvent(attrs.EventPanic, trace.WithAttributes(panicAttributes(r)...))
			op.span.SetStatus(codes.Error, attrs.EventPanic)
		}
		op.span.End()
	}
	op.releaseBuffer()
	if r != nil {
		panic(r)
	}
}

// panicAttributes names a panic by its type only: its value may carry a
// URL or a secret.
func panicAttributes(r any) []attribute.KeyValue {
	if r == nil {
		return []attribute.KeyValue{attribute.String("exception.type", "runtime.Goexit")}
	}
	return []attribute.KeyValue{attribute.String("exception.type", typeName(r))}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
