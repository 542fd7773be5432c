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
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

// operation is the state of one RoundTrip. It is allocated once per
// RoundTrip and holds the first attempt and the buffers its telemetry
// needs, so that the hot path allocates little else of its own.
type operation struct {
	t    *Transport
	req  *http.Request // the caller's request: only read and copied
	ctx  context.Context
	span trace.Span

	ident    identity
	clock    clock
	policy   requestPolicy
	progress progress
	tel      opTelemetry

	// buffered is the caller's body read into memory for retries, when it
	// had no GetBody (see bufferBody).
	buffered *bufferedBody
	// body wraps the returned response's body (see handOver).
	body  responseBody
	first attempt
	// results is where the caller asked the operation's end to be
	// reported (WithResults), nil when it did not.
	results *Results
}

// identity is who the operation is: its id and where it stands among the
// operations that share it.
type identity struct {
	id string // "" until first needed: see opID
	// oc is the caller's WithOperationID state: attempt numbers count on
	// across the operations made under it.
	oc *operationContext
	// attemptBase is the number of attempts earlier hops of a redirect
	// chain made: attempt numbers and request ids keep counting.
	attemptBase int
	redirects   int // hops before this one in a redirect chain
	repeat      int // operations made before this one under the same context
}

// clock holds the operation's times. start is when the operation began;
// every later instant is kept as the time since start (see since). limit
// is the time from start to the deadline, which for a redirect hop is the
// first hop's. callerBound: that deadline is the caller's context's, so
// reaching it is the caller's deadline passing, whichever timer notices
// first (see inputAt).
type clock struct {
	start       time.Time
	deadline    time.Time
	limit       time.Duration
	callerBound bool
}

// requestPolicy is what the policy knows of the request, judged on the
// prepared request of the first attempt (see judgeFirst).
type requestPolicy struct {
	method      string
	maxAttempts int
	repeatable  bool // safe to repeat (see input.repeatable)
	contract    bool // repeatable by the user's word, not the method
	noRetry     bool
	// write: the request may change state on the server, so an answer it
	// lost leaves an outcome to resolve: a method that is not safe, unless
	// the caller declared the request repeatable (Intent.Repeatable, which
	// marks reads sent as POST).
	write      bool
	replayable bool // the caller's body can be had again
	hasBody    bool
	// attemptTimeout is the Transport's WithAttemptTimeout, or the
	// request's Intent.AttemptTimeout.
	attemptTimeout time.Duration
	// contractHeaders is the first attempt's prepared values of the
	// idempotency-key contract's headers, which later attempts may not
	// change (see PrepareFunc).
	contractHeaders string
}

// progress is where the operation stands.
type progress struct {
	attempts int // network calls made by this operation
	// callerBody: the caller's body was not handed to an attempt yet, so
	// the operation must close it if it ends before the first call.
	callerBody bool
	// afterRetry: a retry was decided and its call not made yet.
	afterRetry bool
	// unresolvedWrite: a write of this operation has an unknown outcome.
	unresolvedWrite bool
	// abandoned is the number of the call a retry planned and that was not
	// made, 0 when none (see abandonPlanned).
	abandoned int
	// returned: run returned; until then, a panic leaves the operation
	// to abandonOnPanic, however far it went (end included).
	returned bool
	// callerExpired: the operation ended because the caller's deadline
	// passed (see awaitCaller).
	callerExpired bool
	lastEvent     *attemptEvent
	current       *attempt // the attempt in progress, for cleanup after a panic
	// stored is the response of no attempt (the state check's) being
	// handed over, for cleanup after a panic.
	stored *http.Response
}

// opTelemetry is what the operation's telemetry reuses.
type opTelemetry struct {
	// recording is span.IsRecording(), read once: the SDK takes the span's
	// lock for each call, and a span that records stops only when it ends,
	// which only the operation does.
	recording bool
	cleanURL  string
	labels    attribute.Set // extra metric labels (WithMetricAttributes)
	budgetKey string
	keyed     bool
	// kv holds the attributes of the span being written, so that each span
	// gets them in one SetAttributes call; see attrs.
	kv *[24]attribute.KeyValue
}

// result is what one attempt came to: the response or the error (never
// both), and the verdict the transport carries out.
type result struct {
	resp *http.Response
	err  error
	v    verdict
}

func newOperation(t *Transport, req *http.Request) *operation {
	op := &operation{t: t, req: req}
	op.clock.start = time.Now()
	op.policy.method = methodOf(req)
	op.progress.callerBody = req.Body != nil
	return op
}

func (op *operation) run() (*http.Response, error) {
	for n := 1; ; n++ {
		now := op.since()
		if v := decide(op.inputAt(phaseBeforeCall, now)); !v.goAhead() {
			op.abandonPlanned(op.nextNumber(), v)
			return nil, op.fail(v, errors.Join(op.callerErr(), op.bodyErr()), now)
		}
		a, v, err := op.newAttempt(n)
		if a == nil {
			return nil, op.fail(v, err, op.since())
		}
		op.progress.attempts, op.progress.callerBody, op.progress.afterRetry = n, false, false
		res := op.send(a)
		op.progress.unresolvedWrite = res.v.unresolvedWrite
		switch res.v.decision {
		case attrs.DecisionRetry:
			discard(res.resp, a, res.v.drain)
			op.pause(a.end+res.v.pause, res.v.pause)
			op.progress.afterRetry = true
			continue
		case attrs.DecisionCheckState:
			a.release()
			sv, stored, checkErr := op.checkState(a, res.err)
			switch sv.decision {
			case attrs.DecisionRetry:
				op.progress.afterRetry, op.progress.unresolvedWrite = true, false
				continue
			case attrs.DecisionReturn:
				return op.succeed(stored, nil, sv), nil
			}
			return nil, op.failAfterCheck(sv, res.err, checkErr)
		}
		if res.resp != nil {
			return op.succeed(res.resp, a, res.v), nil
		}
		a.release()
		return nil, op.fail(res.v, res.err, a.end)
	}
}

// begin opens the operation: its limits (the earliest of the caller's
// context deadline, the Transport's or the request's deadline, and the
// deadline of the redirect chain it continues), what the request is
// allowed, and its span.
func (op *operation) begin() {
	t, req := op.t, op.req
	ctx := req.Context()
	sc := scopeOf(ctx)
	intent := sc.intent
	op.results = sc.results
	op.setLimits(ctx, sc)
	op.policy.hasBody = req.Body != nil && req.Body != http.NoBody
	op.policy.replayable = !op.policy.hasBody || req.GetBody != nil
	// A contract is the user's word that repeating is safe where the method
	// alone does not say so (WithIdempotentMethods, Intent.Repeatable, or
	// an Idempotency-Key under WithIdempotencyKeyContract, which is judged
	// on the first prepared request). It is recorded so that readers can
	// tell a legitimate resend of a write from a blind one.
	safe := safeMethod(op.policy.method)
	op.policy.contract = !safe && (intent.Repeatable || t.cfg.idempotentMethods[op.policy.method])
	op.policy.repeatable = safe || op.policy.contract
	op.policy.write = !safe && !intent.Repeatable
	op.policy.noRetry = intent.NoRetry
	if f := t.cfg.metricAttributes; f != nil {
		op.tel.labels = metrics.NewLabels(f(req)...)
	}
	op.ctx, op.span = t.startOperationSpan(ctx, op)
	op.tel.recording = op.span.IsRecording()
	if op.ident.oc == nil && op.ident.redirects == 0 && !sc.nested && op.tel.recording {
		if parent := trace.SpanContextFromContext(ctx); parent.IsValid() {
			op.ident.repeat = t.repeats.next(parent)
		}
	}
	op.bufferBody()
}

// setLimits sets the attempt limit, the deadline and the operation's
// identity, which a redirect hop takes from the hop it follows.
func (op *operation) setLimits(ctx context.Context, sc scope) {
	intent := sc.intent
	op.policy.maxAttempts = op.t.cfg.maxAttempts
	if intent.MaxAttempts > 0 {
		op.policy.maxAttempts = intent.MaxAttempts
	}
	op.policy.attemptTimeout = op.t.cfg.attemptTimeout
	if intent.AttemptTimeout > 0 {
		op.policy.attemptTimeout = intent.AttemptTimeout
	}
	limit := op.t.cfg.deadline
	if intent.Deadline > 0 {
		limit = intent.Deadline
	}
	c := &op.clock
	c.deadline = c.start.Add(limit)
	callerDeadline, hasCallerDeadline := ctx.Deadline()
	if hasCallerDeadline && callerDeadline.Before(c.deadline) {
		c.deadline = callerDeadline
	}
	oc := sc.oc
	op.ident.oc = oc
	if prev := chainedOperation(op.req); prev != nil {
		// A redirect hop: same contract as the hop it follows.
		op.ident.id = prev.opID()
		op.ident.attemptBase = prev.ident.attemptBase + prev.progress.attempts
		op.ident.redirects = prev.ident.redirects + 1
		if prev.clock.deadline.Before(c.deadline) {
			c.deadline = prev.clock.deadline
		}
	} else if oc != nil {
		op.ident.repeat = int(oc.operations.Add(1) - 1)
	}
	if oc != nil && op.ident.id == "" {
		op.ident.id = oc.id
	}
	c.limit = c.deadline.Sub(c.start)
	c.callerBound = hasCallerDeadline && !c.deadline.Before(callerDeadline)
}

// judgeFirst judges, on the first attempt's prepared request, what the
// policy needs from its headers: whether it carries an idempotency key
// under WithIdempotencyKeyContract (a contract), and the contract headers'
// values, which later attempts may not change.
func (op *operation) judgeFirst(prepared *http.Request) {
	names := op.t.cfg.idempotencyHeaders
	if len(names) == 0 || safeMethod(op.policy.method) {
		return
	}
	values, keyed := contractHeaders(prepared.Header, names)
	op.policy.contractHeaders = values
	if keyed {
		op.policy.contract, op.policy.repeatable = true, true
	}
}

// prepareChanged reports whether a prepared request changed what the policy
// judged, with the cause: the method or the host (retarget), or, after the
// first attempt, the contract's headers.
func (op *operation) prepareChanged(prepared *http.Request, n int) error {
	if methodOf(prepared) != op.policy.method || prepared.URL == nil || prepared.URL.Host != op.req.URL.Host ||
		prepared.Host != op.req.Host {
		return errPrepareRetarget
	}
	if n > 1 && len(op.t.cfg.idempotencyHeaders) > 0 && !safeMethod(op.policy.method) {
		if values, _ := contractHeaders(prepared.Header, op.t.cfg.idempotencyHeaders); values != op.policy.contractHeaders {
			return errPrepareContract
		}
	}
	return nil
}

// contractHeaders returns the values of the named headers, in one string
// that compares them all, and whether any carries a key.
func contractHeaders(h http.Header, names []string) (string, bool) {
	var b strings.Builder
	keyed := false
	for _, name := range names {
		v := h.Values(name)
		keyed = keyed || (len(v) > 0 && v[0] != "")
		b.WriteString(strconv.Quote(strings.Join(v, "\x00")))
	}
	return b.String(), keyed
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
	kv := op.startFields(op.attrs())
	return t.tracer.Start(ctx, t.cfg.operationName(op.req), t.internal[0], trace.WithAttributes(kv...))
}

// startFields appends the fields the operation is known by from its start,
// which its span (at start, for samplers) and its retry.operation record
// both carry.
func (op *operation) startFields(kv []attribute.KeyValue) []attribute.KeyValue {
	u := op.req.URL
	kv = attrs.AppendMethod(append(kv, attrs.OperationIDKey.String(op.opID())), op.policy.method)
	kv = append(kv,
		attrs.URLFullKey.String(op.sanitizedURL()),
		attrs.ServerAddressKey.String(u.Hostname()),
	)
	if port := serverPort(u); port > 0 {
		kv = append(kv, attrs.ServerPortKey.Int(port))
	}
	return kv
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

func (t *Transport) isRetryableStatus(code int) bool {
	return code >= 400 && code <= 599 && t.retryableStatus[code-400]
}

// since reads the clock: the time since the operation began. It reads only
// the monotonic clock, and every duration and deadline check is taken
// from it.
func (op *operation) since() time.Duration { return time.Since(op.clock.start) }

// opID returns the operation id: the chain's or the caller's
// (WithOperationID), else one generated on first use, so that an operation
// nobody records or reports does not pay for one. Spans, log records,
// errors and state checks all read it here, so they agree.
func (op *operation) opID() string {
	if op.ident.id == "" {
		op.ident.id = NewOperationID()
	}
	return op.ident.id
}

// attemptNumber is the number of attempt n of the operation: counting on
// from the earlier operations under the same WithOperationID (redirect
// hops and repeats by an outer layer alike), or from the hops before this
// one in a redirect chain, so that request ids stay unique.
func (op *operation) attemptNumber(n int) int {
	if op.ident.oc != nil {
		return int(op.ident.oc.attempts.Add(1))
	}
	return op.ident.attemptBase + n
}

// nextNumber is the number the next attempt would have, without taking it.
func (op *operation) nextNumber() int {
	if e := op.progress.lastEvent; e != nil {
		return e.attempt + 1
	}
	return op.ident.attemptBase + 1
}

// kvBuffers lends operations their attribute buffer. A span copies the
// attributes it is given, so the buffer is reused for each span of the
// operation, and returned when the operation ends.
var kvBuffers = sync.Pool{New: func() any { return new([24]attribute.KeyValue) }}

// attrs returns the operation's attribute buffer, empty. It is taken from
// kvBuffers on first use, so that operations whose spans do not record
// never hold one.
func (op *operation) attrs() []attribute.KeyValue {
	if op.tel.kv == nil {
		op.tel.kv = kvBuffers.Get().(*[24]attribute.KeyValue)
	}
	return op.tel.kv[:0]
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
	if op.tel.cleanURL == "" {
		op.tel.cleanURL = SanitizeURL(op.req.URL)
	}
	return op.tel.cleanURL
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
// at now (since its start); attempt results are added by the caller.
func (op *operation) inputAt(p phase, now time.Duration) input {
	in := input{
		phase:           p,
		remaining:       op.clock.limit - now,
		attemptsLeft:    op.policy.maxAttempts - op.progress.attempts,
		repeatable:      op.policy.repeatable,
		noRetry:         op.policy.noRetry,
		replayable:      op.policy.replayable,
		write:           op.policy.write,
		unresolvedWrite: op.progress.unresolvedWrite,
		afterRetry:      op.progress.afterRetry,
	}
	switch err := op.callerErr(); {
	case err == nil:
		// The caller's deadline is reached on the monotonic clock, even if
		// its context has not noticed yet: the decision must not depend on
		// which timer fired first.
		in.callerDeadline = op.clock.callerBound && now >= op.clock.limit
	case errors.Is(err, context.Canceled):
		in.callerCanceled = true
	default:
		in.callerDeadline = true
	}
	return in
}

// settle decides on in, asking the Backoff (retry n, after answer) and
// the retry budget only when decide needs their answers. The Backoff is
// the last hook before the decision, so the clock is read again after it:
// the decision is taken on the time left then.
func (op *operation) settle(in input, n int, answer *Answer) verdict {
	v := decide(in)
	if v.needPause {
		in.pauseAsked = true
		in.backoff = op.t.cfg.backoffFor(n, *answer)
		in.remaining = op.clock.limit - op.since()
		v = decide(in)
	}
	if v.needBudget {
		in.budgetAsked = true
		if b := op.t.budget; b != nil {
			now := op.clock.limit - in.remaining
			in.budget = b.admit(op.key(), op.clock.start.Add(now), op.clock.start.Add(now+v.pause))
		}
		v = decide(in)
	}
	return v
}

// key is the operation's retry budget key, computed once.
func (op *operation) key() string {
	if !op.tel.keyed {
		op.tel.budgetKey, op.tel.keyed = op.t.budget.key(op.req), true
	}
	return op.tel.budgetKey
}

// pause waits until the next attempt may start (until, since the start),
// or until the caller gives up: the next decision sees which.
func (op *operation) pause(until, d time.Duration) {
	op.t.metrics.RecordBackoff(op.ctx, metrics.Backoff{Method: op.policy.method, ServerAddress: op.metricServer(), Labels: op.tel.labels, Duration: d})
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
	} else {
		op.progress.stored = resp
	}
	op.end(v, op.since())
	op.report(v, resp.StatusCode, nil)
	return resp
}

// sanitize returns err, from a hook or GetBody, with a message from which
// the URLs the request is known by (the caller's, and wire, the prepared
// request's, when a hook changed it) are sanitized.
func (op *operation) sanitize(err error, wire *url.URL) error {
	if err == nil {
		return nil
	}
	return newAttemptError(err, attrs.ErrorClassOther, op.req.URL, wire)
}

// abandonPlanned records, on the operation span, a call that a retry
// planned and that was not made, with the verdict that stopped it, so that
// no retry is left without its next attempt and no explanation.
func (op *operation) abandonPlanned(number int, v verdict) {
	if !op.progress.afterRetry || !op.tel.recording {
		return
	}
	op.progress.abandoned = number
	op.span.AddEvent(attrs.EventAttemptAbandoned, trace.WithAttributes(
		attrs.AttemptKey.Int(number), v.decision.Attribute(), v.reason.Attribute()))
}

// fail ends the operation at now with an error.
func (op *operation) fail(v verdict, cause error, now time.Duration) error {
	return op.failChecked(v, cause, nil, now)
}

// failAfterCheck ends the operation after a state check that did not
// resolve it, with the check's error, if any.
func (op *operation) failAfterCheck(v verdict, cause, checkErr error) error {
	return op.failChecked(v, cause, checkErr, op.since())
}

func (op *operation) failChecked(v verdict, cause, checkErr error, now time.Duration) error {
	if op.progress.callerBody {
		closeBody(op.req)
		op.progress.callerBody = false
	}
	op.end(v, now)
	lastTimedOut := false
	if e := op.progress.lastEvent; e != nil {
		lastTimedOut = e.class == attrs.ErrorClassTimeout
	}
	err := &Error{Outcome: v.decision.Outcome(), Reason: v.reason, OperationID: op.opID(), Attempts: op.progress.attempts,
		Err: cause, unknownWrite: v.unknownWrite, stateCheckErr: checkErr,
		timeout: v.decision == attrs.DecisionDeadlineExceeded || lastTimedOut}
	op.report(v, 0, err)
	return err
}

// report tells the caller's Results, if any, what the operation came to.
func (op *operation) report(v verdict, status int, err error) {
	if op.results == nil {
		return
	}
	op.results.add(OperationResult{OperationID: op.opID(), Outcome: v.decision.Outcome(), Reason: v.reason,
		Attempts: op.progress.attempts, StatusCode: status, OutcomeUnknown: v.unknownWrite, Err: err})
}

// awaitCaller holds the operation's return until the caller's context is
// done, when the operation ended because the caller's deadline passed: a
// loop above that stops only on ctx.Err() (stripe-go's, many others) then
// cannot start another call in the same context, whose error would replace
// this one. The context's own timer fires at the same instant as the
// operation's, so the wait is that timer's latency; maxCallerLag bounds it
// for a context that reports a deadline it does not keep.
func (op *operation) awaitCaller() {
	if !op.progress.callerExpired {
		return
	}
	ctx := op.req.Context()
	if ctx.Err() != nil {
		return
	}
	lag := time.NewTimer(maxCallerLag)
	defer lag.Stop()
	select {
	case <-ctx.Done():
	case <-lag.C:
	}
}

// maxCallerLag bounds awaitCaller.
const maxCallerLag = time.Second

// end writes the operation span's attributes, ends it, emits its log
// event and records the operation's metrics.
func (op *operation) end(v verdict, now time.Duration) {
	op.progress.callerExpired = v.decision == attrs.DecisionDeadlineExceeded && v.reason == attrs.ReasonCaller
	outcome := v.decision.Outcome()
	errorType := ""
	if outcome != attrs.OutcomeReturn {
		errorType = string(outcome)
		if e := op.progress.lastEvent; e != nil && e.errorType() != "" {
			errorType = e.errorType()
		}
	}
	if op.tel.recording {
		op.writeEnd(outcome, errorType)
	}
	op.span.End()
	op.logOperation(v, errorType, now)
	op.releaseBuffer()
	op.t.metrics.RecordOperation(op.ctx, metrics.Operation{
		Method:        op.policy.method,
		ServerAddress: op.metricServer(),
		Labels:        op.tel.labels,
		Outcome:       outcome,
		ErrorType:     errorType,
		Attempts:      op.progress.attempts,
		Duration:      now,
	})
}

// writeEnd writes the operation span's closing attributes and status.
func (op *operation) writeEnd(outcome attrs.Outcome, errorType string) {
	op.span.SetAttributes(op.endFields(op.attrs(), outcome, errorType)...)
	if outcome != attrs.OutcomeReturn {
		op.span.SetStatus(codes.Error, string(outcome))
	}
}

// endFields appends the operation's closing fields, which its span and its
// retry.operation record both carry.
func (op *operation) endFields(kv []attribute.KeyValue, outcome attrs.Outcome, errorType string) []attribute.KeyValue {
	kv = append(kv,
		// An operation that starts after its context's deadline has no
		// time at all, never less.
		attrs.DeadlineMsKey.Int64(ms(max(op.clock.limit, 0))),
		attrs.AttemptsKey.Int(op.progress.attempts),
		outcome.Attribute(),
	)
	if errorType != "" {
		kv = append(kv, attrs.ErrorTypeKey.String(errorType))
	}
	if op.policy.contract {
		kv = append(kv, attrs.IdempotencyContractKey.Bool(true))
	}
	if op.ident.redirects > 0 {
		kv = append(kv, attrs.RedirectsKey.Int(op.ident.redirects))
	}
	if op.ident.repeat > 0 {
		kv = append(kv, attrs.RepeatKey.Int(op.ident.repeat))
	}
	if op.progress.abandoned > 0 {
		kv = append(kv, attrs.AbandonedAttemptKey.Int(op.progress.abandoned))
	}
	return kv
}

func (op *operation) releaseBuffer() {
	op.releaseBody()
	if op.tel.kv != nil {
		clear(op.tel.kv[:]) // retain no ids or URLs in the pool
		kvBuffers.Put(op.tel.kv)
		op.tel.kv = nil
	}
}

// abandonOnPanic is deferred by RoundTrip. When a base RoundTripper, a
// hook or the telemetry (a span processor, a log exporter, a metric view,
// a slog handler) panics, or calls runtime.Goexit, before RoundTrip
// returns, it releases what the operation holds, the response being handed
// over included, ends the operation's spans with an event naming the
// panic, and lets the panic go on: a retry layer must not hide a crash,
// but must not leave spans open, timers running, connections held or
// memory reserved either. It runs whenever run did not return, however
// far the operation went: each step is safe after what end released.
func (op *operation) abandonOnPanic() {
	if op.progress.returned {
		return
	}
	r := recover()
	// What holds memory, connections and goroutines first: ending the
	// spans runs telemetry, which may panic again, and so may a body's
	// Close (see afterPanic).
	a := op.progress.current
	if a != nil {
		a.abandon()
	}
	if op.progress.callerBody {
		op.progress.callerBody = false
		afterPanic(func() { closeBody(op.req) })
	}
	op.releaseBuffer()
	if resp := op.progress.stored; resp != nil {
		op.progress.stored = nil
		afterPanic(func() { closeResponse(resp) })
	}
	if a != nil {
		afterPanic(func() { a.endAfterPanic(r) })
	}
	if op.span != nil { // nil: the panic came before the span started
		afterPanic(func() { endWithPanic(op.span, r) })
	}
	if r != nil {
		panic(r)
	}
}

// afterPanic runs f, a cleanup step after a panic, dropping a panic of its
// own (telemetry that panics on every span, a body whose Close panics, do
// so again), so that the first panic goes on and the steps after f run.
func afterPanic(f func()) {
	defer func() { _ = recover() }()
	f()
}

// endWithPanic ends span with an event naming the panic r, if it still
// records. Ending a span twice is harmless: the SDK ignores the second.
func endWithPanic(span trace.Span, r any) {
	if span.IsRecording() {
		span.AddEvent(attrs.EventPanic, trace.WithAttributes(panicAttributes(r)...))
		span.SetStatus(codes.Error, attrs.EventPanic)
	}
	span.End()
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
