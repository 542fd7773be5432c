// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/hostname"
	"github.com/otelretry/otelretry-go/internal/httpmethod"
	"github.com/otelretry/otelretry-go/internal/redact"
	"github.com/otelretry/otelretry-go/metrics"
)

// sendMode is how a Transport sends an attempt and where it records the
// attempt's event: each mode records it in one place (recordAttempt), on
// the span that mode gives the attempt.
type sendMode uint8

const (
	// sendThroughClient: through otelhttp's client transport, whose CLIENT
	// span is the attempt span and injects the trace context.
	sendThroughClient sendMode = iota
	// sendWithOwnSpan (WithoutClientSpans, a tracer that may record):
	// straight to the base under the transport's INTERNAL attempt span,
	// the trace context injected from it with the transport's
	// propagators; the base, already instrumented, then injects from its
	// own CLIENT span with its own, replacing the fields they set.
	sendWithOwnSpan
	// sendInjectOnly: the no-op tracer (and, with client spans, the no-op
	// meter: otelhttp would record nothing): straight to the base with
	// the caller's trace context injected.
	sendInjectOnly
)

// chooseMode picks the sending mode from the options and the providers.
func chooseMode(clientSpans, noopTracer, noopMeter bool) sendMode {
	switch {
	case clientSpans && noopTracer && noopMeter, !clientSpans && noopTracer:
		return sendInjectOnly
	case clientSpans:
		return sendThroughClient
	}
	return sendWithOwnSpan
}

// recorder writes what the transport records, to every channel: spans,
// the log events (WithLoggerProvider), the slog records (WithLogger) and
// the metrics. It is made once per Transport, from its sending mode, and
// every record is derived from one value (an attemptEvent, an
// operationEnd) by one list of fields, so the channels cannot disagree on
// the fields they share.
type recorder struct {
	mode       sendMode
	tracer     trace.Tracer
	noopTracer bool
	// internal is the start option of the transport's own spans.
	internal      []trace.SpanStartOption
	metrics       *metrics.Recorder
	logger        *slog.Logger
	events        log.Logger
	operationName func(*http.Request) string
	// userNamed: operationName is the user's (WithSpanNameFormatter),
	// handed the request as users' functions are (see userRequest).
	userNamed        bool
	attemptName      func(*http.Request) string
	metricsServer    bool
	metricAttributes func(*http.Request) []attribute.KeyValue
	// keyValues: an idempotency key's value is recorded on spans and log
	// records (WithIdempotencyKeyValues).
	keyValues bool
	// urls is the operations' last sanitized URL.
	urls lastURL
}

// opRecord is what the recorder keeps of one operation while it runs.
type opRecord struct {
	// ctx is the operation span's context. It derives from bounded, the
	// caller's context below a boundary of the operation's own, so that a
	// call the user's telemetry makes with the context it is handed (a
	// span processor's OnStart, a slog handler, a log processor that ships
	// its records at once) is an operation of its own (see boundary).
	ctx     context.Context
	bounded boundedContext
	span    trace.Span
	// recording is span.IsRecording(), read once: the SDK takes the span's
	// lock for each call, and a span that records stops only when it ends,
	// which only the operation does.
	recording bool
	req       *http.Request // the caller's: its URL
	// userReq is req below the operation's boundary, made for the first
	// user function given it (see userRequest).
	userReq  *http.Request
	method   string
	ident    *identity
	clock    *clock
	urls     *lastURL
	cleanURL string
	labels   attribute.Set // extra metric labels (WithMetricAttributes)
	// key is the idempotency key the operation's request carries, as it is
	// recorded (recordKey).
	key keyRecord
	// buf holds the attributes of the span being written, so that each
	// span gets them in one SetAttributes call.
	buf kvBuffer
	// concurrent: the operation's attempts record on goroutines of their
	// own, at the same time (a race of hedged attempts): each takes a
	// buffer of its own, and what the record fills in on first use is
	// filled in before (concurrently).
	concurrent bool
	// hedgesRefused are the reasons of the hedges the operation refused,
	// and notBuffered why its body was not buffered: kept for its log
	// record (which has no events) when there is one.
	hedgesRefused []string
	notBuffered   string
}

// keyRecord is what is recorded of the idempotency key a request carries:
// where it came from ("" when it carries none), and its value, only when
// the user asked for it.
type keyRecord struct {
	source attrs.KeySource
	value  string
}

// appendTo appends the key's fields to kv.
func (k keyRecord) appendTo(kv []attribute.KeyValue) []attribute.KeyValue {
	if k.source == "" {
		return kv
	}
	kv = append(kv, k.source.Attribute())
	if k.value != "" {
		kv = append(kv, attrs.IdempotencyKeyValueKey.String(k.value))
	}
	return kv
}

// recordKey records that the operation's request carries an idempotency
// key, from source (none when ""), with its value only when the user asked
// for it: on the operation's records and each attempt's, never on metrics.
// It is known once the first attempt is prepared, before any is sent.
func (r *recorder) recordKey(o *opRecord, source attrs.KeySource, value string) {
	if !r.keyValues {
		value = ""
	}
	o.key = keyRecord{source: source, value: value}
}

// kvBuffers lends records their attribute buffer. A span copies the
// attributes it is given, so the buffer is reused for each span of the
// operation, and returned when the operation ends.
var kvBuffers = sync.Pool{New: func() any { return new([24]attribute.KeyValue) }}

// kvBuffer is an attribute buffer from kvBuffers, taken on first use, so
// that operations whose spans do not record never hold one.
type kvBuffer struct{ kv *[24]attribute.KeyValue }

// attrs returns the buffer, empty.
func (b *kvBuffer) attrs() []attribute.KeyValue {
	if b.kv == nil {
		b.kv = kvBuffers.Get().(*[24]attribute.KeyValue)
	}
	return b.kv[:0]
}

// release gives the buffer back.
func (b *kvBuffer) release() {
	if b.kv != nil {
		clear(b.kv[:]) // retain no ids or URLs in the pool
		kvBuffers.Put(b.kv)
		b.kv = nil
	}
}

// attrs returns the operation's attribute buffer, empty.
func (o *opRecord) attrs() []attribute.KeyValue { return o.buf.attrs() }

// release gives the operation's attribute buffer back, when it ends.
func (o *opRecord) release() { o.buf.release() }

// recordConcurrently prepares the record for attempts that record at the
// same time: what it fills in on first use (the operation's id, its
// sanitized URL) is filled in now, and each attempt record takes a buffer
// of its own (recordAttempt).
func (o *opRecord) recordConcurrently() {
	o.ident.opID()
	o.sanitizedURL()
	o.concurrent = true
}

// userRequest is the caller's request as a user's function that is
// handed it (a WithMetricAttributes labeler, a WithSpanNameFormatter, a
// Budget's Key) sees it: its context below the operation's boundary, so
// that a call the function makes with it is an operation of its own,
// inheriting none of the caller's id, intent and result slot.
func (o *opRecord) userRequest() *http.Request {
	if o.userReq == nil {
		o.userReq = o.req.WithContext(&o.bounded)
	}
	return o.userReq
}

func (o *opRecord) sanitizedURL() string {
	if o.cleanURL == "" {
		o.cleanURL = o.urls.sanitize(o.req.URL)
	}
	return o.cleanURL
}

// boundedContext is a context below a boundary of its own: the
// operation's, kept in the record of the operation it bounds (without an
// allocation), and a state check's (lookupContext). Only Value is its
// own: it tells the operation's own Intent and id (own), which the
// functions it is handed to read (a span processor, a slog handler, the
// labeler, a formatter, Budget.Key, the state check), never those of an
// operation that called it from a hook; cancellation is the embedded
// context's, so contexts derived from it attach to that directly.
type boundedContext struct {
	context.Context
	bound boundary
	own   ownScope
}

func (c *boundedContext) Value(key any) any {
	if key == (boundaryKey{}) {
		return &c.bound
	}
	if v, ok := c.own.value(key); ok {
		return v
	}
	return c.Context.Value(key)
}

// startOperation starts the operation's INTERNAL span, with the attributes
// samplers need given at start, and its record o, in the caller's context
// below the operation's boundary (see opRecord.ctx). With the no-op tracer
// and a parent that does not record, Start would return the parent's span
// (or, with no parent, an empty span) in a context that carries nothing
// new; the parent's span and that context itself are used instead, without
// naming the span or copying the context.
func (r *recorder) startOperation(o *opRecord, caller context.Context, req *http.Request, method string, ident *identity, c *clock, own ownScope) {
	*o = opRecord{req: req, method: method, ident: ident, clock: c, urls: &r.urls, bounded: boundedContext{Context: caller, own: own}}
	ctx := context.Context(&o.bounded)
	if f := r.metricAttributes; f != nil {
		o.labels = metrics.NewLabels(f(o.userRequest())...)
	}
	switch parent := trace.SpanFromContext(ctx); {
	case r.noopTracer && !parent.IsRecording():
		o.ctx, o.span = ctx, parent
	case r.noopTracer:
		o.ctx, o.span = r.tracer.Start(ctx, "", r.internal...)
	default:
		kv := r.startFields(o, o.attrs())
		o.ctx, o.span = r.tracer.Start(ctx, r.nameOperation(o), r.internal[0], trace.WithAttributes(kv...))
	}
	o.recording = o.span.IsRecording()
}

// nameOperation names o's span: the user's formatter's name, or the
// default.
func (r *recorder) nameOperation(o *opRecord) string {
	if !r.userNamed {
		return r.operationName(o.req)
	}
	return r.operationName(o.userRequest())
}

// startFields appends the fields the operation is known by from its start,
// which its span (at start, for samplers) and its retry.operation record
// both carry.
func (r *recorder) startFields(o *opRecord, kv []attribute.KeyValue) []attribute.KeyValue {
	u := o.req.URL
	kv = httpmethod.Append(append(kv, attrs.OperationIDKey.String(o.ident.opID())), o.method)
	kv = append(kv,
		attrs.URLFullKey.String(o.sanitizedURL()),
		attrs.ServerAddressKey.String(u.Hostname()),
	)
	if port, ok := serverPort(u); ok {
		kv = append(kv, attrs.ServerPortKey.Int(port))
	}
	return kv
}

// serverPort is the URL's port (":0" too, which the budget keys as a
// port of its own), or the scheme's default when it writes none; false
// when there is none, or it is past int (url.Parse takes any digits: its
// span says no port rather than the default's).
func serverPort(u *url.URL) (int, bool) {
	if p := u.Port(); p != "" { // Atoi("") would allocate its error
		n, err := strconv.Atoi(p)
		return n, err == nil // a port past int is no port, and not the default
	}
	switch u.Scheme {
	case "http":
		return 80, true
	case "https":
		return 443, true
	}
	return 0, false
}

// metricServer is the server.address metric label: the host when
// WithServerAddressInMetrics asked for it, as one DNS name (hostname.One: one
// set of series for API.test. and api.test), else "" (and the URL is not
// read). It is decided here only; the metrics Recorder labels what it is
// given.
func (r *recorder) metricServer(o *opRecord) string {
	if !r.metricsServer {
		return ""
	}
	return hostname.One(o.req.URL.Hostname())
}

// startAttemptSpan starts the transport's own INTERNAL attempt span
// (sendWithOwnSpan).
func (r *recorder) startAttemptSpan(ctx context.Context, req *http.Request) (context.Context, trace.Span) {
	return r.tracer.Start(ctx, r.attemptName(req), r.internal...)
}

// attemptURL is the attempt's url.full: its prepared URL, sanitized. It is
// the operation's when the attempt kept the caller's URL.
func attemptURL(o *opRecord, ev *attemptEvent) string {
	if ev.url == nil || ev.url == o.req.URL {
		return o.sanitizedURL()
	}
	return SanitizeURL(ev.url)
}

// urlChanges reports whether sanitizing changes the attempt's URL, which
// otelhttp records raw on its CLIENT span.
func urlChanges(o *opRecord, ev *attemptEvent) bool {
	if ev.url == nil {
		return redact.Changes(o.req.URL)
	}
	return redact.Changes(ev.url)
}

// appendDefaultPort appends server.port where it is the scheme's default,
// written in the URL or not: otelhttp leaves that port out of its CLIENT
// span, where the semantic conventions require it and the operation span
// has it.
func appendDefaultPort(kv []attribute.KeyValue, o *opRecord, ev *attemptEvent) []attribute.KeyValue {
	u := o.req.URL
	if ev.url != nil {
		u = ev.url
	}
	port, ok := serverPort(u)
	if ok && (u.Port() == "" || u.Scheme == "http" && port == 80 || u.Scheme == "https" && port == 443) {
		kv = append(kv, attrs.ServerPortKey.Int(port))
	}
	return kv
}

// requestID is the attempt's retry.request.id, made once.
func requestID(o *opRecord, ev *attemptEvent) string { return ev.requestIDOf(o.ident.opID()) }

// fields returns the attempt event as attributes, appended to kv: the one
// list that the attempt span and the log records carry. On otelhttp's
// CLIENT span (onClientSpan) the fields otelhttp writes there itself, with
// the same values, are left to it: the method, unless it is outside the
// standard set, the status code, error.type (from the status, or from the
// attempt error's ErrorType) and url.full, unless sanitizing changes it.
// The span then carries the same list, written once.
func fields(o *opRecord, kv []attribute.KeyValue, ev *attemptEvent, onClientSpan bool) []attribute.KeyValue {
	kv = append(kv,
		attrs.OperationIDKey.String(o.ident.opID()),
		attrs.RequestIDKey.String(requestID(o, ev)),
		attrs.AttemptKey.Int(ev.attempt),
	)
	if !onClientSpan || httpmethod.Value(o.method) != o.method {
		// otelhttp names a method that differs from a standard one only in
		// case by the standard name ("get" as GET): written over it.
		kv = httpmethod.Append(kv, o.method)
	}
	if !onClientSpan || urlChanges(o, ev) {
		kv = append(kv, attrs.URLFullKey.String(attemptURL(o, ev)))
	}
	if onClientSpan {
		kv = appendDefaultPort(kv, o, ev)
	}
	kv = append(kv, attrs.RemainingMsKey.Int64(ms(ev.remaining)))
	if ev.attempt > 1 {
		kv = append(kv, attrs.HTTPRequestResendCountKey.Int(ev.attempt-1))
	}
	kv = outcomeFields(kv, ev, onClientSpan)
	kv = append(kv, attrs.ElapsedMsKey.Int64(ms(ev.elapsed)), ev.verdict.decision.Attribute(), ev.verdict.reason.Attribute())
	kv = pacingFields(kv, ev)
	kv = o.key.appendTo(kv)
	if ev.replayed {
		kv = append(kv, attrs.IdempotencyReplayedKey.Bool(true))
	}
	return kv
}

// outcomeFields appends what the attempt's answer was: its error class or
// its status (never both), the protocol's evidence, and error.type, the
// last two of which otelhttp writes on its own CLIENT span.
func outcomeFields(kv []attribute.KeyValue, ev *attemptEvent, onClientSpan bool) []attribute.KeyValue {
	if ev.class != "" {
		kv = append(kv, ev.class.Attribute())
	} else if !onClientSpan {
		kv = append(kv, attrs.HTTPResponseStatusCodeKey.Int(ev.status))
	}
	if ev.evidence.Protocol != "" || ev.evidence.Name != "" {
		kv = append(kv, attrs.EvidenceProtocolKey.String(ev.evidence.Protocol), attrs.EvidenceNameKey.String(ev.evidence.Name))
		if !ev.evidence.noCode {
			kv = append(kv, attrs.EvidenceCodeKey.Int64(int64(ev.evidence.Code)))
		}
	}
	if t := ev.errorType(); t != "" && (!onClientSpan || ev.class == "" && !otelhttpTypesStatus(ev.status)) {
		kv = append(kv, attrs.ErrorTypeKey.String(t))
	}
	return kv
}

// otelhttpTypesStatus reports whether otelhttp writes error.type on its
// CLIENT span for an answer of status: below 100 and from 400 on. An
// informational answer other than 101 it leaves untyped, where it is no
// success (errorType): otelretry writes it there.
func otelhttpTypesStatus(status int) bool { return status < 100 || status >= 400 }

// pacingFields appends the attempt's timing beside the decision: the
// server's hint, the pause before a retry, the writes seen and the
// hedge's place in its race.
func pacingFields(kv []attribute.KeyValue, ev *attemptEvent) []attribute.KeyValue {
	if ev.hasRetryAfter {
		kv = append(kv, attrs.RetryAfterMsKey.Int64(ms(ev.retryAfter)))
	}
	if ev.verdict.decision == attrs.DecisionRetry {
		kv = append(kv, attrs.BackoffMsKey.Int64(ms(ev.verdict.pause)))
	}
	if ev.writes > 0 {
		kv = append(kv, attrs.WireWritesKey.Int(int(ev.writes)))
	}
	if ev.hedge.of > 0 {
		kv = append(kv, attrs.HedgeOfKey.Int(ev.hedge.of))
	}
	if ev.hedge.hedged {
		kv = append(kv, attrs.HedgedAfterMsKey.Int64(ms(ev.hedge.sentAfter)))
	}
	return kv
}

// recordAttempt writes the attempt event on the attempt's span (all its
// fields in one call, and only when the span records), the logs and the
// metrics. In sendWithOwnSpan mode the span is the transport's INTERNAL
// attempt span, which it also ends and gives its status; otherwise it is
// otelhttp's CLIENT span, which otelhttp ends and gives its status, or
// none (nil).
func (r *recorder) recordAttempt(o *opRecord, span trace.Span, ev *attemptEvent) {
	if span == nil {
		span = nonRecording // no attempt span: logs and metrics only
	}
	buf := &o.buf
	if o.concurrent {
		var mine kvBuffer
		defer mine.release()
		buf = &mine
	}
	own := r.mode == sendWithOwnSpan
	var kv []attribute.KeyValue
	if span.IsRecording() { // once: the SDK locks the span for it
		kv = fields(o, buf.attrs(), ev, !own)
		span.SetAttributes(kv...)
		addEvents(span, ev)
		if own {
			setAttemptStatus(span, ev)
		}
	}
	if !own {
		// otelhttp's span carries part of the list, and writes the rest
		// itself: the logs carry all of it (see logAttempt).
		kv = nil
	}
	r.logAttempt(o, buf, span, kv, ev)
	r.metrics.RecordAttempt(o.ctx, metrics.Attempt{
		Method:        o.method,
		ServerAddress: r.metricServer(o),
		Labels:        o.labels,
		Decision:      ev.verdict.decision,
		ErrorClass:    ev.class,
		StatusCode:    ev.status,
		ErrorType:     ev.errorType(),
		Duration:      ev.elapsed,
	})
	if ev.verdict.reason == attrs.ReasonThrottle {
		r.recordThrottled(o) // the retry the attempt asked for
	}
	if own {
		span.End()
	}
}

// recordThrottled counts a request the client-side throttle refused: a
// first attempt (the operation ends with none), a retry (its attempt's
// verdict), a resend a state check asked for (the check's verdict) or a
// hedge (its hedge_refused event).
func (r *recorder) recordThrottled(o *opRecord) {
	r.metrics.RecordThrottled(o.ctx, metrics.Throttled{Method: o.method, ServerAddress: r.metricServer(o), Labels: o.labels})
}

// addEvents adds the attempt span's events: the extra writes on the wire,
// a malformed retry hint (its header's name and its problem: a header's
// value is never recorded), a body that could not be replayed.
func addEvents(span trace.Span, ev *attemptEvent) {
	addResends(span, 1, ev.writes)
	if h := ev.retryAfterError; h != nil {
		span.AddEvent(attrs.EventRetryAfterInvalid, trace.WithAttributes(attrs.RetryHintHeaderKey.String(h.header), h.problem.Attribute()))
	}
	if ev.verdict.reason == attrs.ReasonNotReplayable {
		span.AddEvent(attrs.EventBodyNotReplayable)
	}
}

// addResends adds a wire_resend event for each write after the first,
// from the write after from up to to.
func addResends(span trace.Span, from, to int32) {
	for i := max(from, 1); i < to; i++ {
		span.AddEvent(attrs.EventWireResend, trace.WithAttributes(attrs.WireWritesKey.Int(int(i+1))))
	}
}

// setAttemptStatus gives the transport's own attempt span its status, as
// otelhttp gives its CLIENT span.
func setAttemptStatus(span trace.Span, ev *attemptEvent) {
	if ev.verdict.decision == attrs.DecisionSuperseded {
		return // canceled because another attempt answered: no error of its own
	}
	if ev.class != "" {
		span.SetStatus(codes.Error, string(ev.class))
	} else if ev.status >= 400 {
		span.SetStatus(codes.Error, http.StatusText(ev.status))
	}
}

// recordLateWrites records the writes on the wire the base reported after
// the attempt's event was recorded (an HTTP/2 body that finished writing
// after the answer, a resend net/http made): an event of its own, on every
// channel that carries the attempt's writes (the span, as a wire_late
// event and a wire_resend event per extra write; the log events and the
// slog records, as a retry.wire record), so that what was recorded stays
// as it was.
func (r *recorder) recordLateWrites(o *opRecord, span trace.Span, ev *attemptEvent, writes int32) {
	if span == nil { // no attempt span: the no-op tracer, without client spans
		span = trace.SpanFromContext(o.ctx)
	}
	// The operation may have ended, and given its buffer back: the late
	// record has a list of its own.
	kv := lateFields(o, make([]attribute.KeyValue, 0, 4), ev, writes)
	if span.IsRecording() {
		span.AddEvent(attrs.EventWireLate, trace.WithAttributes(kv...))
		addResends(span, ev.writes, writes)
	}
	if !r.logs() {
		return
	}
	ctx := recordContext(o, span)
	if to := r.targets(ctx, log.SeverityInfo, attrs.LogEventWire, true); to.slog || to.events {
		r.log(ctx, span, to, attrs.LogEventWire, "retry wire", log.SeverityInfo, time.Now(), kv)
	}
}

// lateFields are the fields of a late writes record: the attempt's ids
// and number, and its writes on the wire now.
func lateFields(o *opRecord, kv []attribute.KeyValue, ev *attemptEvent, writes int32) []attribute.KeyValue {
	return append(kv,
		attrs.OperationIDKey.String(o.ident.opID()),
		attrs.RequestIDKey.String(requestID(o, ev)),
		attrs.AttemptKey.Int(ev.attempt),
		attrs.WireWritesKey.Int(int(writes)))
}

// recordBackoff records a pause before a retry.
func (r *recorder) recordBackoff(o *opRecord, d time.Duration) {
	r.metrics.RecordBackoff(o.ctx, metrics.Backoff{Method: o.method, ServerAddress: r.metricServer(o), Labels: o.labels, Duration: d})
}

// recordAbandoned records, on the operation span, a call that a retry
// planned and that was not made, with the verdict that stopped it.
func (r *recorder) recordAbandoned(o *opRecord, number int, v verdict) {
	if o.recording {
		o.span.AddEvent(attrs.EventAttemptAbandoned, trace.WithAttributes(
			attrs.AttemptKey.Int(number), v.decision.Attribute(), v.reason.Attribute()))
	}
}

// recordHedge records, on the operation span, a hedge sent
// (EventHedgeSent: its number, the number of the attempt it hedges and the
// delay it waited) or refused (EventHedgeRefused: the attempt it would
// have hedged, the delay, and the reason of the verdict that refused it),
// at the time it was.
func (r *recorder) recordHedge(o *opRecord, event string, number, of int, delay time.Duration, v verdict, at time.Time) {
	if v.reason == attrs.ReasonThrottle {
		r.recordThrottled(o)
	}
	if event == attrs.EventHedgeRefused && r.logs() {
		o.hedgesRefused = append(o.hedgesRefused, string(v.reason))
	}
	if !o.recording {
		return
	}
	kv := make([]attribute.KeyValue, 0, 4)
	if number > 0 {
		kv = append(kv, attrs.AttemptKey.Int(number))
	}
	kv = append(kv, attrs.HedgeOfKey.Int(of), attrs.HedgeDelayMsKey.Int64(ms(delay)))
	if v.reason != "" {
		kv = append(kv, v.reason.Attribute())
	}
	o.span.AddEvent(event, trace.WithAttributes(kv...), trace.WithTimestamp(at))
}

// recordNotBuffered records on the operation span why the body was not
// buffered.
func (r *recorder) recordNotBuffered(o *opRecord, reason string) {
	if r.logs() {
		o.notBuffered = reason
	}
	if o.recording && reason != "" {
		o.span.AddEvent(attrs.EventBodyNotBuffered, trace.WithAttributes(attrs.BodyBufferReasonKey.String(reason)))
	}
}

// operationEnd is what an operation came to, as its span, its
// retry.operation record and its metrics record it.
type operationEnd struct {
	verdict  verdict
	attempts int
	// last is the last attempt's event, nil when none was made.
	last      *attemptEvent
	contract  bool
	abandoned int           // the call a retry planned and that was not made
	duration  time.Duration // since the start
}

// errorType is the operation's error.type: "" when it returns, else the
// last attempt's, or its outcome when no attempt had one.
func (e *operationEnd) errorType() string {
	outcome := e.verdict.decision.Outcome()
	switch {
	case outcome == attrs.OutcomeReturn:
		return ""
	case e.last != nil && e.last.errorType() != "":
		return e.last.errorType()
	}
	return string(outcome)
}

// endOperation writes the operation span's closing attributes, ends it,
// emits its log event and records the operation's metrics.
func (r *recorder) endOperation(o *opRecord, e operationEnd) {
	outcome, errorType := e.verdict.decision.Outcome(), e.errorType()
	if o.recording {
		o.span.SetAttributes(endFields(o, o.attrs(), &e, errorType)...)
		if outcome != attrs.OutcomeReturn {
			o.span.SetStatus(codes.Error, string(outcome))
		}
	}
	o.span.End()
	if e.verdict.reason == attrs.ReasonThrottle && e.attempts == 0 {
		r.recordThrottled(o) // the first attempt, never sent
	}
	r.logOperation(o, &e, errorType)
	r.metrics.RecordOperation(o.ctx, metrics.Operation{
		Method:        o.method,
		ServerAddress: r.metricServer(o),
		Labels:        o.labels,
		Outcome:       outcome,
		ErrorType:     errorType,
		Attempts:      e.attempts,
		Duration:      e.duration,
	})
}

// endFields appends the operation's closing fields, which its span and its
// retry.operation record both carry.
func endFields(o *opRecord, kv []attribute.KeyValue, e *operationEnd, errorType string) []attribute.KeyValue {
	kv = append(kv,
		// An operation that starts after its context's deadline has no
		// time at all, never less.
		attrs.DeadlineMsKey.Int64(ms(max(o.clock.limit, 0))),
		attrs.AttemptsKey.Int(e.attempts),
		e.verdict.decision.Outcome().Attribute(),
	)
	if errorType != "" {
		kv = append(kv, attrs.ErrorTypeKey.String(errorType))
	}
	if e.contract {
		kv = append(kv, attrs.IdempotencyContractKey.Bool(true))
	}
	kv = o.key.appendTo(kv)
	if o.ident.redirects > 0 {
		kv = append(kv, attrs.RedirectsKey.Int(o.ident.redirects))
	}
	if o.ident.repeat > 0 {
		kv = append(kv, attrs.RepeatKey.Int(o.ident.repeat))
	}
	if e.abandoned > 0 {
		kv = append(kv, attrs.AbandonedAttemptKey.Int(e.abandoned))
	}
	return kv
}

// startStateCheck starts the state_check span, a child of the operation
// span.
func (r *recorder) startStateCheck(ctx context.Context) (context.Context, trace.Span) {
	return r.tracer.Start(ctx, attrs.StateCheckSpanName, r.internal...)
}

// endStateCheck writes what a state check answered and what followed on
// its span, and ends it: problem names an answer that could not be used,
// err the hook's error (sanitized); attempt is the number of the attempt
// whose outcome it checked.
func (r *recorder) endStateCheck(o *opRecord, span trace.Span, attempt int, state attrs.StateCheckResult, v verdict, problem string, err error) {
	ended := false
	defer func() {
		if !ended { // the telemetry panicked: the span ends all the same, and the panic goes on
			p := recover()
			afterPanic(func() { endWithPanic(span, p) })
			if p != nil {
				panic(p)
			}
		}
	}()
	if problem != "" {
		span.SetStatus(codes.Error, problem)
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "state check failed: "+err.Error())
	}
	if span.IsRecording() {
		span.SetAttributes(append(o.attrs(), attrs.OperationIDKey.String(o.ident.opID()), attrs.StateCheckAttemptKey.Int(attempt),
			state.Attribute(), v.decision.Attribute(), v.reason.Attribute())...)
		if v.reason == attrs.ReasonNotReplayable { // the resend the check asked for, as on an attempt (addEvents)
			span.AddEvent(attrs.EventBodyNotReplayable)
		}
	}
	span.End()
	ended = true
	if v.reason == attrs.ReasonThrottle {
		r.recordThrottled(o) // the resend the check asked for
	}
}

// endAttemptAfterPanic ends the span of attempt number with an event
// naming the panic r (nil for runtime.Goexit), and the ids that tie it to
// its operation (every span of otelretry's carries retry.operation.id): the
// attempt event, which writes them, may not have been.
func (r *recorder) endAttemptAfterPanic(o *opRecord, span trace.Span, ev *attemptEvent, number int, rec any) {
	if span == nil {
		return
	}
	defer endWithPanic(span, rec) // also when the telemetry panics on the attribute
	if !span.IsRecording() {
		return
	}
	id := o.ident.opID()
	span.SetAttributes(attrs.OperationIDKey.String(id), attrs.RequestIDKey.String(RequestID(id, number)), attrs.AttemptKey.Int(number))
	if r.mode == sendThroughClient {
		// otelhttp recorded the raw url.full, which the attempt event
		// overwrites.
		span.SetAttributes(attrs.URLFullKey.String(attemptURL(o, ev)))
	}
}

// afterPanic runs f, a cleanup step after a panic, dropping a panic of its
// own (telemetry that panics on every span, a body whose Close panics, do
// so again), so that the first panic goes on and the steps after f run.
// f runs on a goroutine of its own, waited for: a runtime.Goexit in it
// (a span processor's, say) ends that goroutine alone, where it would
// end the caller's with the steps after f undone. Only panic paths pay
// for it.
func afterPanic(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		f()
	}()
	<-done
}

// endWithPanic ends span with an event naming the panic r, if it still
// records. Ending a span twice is harmless: the SDK ignores the second.
func endWithPanic(span trace.Span, r any) {
	defer span.End() // also when the telemetry panics again, recording the panic
	if span.IsRecording() {
		span.AddEvent(attrs.EventPanic, trace.WithAttributes(panicAttributes(r)...))
		span.SetStatus(codes.Error, attrs.EventPanic)
	}
}

// panicAttributes names a panic by its type only (panicType).
func panicAttributes(r any) []attribute.KeyValue {
	return []attribute.KeyValue{attrs.ExceptionTypeKey.String(panicType(r))}
}

// panicType is a panic's name in telemetry: its type only, since its value
// may carry a URL or a secret (nil: runtime.Goexit).
func panicType(r any) string {
	if r == nil {
		return "runtime.Goexit"
	}
	return fmt.Sprintf("%T", r)
}

// handleStrayPanic reports through otel.Handle a panic of user code (what)
// on a goroutine of otelretry's own that nobody waits for any more: by its
// type only, as every other channel names it.
func handleStrayPanic(what string, v any) {
	otel.Handle(fmt.Errorf("otelretry: %s panicked on a goroutine of otelretry's own (a %s; its value is not reported, it may carry a secret)", what, panicType(v)))
}

// nonRecording stands for the span of an attempt that has none.
var nonRecording = trace.SpanFromContext(context.Background())

// The log events (WithLoggerProvider) and the slog records (WithLogger)
// share one severity: INFO for return and superseded (nothing went
// wrong), WARN for retry, ERROR for every other decision, each of which ends the operation without the answer it
// wanted (check_state included: the write's outcome is unknown). An
// operation event is INFO when its outcome is return, else ERROR. A late
// writes record is INFO.

// attemptSeverity is the severity of an attempt's records.
func attemptSeverity(d attrs.Decision) log.Severity {
	switch d {
	case attrs.DecisionReturn, attrs.DecisionSuperseded:
		return log.SeverityInfo
	case attrs.DecisionRetry:
		return log.SeverityWarn
	}
	return log.SeverityError
}

// operationSeverity is the severity of an operation's event.
func operationSeverity(o attrs.Outcome) log.Severity {
	if o == attrs.OutcomeReturn {
		return log.SeverityInfo
	}
	return log.SeverityError
}

// slogLevel is the slog level of a severity.
func slogLevel(s log.Severity) slog.Level {
	switch s {
	case log.SeverityInfo:
		return slog.LevelInfo
	case log.SeverityWarn:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// severityText is the text of a severity, as slog names its levels.
func severityText(s log.Severity) string {
	switch s {
	case log.SeverityInfo:
		return "INFO"
	case log.SeverityWarn:
		return "WARN"
	}
	return "ERROR"
}

// logTargets says which loggers take a record: each is asked once, in the
// record's context (recordContext), before the record is built.
type logTargets struct{ slog, events bool }

// logs reports whether a logger is set (WithLogger, WithLoggerProvider).
func (r *recorder) logs() bool { return r.logger != nil || r.events != nil }

// targets asks each logger whether it takes a record of severity sev and
// event name event, in ctx, the record's: the slog handler only where
// slogToo (it gets no operation record of an operation that made attempts).
func (r *recorder) targets(ctx context.Context, sev log.Severity, event string, slogToo bool) logTargets {
	return logTargets{
		slog:   slogToo && r.logger != nil && r.logger.Enabled(ctx, slogLevel(sev)),
		events: r.events != nil && r.events.Enabled(ctx, log.EnabledParameters{Severity: sev, EventName: event}),
	}
}

// recordContext is the context of span's records: the operation's, with
// span in it, the one their trace and span ids name, so that a handler or
// processor reading the span from the context (an OTel slog bridge, a
// sampler-aware processor) asks and writes of the span they name.
func recordContext(o *opRecord, span trace.Span) context.Context {
	if sc := span.SpanContext(); sc.IsValid() && !trace.SpanContextFromContext(o.ctx).Equal(sc) {
		return trace.ContextWithSpan(o.ctx, span)
	}
	return o.ctx
}

// logAttempt writes the attempt's slog record (WithLogger) and its log
// event (WithLoggerProvider), each only when its logger is enabled for it.
// Both carry one list, the attempt span's, built at most once: kv when the
// span has the whole list already, else built here; and a malformed
// hint's header and problem, which the span has as an event.
func (r *recorder) logAttempt(o *opRecord, buf *kvBuffer, span trace.Span, kv []attribute.KeyValue, ev *attemptEvent) {
	if r.logger == nil && r.events == nil {
		return
	}
	sev := attemptSeverity(ev.verdict.decision)
	ctx := recordContext(o, span)
	to := r.targets(ctx, sev, attrs.LogEventAttempt, true)
	if !to.slog && !to.events {
		return
	}
	if kv == nil {
		// The span copied its attributes, if it took any: the buffer is
		// free again.
		kv = fields(o, buf.attrs(), ev, false)
	}
	if h := ev.retryAfterError; h != nil {
		// The span has it as its retry_after_invalid event; a record has
		// no events, so it carries the event's two fields.
		kv = append(kv, attrs.RetryHintHeaderKey.String(h.header), h.problem.Attribute())
	}
	// The attempt's end, in wall-clock time: its start (the deadline less
	// the time left before it) plus its elapsed time.
	at := o.clock.at(o.clock.limit - ev.remaining + ev.elapsed)
	r.log(ctx, span, to, attrs.LogEventAttempt, "retry attempt", sev, at, kv)
}

// log writes one record, kv, to the loggers in to, in ctx, the context of
// span (recordContext), whose trace and span ids it carries. Only
// sanitized data is logged: no URL query values, headers or bodies.
func (r *recorder) log(ctx context.Context, span trace.Span, to logTargets, event, body string, sev log.Severity, at time.Time, kv []attribute.KeyValue) {
	if to.slog {
		out := make([]slog.Attr, 0, len(kv)+2)
		for _, f := range kv {
			out = append(out, slogAttr(f))
		}
		if sc := span.SpanContext(); sc.IsValid() {
			out = append(out, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		}
		rec := slog.NewRecord(time.Now(), slogLevel(sev), body, 0)
		rec.AddAttrs(out...)
		// To the handler itself: targets asked its Enabled already, and
		// Logger.LogAttrs would ask again.
		_ = r.logger.Handler().Handle(ctx, rec)
	}
	if !to.events {
		return
	}
	var rec log.Record
	rec.SetEventName(event)
	rec.SetTimestamp(at)
	rec.SetSeverity(sev)
	rec.SetSeverityText(severityText(sev))
	rec.SetBody(attribute.StringValue(body))
	rec.AddAttributes(kv...)
	r.events.Emit(ctx, rec)
}

// logOperation writes the operation's log event (WithLoggerProvider), and
// its slog record (WithLogger) where it made no attempt (refused or stopped
// before its first call), so that every operation leaves a record there
// too: each only when its logger is enabled for it. Both are in the
// operation span's context (the log event timed at the operation's start,
// the slog record when it is written), with its
// duration, the operation span's attributes, the verdict's reason, and
// what the span's events tell: the reasons of the hedges it refused
// (hedge_refused) and why its body was not buffered (body_not_buffered).
func (r *recorder) logOperation(o *opRecord, e *operationEnd, errorType string) {
	if !r.logs() {
		return
	}
	sev := operationSeverity(e.verdict.decision.Outcome())
	ctx := recordContext(o, o.span)
	to := r.targets(ctx, sev, attrs.LogEventOperation, e.attempts == 0)
	if !to.slog && !to.events {
		return
	}
	kv := endFields(o, r.startFields(o, o.attrs()), e, errorType)
	kv = append(kv, e.verdict.reason.Attribute(), attrs.OperationDurationMsKey.Int64(ms(e.duration)))
	if len(o.hedgesRefused) > 0 {
		kv = append(kv, attrs.HedgesRefusedKey.StringSlice(o.hedgesRefused))
	}
	if o.notBuffered != "" {
		kv = append(kv, attrs.BodyBufferReasonKey.String(o.notBuffered))
	}
	r.log(ctx, o.span, to, attrs.LogEventOperation, "retry operation", sev, o.clock.start, kv)
}

// slogAttr converts an attribute to a log attribute of the same type.
func slogAttr(kv attribute.KeyValue) slog.Attr {
	k := string(kv.Key)
	switch kv.Value.Type() {
	case attribute.BOOL:
		return slog.Bool(k, kv.Value.AsBool())
	case attribute.INT64:
		return slog.Int64(k, kv.Value.AsInt64())
	case attribute.FLOAT64:
		return slog.Float64(k, kv.Value.AsFloat64())
	case attribute.STRING:
		return slog.String(k, kv.Value.AsString())
	default:
		return slog.String(k, kv.Value.Emit())
	}
}
