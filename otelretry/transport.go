package otelretry

import (
	"context"
	"io"
	"net/http"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

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
	attempt http.RoundTripper // the base, wrapped for client spans
	tracer  trace.Tracer
	metrics *metrics.Recorder
	budget  *Budget
}

var _ http.RoundTripper = (*Transport)(nil)

// NewTransport wraps base (http.DefaultTransport when nil). Defaults: 3
// attempts, a 30s operation deadline, a 10s attempt timeout, exponential
// backoff from 100ms to 2s with full jitter, a retry budget of 10% per host,
// global tracer, meter and propagator providers. Each attempt goes through
// an otelhttp client transport unless WithoutClientSpans is given.
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
		cfg:     cfg,
		attempt: base,
		tracer:  tp.Tracer(ScopeName, trace.WithInstrumentationVersion(Version)),
		metrics: rec,
		budget:  cfg.budget,
	}
	if t.budget == nil && !cfg.noBudget {
		t.budget = NewBudget()
	}
	if cfg.clientSpans {
		t.attempt = otelhttp.NewTransport(redactClientSpan{base},
			otelhttp.WithTracerProvider(tp),
			otelhttp.WithMeterProvider(mp),
			otelhttp.WithPropagators(prop))
	}
	return t
}

// operation is the state of one RoundTrip.
type operation struct {
	t          *Transport
	req        *http.Request // the caller's request; never modified
	ctx        context.Context
	span       trace.Span
	id         string
	method     string
	start      time.Time
	deadline   time.Time
	idempotent bool
	contract   bool // idempotent by an Idempotency-Key contract
	replayable bool
	hasBody    bool
	attempts   int
	cleanURL   string
}

// RoundTrip runs one logical operation: it sends req, and sends it again
// while the decision rules allow, each time as a child span of the
// operation span. It returns the last response received, whatever the
// outcome, or an *Error when no response can be returned. req is not
// modified; its body is closed.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	op := t.begin(req)
	for {
		n := op.attempts + 1
		remaining := op.deadline.Sub(time.Now())
		if d, cause := op.beforeCall(n, remaining); d != "" {
			closeBody(req)
			return nil, op.fail(d.Outcome(), cause, false)
		}
		body, err := op.body(n)
		if err != nil {
			return nil, op.fail(attrs.OutcomeStop, err, false)
		}
		res := op.call(n, remaining, body)
		op.record(res.span, &res.ev)
		switch res.ev.decision {
		case attrs.DecisionRetry:
			discard(res.resp, res.release)
			if !op.sleep(res.ev.backoff) {
				return nil, op.fail(op.interrupted(), op.ctx.Err(), false)
			}
			continue
		case attrs.DecisionCheckState:
			res.release()
			switch next, stored := op.checkState(n, res.err); next {
			case attrs.DecisionRetry:
				continue
			case attrs.DecisionReturn:
				return op.succeed(stored, nil, attrs.OutcomeReturn), nil
			default:
				return nil, op.fail(next.Outcome(), res.err, next == attrs.DecisionCheckState)
			}
		}
		if res.resp != nil {
			return op.succeed(res.resp, res.release, res.ev.decision.Outcome()), nil
		}
		res.release()
		inFlightWrite := res.ev.decision == attrs.DecisionCanceled && !op.idempotent && !neverSent(res.err, res.ev.class)
		err = res.err
		if res.notReplayable {
			err = ErrNotReplayable
		}
		return nil, op.fail(res.ev.decision.Outcome(), err, inFlightWrite)
	}
}

// begin opens the operation: id, deadline on the monotonic clock, span.
func (t *Transport) begin(req *http.Request) *operation {
	op := &operation{t: t, req: req, method: methodOf(req), start: time.Now()}
	op.deadline = op.start.Add(t.cfg.deadline)
	if d, ok := req.Context().Deadline(); ok && d.Before(op.deadline) {
		op.deadline = d
	}
	if id, ok := OperationIDFromContext(req.Context()); ok {
		op.id = id
	} else {
		op.id = NewOperationID()
	}
	op.hasBody = req.Body != nil && req.Body != http.NoBody
	op.replayable = !op.hasBody || req.GetBody != nil
	// A contract is the user's word that repeating is safe where the method
	// alone does not say so (WithIdempotentMethods, or an Idempotency-Key
	// under WithIdempotencyKeyContract). It is recorded so that readers can
	// tell a legitimate resend of a write from a blind one.
	op.contract = t.hasIdempotencyKey(req) || (t.cfg.idempotentMethods[op.method] && !safeMethod(op.method))
	op.idempotent = safeMethod(op.method) || op.contract

	op.ctx, op.span = t.tracer.Start(req.Context(), t.cfg.operationName(req), trace.WithSpanKind(trace.SpanKindInternal))
	if op.span.IsRecording() {
		op.span.SetAttributes(
			attrs.OperationIDKey.String(op.id),
			attrs.HTTPRequestMethodKey.String(op.method),
			attrs.URLFullKey.String(op.sanitizedURL()),
			attrs.ServerAddressKey.String(req.URL.Hostname()),
			attrs.BudgetMsKey.Int64(ms(op.deadline.Sub(op.start))),
		)
		if op.contract {
			op.span.SetAttributes(attrs.IdempotencyContractKey.Bool(true))
		}
	}
	return op
}

func (t *Transport) hasIdempotencyKey(req *http.Request) bool {
	for _, h := range t.cfg.idempotencyHeaders {
		if req.Header.Get(h) != "" {
			return true
		}
	}
	return false
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
		op.t.budget.deposit(op.req)
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

// attemptResult is what one call produced. release frees the attempt's
// context; for a returned response it runs when the body is closed.
type attemptResult struct {
	resp          *http.Response
	err           error
	release       context.CancelFunc
	span          trace.Span
	ev            attemptEvent
	notReplayable bool // a retry was due but the body cannot be sent again
}

// call makes attempt n and decides what follows.
func (op *operation) call(n int, remaining time.Duration, body io.ReadCloser) attemptResult {
	res := attemptResult{ev: attemptEvent{attempt: n, remaining: remaining}}
	ctx, span := op.startAttemptSpan(n, remaining)
	res.span = span
	ctx, res.release = context.WithTimeout(ctx, min(op.t.cfg.attemptTimeout, remaining))
	r := op.req.WithContext(ctx)
	r.Body = body
	op.attempts = n

	started := time.Now()
	resp, err := op.t.attempt.RoundTrip(r)
	now := time.Now()
	res.ev.elapsed = now.Sub(started)

	obs := observation{
		idempotent:     op.idempotent,
		remainingAfter: op.deadline.Sub(now),
		attemptsLeft:   op.t.cfg.maxAttempts - n,
		backoff:        op.t.cfg.backoff.Delay(n),
		replayable:     op.replayable,
	}
	if err != nil {
		res.err = err
		res.ev.class = classify(err, op.req.Context().Err())
		obs.errorClass, obs.neverSent = res.ev.class, neverSent(err, res.ev.class)
	} else {
		res.resp = resp
		res.ev.status = resp.StatusCode
		obs.status, obs.retryableStatus = resp.StatusCode, op.t.cfg.retryableStatuses[resp.StatusCode]
		if v := resp.Header.Get("Retry-After"); v != "" {
			res.ev.retryAfter, res.ev.retryAfterError = ParseRetryAfter(v, now)
			res.ev.hasRetryAfter = res.ev.retryAfterError == nil
			obs.retryAfter = res.ev.retryAfter
		}
	}
	res.ev.decision, res.ev.backoff = decide(obs)
	res.ev.decision = op.admit(res.ev.decision)
	if res.ev.decision != attrs.DecisionRetry {
		res.ev.backoff = 0
	}
	res.notReplayable = res.ev.decision == attrs.DecisionStop && !op.replayable && retryable(obs)
	res.ev.notReplayable = res.notReplayable
	return res
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
	op.t.metrics.RecordBackoff(op.ctx, op.method, op.req.URL.Hostname(), d)
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
	ctx, cancel := context.WithDeadline(op.ctx, op.deadline)
	defer cancel()
	ctx, span := op.t.tracer.Start(ctx, attrs.StateCheckSpanName, trace.WithSpanKind(trace.SpanKindInternal))
	defer span.End()

	result, err := hook(ctx, StateCheck{OperationID: op.id, Request: op.req.Clone(ctx), Attempt: n, Err: cause})
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
	next := op.admit(afterStateCheck(state, op.deadline.Sub(time.Now()), op.t.cfg.maxAttempts-n, op.replayable))
	if span.IsRecording() {
		span.SetAttributes(attrs.OperationIDKey.String(op.id), state.Attribute(), next.Attribute())
	}
	if next == attrs.DecisionReturn {
		return next, result.Response
	}
	return next, nil
}

// succeed ends the operation with a response for the caller. The attempt
// context stays alive until the body is closed, so the body can be read.
func (op *operation) succeed(resp *http.Response, release context.CancelFunc, outcome attrs.Outcome) *http.Response {
	if release != nil {
		resp.Body = releaseOnClose(resp.Body, release)
	}
	op.end(outcome)
	return resp
}

// fail ends the operation with an error.
func (op *operation) fail(outcome attrs.Outcome, cause error, unknownWrite bool) error {
	op.end(outcome)
	return &Error{Outcome: outcome, OperationID: op.id, Attempts: op.attempts, Err: cause, unknownWrite: unknownWrite}
}

func (op *operation) end(outcome attrs.Outcome) {
	if op.span.IsRecording() {
		op.span.SetAttributes(attrs.AttemptsKey.Int(op.attempts), outcome.Attribute())
		if outcome != attrs.OutcomeReturn {
			op.span.SetStatus(codes.Error, string(outcome))
		}
	}
	op.span.End()
	op.t.metrics.RecordOperation(op.ctx, metrics.Operation{
		Method:        op.method,
		ServerAddress: op.req.URL.Hostname(),
		Outcome:       outcome,
		Attempts:      op.attempts,
		Duration:      time.Since(op.start),
	})
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// discard drains a response that will not be returned (bounded) and closes
// it, so its connection can be reused and its client span ends.
func discard(resp *http.Response, release context.CancelFunc) {
	if resp != nil && resp.Body != nil {
		_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
		resp.Body.Close()
	}
	if release != nil {
		release()
	}
}
