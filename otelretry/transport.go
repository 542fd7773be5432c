package otelretry

import (
	"context"
	"fmt"
	"io"
	"net/http"
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

// maxDrain bounds how much of a discarded response body is read so that its
// connection can be reused; a longer body is closed unread.
const maxDrain = 4 << 10

// Transport is an http.RoundTripper that retries idempotent requests within
// one deadline and records every operation and attempt as spans, logs and
// metrics. Create it with NewTransport. It is safe for concurrent use.
type Transport struct {
	cfg     config
	base    http.RoundTripper // as given
	attempt http.RoundTripper // the base, wrapped for client spans
	tracer  trace.Tracer
	prop    propagation.TextMapPropagator
	metrics *metrics.Recorder
	budget  *Budget
	// noopTracer: the tracer is the no-op one (trace/noop), whose spans are
	// skipped where that is invisible (see startOperationSpan).
	noopTracer bool
	// direct: client spans are on but the meter provider is the no-op one.
	// An attempt whose span does not record then skips otelhttp, which would
	// record nothing, and only gets the trace context injected (see send).
	direct bool
	// viaOtelhttp: some attempts may go through otelhttp, so operations
	// attach themselves to their context for redactClientSpan.
	viaOtelhttp bool
	// internal is the start option of every span the transport opens,
	// built once so that starting a span does not allocate it.
	internal []trace.SpanStartOption
	// retryableStatus[code-400] is cfg.retryableStatuses as an array.
	retryableStatus [200]bool
}

var _ http.RoundTripper = (*Transport)(nil)

// NewTransport wraps base (http.DefaultTransport when nil). Defaults: 3
// attempts, a 30s operation deadline, a 10s attempt timeout, exponential
// backoff from 100ms to 2s with full jitter, a retry budget of 10% per host,
// global tracer, meter and propagator providers. Each attempt goes through
// an otelhttp client transport unless WithoutClientSpans is given; with the
// no-op MeterProvider of metric/noop, an attempt whose span does not record
// goes straight to base instead, as otelhttp would record nothing, and
// only its trace context is injected.
func NewTransport(base http.RoundTripper, opts ...Option) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	cfg := newConfig(opts)
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

	var recOpts []metrics.Option
	if cfg.metricsServer {
		recOpts = append(recOpts, metrics.WithServerAddress())
	}
	rec, err := metrics.NewRecorder(mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version)), recOpts...)
	if err != nil {
		otel.Handle(err) // The recorder falls back to no-ops; requests go on.
	}

	t := &Transport{
		cfg:      cfg,
		base:     base,
		attempt:  base,
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
	if cfg.clientSpans {
		_, t.direct = mp.(metricnoop.MeterProvider)
		t.viaOtelhttp = !t.direct || !t.noopTracer // no-op spans never record
		t.attempt = otelhttp.NewTransport(redactClientSpan{base},
			otelhttp.WithTracerProvider(tp),
			otelhttp.WithMeterProvider(mp),
			otelhttp.WithPropagators(prop))
	}
	return t
}

// operation is the state of one RoundTrip. It is allocated once per
// RoundTrip and holds the buffers its telemetry needs, so that the hot path
// allocates nothing else of its own.
type operation struct {
	t      *Transport
	req    *http.Request // the caller's request; never modified
	ctx    context.Context
	span   trace.Span
	id     string // "" until first needed: see opID
	method string
	// start is when the operation began; every later instant is kept as
	// the time since start (see since), and the deadline is start+limit.
	start      time.Time
	limit      time.Duration
	idempotent bool
	contract   bool // idempotent by an Idempotency-Key contract
	replayable bool
	hasBody    bool
	attempts   int
	cleanURL   string
	labels     attribute.Set // extra metric labels (WithMetricAttributes)

	// kv holds the attributes of the span being written, so that each span
	// gets them in one SetAttributes call; see attrs.
	kv *[12]attribute.KeyValue
	// releasing wraps the returned response's body (see releaseOnClose).
	releasing releasingBody
	// carrier injects the trace context on the direct path (see send).
	carrier headerCarrier
	// octx is the caller's context with the operation attached: the parent
	// of the operation span when attempts may go through otelhttp.
	octx opContext
	// firstAttempt is the first attempt's context and request.
	firstAttempt attempt
}

// RoundTrip runs one logical operation: it sends req, and sends it again
// while the decision rules allow, each time as a child span of the
// operation span. It returns the last response received, whatever the
// outcome, or an *Error when no response can be returned. req is not
// modified; its body is closed.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeBody(req)
		return nil, errNilURL // as net/http does, before any telemetry
	}
	op := t.begin(req)
	// now is the latest clock reading, as the time since op.start: the
	// start of the next attempt, and the end of the operation when it ends
	// without another reading.
	var now time.Duration
	for {
		n := op.attempts + 1
		remaining := op.limit - now
		if d, cause := op.beforeCall(n, remaining); d != "" {
			closeBody(req)
			return nil, op.fail(d.Outcome(), cause, false, now)
		}
		body, err := op.body(n)
		if err != nil {
			return nil, op.fail(attrs.OutcomeStop, err, false, op.since())
		}
		res := op.call(n, now, remaining, body)
		now = res.end
		op.record(res.span, &res.ev)
		switch res.ev.decision {
		case attrs.DecisionRetry:
			discard(res.resp, res.actx)
			if !op.sleep(res.ev.backoff) {
				return nil, op.fail(op.interrupted(), op.ctx.Err(), false, op.since())
			}
			now = op.since()
			continue
		case attrs.DecisionCheckState:
			res.actx.release()
			next, stored := op.checkState(n, res.err)
			now = op.since()
			switch next {
			case attrs.DecisionRetry:
				continue
			case attrs.DecisionReturn:
				return op.succeed(stored, nil, attrs.OutcomeReturn, now), nil
			default:
				return nil, op.fail(next.Outcome(), res.err, next == attrs.DecisionCheckState, now)
			}
		}
		if res.resp != nil {
			return op.succeed(res.resp, res.actx, res.ev.decision.Outcome(), now), nil
		}
		res.actx.release()
		inFlightWrite := res.ev.decision == attrs.DecisionCanceled && !op.idempotent && !neverSent(res.err, res.ev.class)
		err = res.err
		if res.notReplayable {
			err = ErrNotReplayable
		}
		return nil, op.fail(res.ev.decision.Outcome(), err, inFlightWrite, now)
	}
}

// begin opens the operation: deadline on the monotonic clock, span. Its
// attributes are written when it ends (see end).
func (t *Transport) begin(req *http.Request) *operation {
	op := &operation{t: t, req: req, method: methodOf(req), start: time.Now()}
	op.limit = t.cfg.deadline
	ctx := req.Context()
	if d, ok := ctx.Deadline(); ok {
		op.limit = min(op.limit, d.Sub(op.start))
	}
	op.hasBody = req.Body != nil && req.Body != http.NoBody
	op.replayable = !op.hasBody || req.GetBody != nil
	// A contract is the user's word that repeating is safe where the method
	// alone does not say so (WithIdempotentMethods, or an Idempotency-Key
	// under WithIdempotencyKeyContract). It is recorded so that readers can
	// tell a legitimate resend of a write from a blind one.
	safe := safeMethod(op.method)
	op.contract = t.hasIdempotencyKey(req) || (!safe && t.cfg.idempotentMethods[op.method])
	op.idempotent = safe || op.contract
	if f := t.cfg.metricAttributes; f != nil {
		op.labels = metrics.NewLabels(f(req)...)
	}
	if t.viaOtelhttp {
		op.octx = opContext{ctx, op}
		ctx = &op.octx
	}
	op.ctx, op.span = t.startOperationSpan(ctx, req)
	return op
}

// startOperationSpan starts the operation's INTERNAL span. With the no-op
// tracer and a parent that does not record, Start would return the parent's
// span (or, with no parent, an empty span) in a context that carries
// nothing new; the parent's span (an empty one when there is none) and ctx
// itself are returned instead, without naming the span or copying the
// context. A recording parent (from another provider) still gets its
// non-recording child from Start. Either way, an attempt span started under
// the result would be that same span in that same context, so call uses
// those directly.
func (t *Transport) startOperationSpan(ctx context.Context, req *http.Request) (context.Context, trace.Span) {
	if t.noopTracer {
		if parent := trace.SpanFromContext(ctx); !parent.IsRecording() {
			return ctx, parent
		}
	}
	return t.tracer.Start(ctx, t.cfg.operationName(req), t.internal...)
}

func (t *Transport) hasIdempotencyKey(req *http.Request) bool {
	for _, h := range t.cfg.idempotencyHeaders {
		if req.Header.Get(h) != "" {
			return true
		}
	}
	return false
}

// since reads the clock: the time since the operation began. It reads only
// the monotonic clock (time.Now reads the wall clock too, and costs twice
// as much), and every duration and deadline check is taken from it.
func (op *operation) since() time.Duration { return time.Since(op.start) }

// opID returns the operation id: the caller's (WithOperationID), else one
// generated on first use, so that an operation nobody records or reports
// does not pay for one. Spans, log records, errors and state checks all
// read it here, so they agree.
func (op *operation) opID() string {
	if op.id == "" {
		if id, ok := OperationIDFromContext(op.req.Context()); ok {
			op.id = id
		} else {
			op.id = NewOperationID()
		}
	}
	return op.id
}

// kvBuffers lends operations their attribute buffer. A span copies the
// attributes it is given, so the buffer is reused for each span of the
// operation, and returned when the operation ends.
var kvBuffers = sync.Pool{New: func() any { return new([12]attribute.KeyValue) }}

// attrs returns the operation's attribute buffer, empty. It is taken from
// kvBuffers on first use, so that operations whose spans do not record
// never hold one.
func (op *operation) attrs() []attribute.KeyValue {
	if op.kv == nil {
		op.kv = kvBuffers.Get().(*[12]attribute.KeyValue)
	}
	return op.kv[:0]
}

// metricServer is the server.address metric label: the host when
// WithMetricsServerAddress asked for it, else "" (and the URL is not read).
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

// beforeCall decides, before attempt n, whether it may start at all: a
// canceled caller or a spent budget ends the operation with no call.
func (op *operation) beforeCall(n int, remaining time.Duration) (attrs.Decision, error) {
	if err := op.req.Context().Err(); err != nil {
		return attrs.Decision(op.interrupted()), err
	}
	if remaining <= 0 {
		return attrs.DecisionDeadlineExceeded, nil
	}
	if n == 1 && op.t.budget != nil {
		op.t.budget.depositAt(op.req, op.start)
	}
	return "", nil
}

// body returns the body for attempt n: the caller's for the first, a
// fresh copy from GetBody for the others. A GetBody failure ends the
// operation before the call, so no attempt span is opened for it.
func (op *operation) body(n int) (io.ReadCloser, error) {
	if n == 1 || !op.hasBody {
		return op.req.Body, nil
	}
	return op.req.GetBody()
}

// attemptResult is what one call produced. actx is the attempt's context,
// to be released when the attempt is done: for a returned response, when
// its body is closed.
type attemptResult struct {
	resp          *http.Response
	err           error
	actx          *attemptContext
	span          trace.Span
	end           time.Duration // when the call returned, since op.start
	ev            attemptEvent
	notReplayable bool // a retry was due but the body cannot be sent again
}

// call makes attempt n, which starts at start (since op.start), and decides
// what follows.
func (op *operation) call(n int, start, remaining time.Duration, body io.ReadCloser) attemptResult {
	res := attemptResult{ev: attemptEvent{attempt: n, remaining: remaining}}
	ctx, span := op.ctx, op.span
	if !op.t.noopTracer {
		ctx, span = op.t.tracer.Start(op.ctx, op.t.cfg.attemptName(op.req), op.t.internal...)
	}
	res.span = span
	a := &op.firstAttempt
	if n > 1 {
		a = new(attempt) // the base may still hold the earlier one
	}
	r := a.init(op.req, ctx, op.start, start+min(op.t.cfg.attemptTimeout, remaining), body)
	res.actx = &a.ctx
	op.attempts = n

	resp, err := op.send(r, span)
	if err == nil && resp == nil {
		// otelhttp reports this itself; the base, called directly, may not.
		err = fmt.Errorf("otelretry: RoundTripper implementation (%T) returned a nil *Response with a nil error", op.t.base)
	}
	res.end = op.since()
	res.ev.elapsed = res.end - start

	obs := observation{
		idempotent:     op.idempotent,
		remainingAfter: op.limit - res.end,
		attemptsLeft:   op.t.cfg.maxAttempts - n,
		replayable:     op.replayable,
	}
	if err != nil {
		res.err = err
		res.ev.class = classify(err, op.req.Context().Err())
		obs.errorClass, obs.neverSent = res.ev.class, neverSent(err, res.ev.class)
	} else {
		res.resp = resp
		res.ev.status = resp.StatusCode
		obs.status, obs.retryableStatus = resp.StatusCode, op.t.isRetryableStatus(resp.StatusCode)
		// resp.Header.Get without canonicalizing the canonical key.
		if v := resp.Header["Retry-After"]; len(v) > 0 && v[0] != "" {
			res.ev.retryAfter, res.ev.retryAfterError = ParseRetryAfter(v[0], op.start.Add(res.end))
			res.ev.hasRetryAfter = res.ev.retryAfterError == nil
			obs.retryAfter = res.ev.retryAfter
		}
	}
	if retryable(obs) {
		// Only a result that may be retried needs a pause; decide ignores
		// it otherwise, so the Backoff is not asked.
		obs.backoff = op.t.cfg.backoff.Delay(n)
	}
	res.ev.decision, res.ev.backoff = decide(obs)
	res.ev.decision = op.admit(res.ev.decision)
	if n > 1 && res.ev.decision == attrs.DecisionReturn && op.t.budget != nil {
		op.t.budget.refund(op.req) // a retry that succeeded wasted nothing
	}
	if res.ev.decision != attrs.DecisionRetry {
		res.ev.backoff = 0
	}
	res.notReplayable = res.ev.decision == attrs.DecisionStop && !op.replayable && retryable(obs)
	res.ev.notReplayable = res.notReplayable
	return res
}

// send sends attempt r, whose span is span, through the otelhttp client
// transport, or straight to the base when otelhttp would record nothing
// (see Transport.direct); the trace context is injected either way.
func (op *operation) send(r *http.Request, span trace.Span) (*http.Response, error) {
	if op.t.direct && !span.IsRecording() {
		op.carrier = headerCarrier{req: r}
		op.t.prop.Inject(r.Context(), &op.carrier)
		return op.t.base.RoundTrip(r)
	}
	return op.t.attempt.RoundTrip(r)
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

func (t *Transport) isRetryableStatus(code int) bool {
	return code >= 400 && code <= 599 && t.retryableStatus[code-400]
}

// admit passes a retry through the retry budget; other decisions pass.
func (op *operation) admit(d attrs.Decision) attrs.Decision {
	if d == attrs.DecisionRetry && op.t.budget != nil && !op.t.budget.withdraw(op.req) {
		return attrs.DecisionBudgetExhausted
	}
	return d
}

// interrupted is the outcome when the caller's context ends the operation.
func (op *operation) interrupted() attrs.Outcome {
	if op.req.Context().Err() == context.Canceled {
		return attrs.OutcomeCanceled
	}
	return attrs.OutcomeDeadlineExceeded
}

// sleep pauses d before the next attempt and reports false if the caller
// canceled meanwhile. The decision rules guarantee d ends before the
// deadline.
func (op *operation) sleep(d time.Duration) bool {
	op.t.metrics.RecordBackoff(op.ctx, metrics.Backoff{Method: op.method, ServerAddress: op.metricServer(), Labels: op.labels, Duration: d})
	if d <= 0 {
		return op.ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-op.ctx.Done():
		return false
	}
}

// checkState resolves an unknown write outcome with the user's hook, if
// any, in a state_check span. It returns what follows: retry (resend),
// return (with the stored response), or a terminal decision.
func (op *operation) checkState(n int, cause error) (attrs.Decision, *http.Response) {
	hook := op.t.cfg.stateCheck
	if hook == nil {
		return attrs.DecisionCheckState, nil
	}
	ctx, cancel := context.WithDeadline(op.ctx, op.start.Add(op.limit))
	defer cancel()
	ctx, span := op.t.tracer.Start(ctx, attrs.StateCheckSpanName, op.t.internal...)
	defer span.End()

	result, err := hook(ctx, StateCheck{OperationID: op.opID(), Request: op.req.Clone(ctx), Attempt: n, Err: cause})
	state := result.State
	switch {
	case err != nil:
		state = attrs.StateUnknown
		span.SetStatus(codes.Error, "state check failed")
	case state == attrs.StateApplied && result.Response == nil:
		// An applied write with no stored result cannot be returned, and a
		// response is never invented.
		state = attrs.StateUnknown
		span.SetStatus(codes.Error, "state check reported applied without a response")
	case state != attrs.StateApplied && state != attrs.StateNotApplied:
		state = attrs.StateUnknown
	}
	if state != attrs.StateApplied && result.Response != nil {
		discard(result.Response, nil)
	}
	next := op.admit(afterStateCheck(state, op.limit-op.since(), op.t.cfg.maxAttempts-n, op.replayable))
	if span.IsRecording() {
		span.SetAttributes(append(op.attrs(), attrs.OperationIDKey.String(op.opID()), state.Attribute(), next.Attribute())...)
	}
	if next == attrs.DecisionReturn {
		return next, result.Response
	}
	return next, nil
}

// succeed ends the operation at now with a response for the caller. The
// attempt context (actx, nil for a stored response) stays alive until the
// body is closed, so the body can be read.
func (op *operation) succeed(resp *http.Response, actx *attemptContext, outcome attrs.Outcome, now time.Duration) *http.Response {
	if actx != nil {
		if resp.Body == nil {
			actx.release() // nothing to read
		} else {
			resp.Body = op.releaseOnClose(resp.Body, actx)
		}
	}
	op.end(outcome, now)
	return resp
}

// fail ends the operation at now with an error.
func (op *operation) fail(outcome attrs.Outcome, cause error, unknownWrite bool, now time.Duration) error {
	op.end(outcome, now)
	return &Error{Outcome: outcome, OperationID: op.opID(), Attempts: op.attempts, Err: cause, unknownWrite: unknownWrite}
}

// end writes the operation span's attributes, ends it and records the
// operation's metrics.
func (op *operation) end(outcome attrs.Outcome, now time.Duration) {
	if op.span.IsRecording() {
		kv := append(op.attrs(),
			attrs.OperationIDKey.String(op.opID()),
			attrs.HTTPRequestMethodKey.String(op.method),
			attrs.URLFullKey.String(op.sanitizedURL()),
			attrs.ServerAddressKey.String(op.req.URL.Hostname()),
			attrs.DeadlineMsKey.Int64(ms(op.limit)),
			attrs.AttemptsKey.Int(op.attempts),
			outcome.Attribute(),
		)
		if op.contract {
			kv = append(kv, attrs.IdempotencyContractKey.Bool(true))
		}
		op.span.SetAttributes(kv...)
		if outcome != attrs.OutcomeReturn {
			op.span.SetStatus(codes.Error, string(outcome))
		}
	}
	op.span.End()
	if op.kv != nil {
		clear(op.kv[:]) // retain no ids or URLs in the pool
		kvBuffers.Put(op.kv)
		op.kv = nil
	}
	op.t.metrics.RecordOperation(op.ctx, metrics.Operation{
		Method:        op.method,
		ServerAddress: op.metricServer(),
		Labels:        op.labels,
		Outcome:       outcome,
		Attempts:      op.attempts,
		Duration:      now,
	})
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// drainBuffers lends discard its read buffer.
var drainBuffers = sync.Pool{New: func() any { return new([512]byte) }}

// discard drains a response that will not be returned (at most maxDrain
// bytes) and closes it, so its connection can be reused and its client span
// ends, then releases the attempt's context (actx, if not nil).
func discard(resp *http.Response, actx *attemptContext) {
	if resp != nil && resp.Body != nil {
		buf := drainBuffers.Get().(*[512]byte)
		for left := maxDrain; left > 0; {
			n, err := resp.Body.Read(buf[:min(left, len(buf))])
			left -= n
			if err != nil {
				break
			}
		}
		drainBuffers.Put(buf)
		resp.Body.Close()
	}
	if actx != nil {
		actx.release()
	}
}
