// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package attrs

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// Retry attributes: the attempt-event contract. These names are public API.
const (
	// OperationIDKey identifies one logical operation. It is created at the
	// operation boundary, before the first call, and is the same on the
	// operation span and on every attempt span.
	OperationIDKey = attribute.Key("retry.operation.id")
	// RequestIDKey identifies one network call; it differs per attempt.
	RequestIDKey = attribute.Key("retry.request.id")
	// AttemptKey is the 1-based number of the attempt.
	AttemptKey = attribute.Key("retry.attempt")
	// AttemptsKey is the number of network calls an operation actually made.
	AttemptsKey = attribute.Key("retry.attempts")
	// DecisionKey is what the client chose to do after an attempt.
	DecisionKey = attribute.Key("retry.decision")
	// OutcomeKey is the terminal reason of an operation.
	OutcomeKey = attribute.Key("retry.outcome")
	// ErrorClassKey classifies a failure that produced no response. It is
	// never set together with HTTPResponseStatusCodeKey.
	ErrorClassKey = attribute.Key("retry.error_class")
	// ElapsedMsKey is the duration of the attempt in milliseconds.
	ElapsedMsKey = attribute.Key("retry.elapsed_ms")
	// RemainingMsKey is the operation's time left before the call, in
	// milliseconds, on the monotonic clock.
	RemainingMsKey = attribute.Key("retry.remaining_ms")
	// RetryAfterMsKey is the server's Retry-After hint in whole
	// milliseconds (a fraction cut off: a hint of 0.5 ms reads 0), set only
	// when the response carried a parseable value.
	RetryAfterMsKey = attribute.Key("retry.retry_after_ms")
	// BackoffMsKey is the pause chosen before the next attempt, set only when
	// the decision is DecisionRetry.
	BackoffMsKey = attribute.Key("retry.backoff_ms")
	// DeadlineMsKey is the operation's time limit in milliseconds (its
	// deadline minus its start), set on the operation span so that a reader
	// can tell whether an attempt started after the deadline. It replaces
	// retry.budget_ms (LegacyBudgetMsKey): "budget" now means only the
	// client-wide retry budget.
	DeadlineMsKey = attribute.Key("retry.deadline_ms")
	// LegacyBudgetMsKey is the name DeadlineMsKey had before v0.2.0. The
	// transport no longer writes it; readers accept it so that older traces
	// still read.
	LegacyBudgetMsKey = attribute.Key("retry.budget_ms")
	// ReasonKey says why the decision was taken (a Reason): a decision is
	// one of a small closed set, and its causes are reasons, not new
	// decisions. It also tells a rule the user configured (a classifier,
	// a per-request intent) from a default one.
	ReasonKey = attribute.Key("retry.reason")
	// WireWritesKey is the number of times the request was written on the
	// wire during one attempt, as net/http/httptrace reports it
	// (WroteRequest). It is above 1 when a layer below the retry transport
	// (net/http's own resend of a request on a dead keep-alive connection,
	// or HTTP/2's resend of a refused stream) sent it again; each extra
	// write also adds a wire_resend event. It is absent when the base
	// transport reports no writes (a base that is not net/http's).
	WireWritesKey = attribute.Key("retry.wire.writes")
	// EvidenceProtocolKey, EvidenceCodeKey and EvidenceNameKey record the
	// protocol evidence behind an error class that proves a request was
	// not processed (ErrorClassRefusedStream): the protocol ("h2", "h3"),
	// the error code and its name (REFUSED_STREAM, H3_REQUEST_REJECTED),
	// or the frame that proves it (GOAWAY) with no code when the error
	// does not say it.
	// They are set only on an attempt whose decision is retry, the resend
	// the proof allowed.
	EvidenceProtocolKey = attribute.Key("retry.evidence.protocol")
	EvidenceCodeKey     = attribute.Key("retry.evidence.code")
	EvidenceNameKey     = attribute.Key("retry.evidence.name")
	// RedirectsKey is, on an operation span, the number of redirects
	// followed before this operation in the same chain (net/http's Client
	// calls RoundTrip once per hop). It is absent on the first hop. The
	// hops of a chain share the operation id when one is set with
	// WithOperationID, and their attempt numbers keep counting.
	RedirectsKey = attribute.Key("retry.redirects")
	// RepeatKey is, on an operation span, how many operations the same
	// Transport made before this one under the same operation context,
	// redirect hops excluded: under the same WithOperationID, those made
	// before it; without one, those of the same request (method and path)
	// that ended under the same parent span before it began (calls made at
	// once are no repeats of each other). It is absent on the first. A
	// value above 0 on a write means a layer above this one sent the
	// operation again (go-retryablehttp stacked over the Transport, or an
	// application loop), or, without an operation id, that the caller made
	// the same request again under one span.
	RepeatKey = attribute.Key("retry.operation.repeat")
	// AbandonedAttemptKey is set on the operation span when a retry was
	// decided and the call it planned was not made (see
	// EventAttemptAbandoned): the number that call would have had. It
	// explains, on the span readers group by, why the last attempt's retry
	// has no next attempt.
	AbandonedAttemptKey = attribute.Key("retry.abandoned_attempt")
	// HedgeOfKey is set on a hedge's attempt event: the number of the
	// attempt it hedges, still in flight when the hedge was sent.
	HedgeOfKey = attribute.Key("retry.hedge.of")
	// HedgedAfterMsKey is set on the event of an attempt that was hedged:
	// how long after its start its hedge was sent, in milliseconds.
	HedgedAfterMsKey = attribute.Key("retry.hedge.sent_after_ms")
	// HedgeDelayMsKey is set on the operation span's events of a hedge sent
	// (EventHedgeSent) or refused (EventHedgeRefused), not on the span: the
	// delay it waited, fixed or adaptive, in milliseconds.
	HedgeDelayMsKey = attribute.Key("retry.hedge.delay_ms")
	// HedgesRefusedKey is set on the retry.operation log record of an
	// operation that refused a hedge: the retry.reason of each of its
	// operation span's hedge_refused events, in order (a record has no
	// events).
	HedgesRefusedKey = attribute.Key("retry.hedge.refused")
	// IdempotencyContractKey is true on an operation the user declared safe
	// to repeat although its method is not: a method added with
	// WithIdempotentMethods, a request whose Intent says Repeatable, or an
	// Idempotency-Key under WithIdempotencyKeyContract. Readers use it to tell a legitimate resend
	// of a write from a blind one.
	IdempotencyContractKey = attribute.Key("retry.idempotency_contract")
	// IdempotencyKeySourceKey is set, on the operation span and on each
	// attempt, when the request carries an idempotency key in a header the
	// user declared the server honours: where the key came from (a
	// KeySource). The key itself is never a metric label.
	IdempotencyKeySourceKey = attribute.Key("retry.idempotency_key.source")
	// IdempotencyKeyValueKey is the idempotency key's value, as the header
	// carried it on the wire, set next to IdempotencyKeySourceKey on spans
	// and log records only when the user asks for it
	// (otelretry.WithIdempotencyKeyValues): it is what support looks a write
	// up by. It is the one header value otelretry records, and never on
	// metrics.
	IdempotencyKeyValueKey = attribute.Key("retry.idempotency_key.value")
	// IdempotencyReplayedKey is true on an attempt whose answer says it was
	// replayed from the server's store of answers by key rather than
	// produced now (Stripe's Idempotent-Replayed: true; the draft defines no
	// such header).
	IdempotencyReplayedKey = attribute.Key("retry.idempotency_key.replayed")
	// StateCheckResultKey is the answer of a state check after an unknown
	// write outcome.
	StateCheckResultKey = attribute.Key("retry.state_check.result")
	// StateCheckAttemptKey is, on a state_check span, the number
	// (AttemptKey) of the attempt whose unknown outcome it checked: an
	// operation may check several. It is not AttemptKey, which marks an
	// attempt span.
	StateCheckAttemptKey = attribute.Key("retry.state_check.attempt")
	// OperationDurationMsKey is, on the operation log event
	// (LogEventOperation), the operation's duration in milliseconds, from
	// its start (the record's timestamp) to its end. A span has its own.
	OperationDurationMsKey = attribute.Key("retry.operation.duration_ms")
)

// Event names of the log events (OpenTelemetry log records with an event
// name) that the transport emits when they are turned on.
const (
	// LogEventAttempt names the record of one attempt: the attempt span's
	// attributes, in the attempt span's context.
	LogEventAttempt = "retry.attempt"
	// LogEventOperation names the record of one operation: its terminal
	// outcome and reason, attempts, deadline and duration, in the
	// operation span's context.
	LogEventOperation = "retry.operation"
	// LogEventWire names the record of writes on the wire that the base
	// reported after the attempt's record was written (an HTTP/2 body that
	// finished writing after the answer, a resend net/http made): the
	// attempt's ids and number, and its writes on the wire now
	// (WireWritesKey). The attempt's own records keep the count they had.
	LogEventWire = "retry.wire"
)

// Keys defined by the OpenTelemetry semantic conventions, re-exported so the
// whole vocabulary lives in one place.
const (
	HTTPRequestMethodKey      = semconv.HTTPRequestMethodKey
	HTTPResponseStatusCodeKey = semconv.HTTPResponseStatusCodeKey
	HTTPRequestResendCountKey = semconv.HTTPRequestResendCountKey
	URLFullKey                = semconv.URLFullKey
	ServerAddressKey          = semconv.ServerAddressKey
	ServerPortKey             = semconv.ServerPortKey
	ErrorTypeKey              = semconv.ErrorTypeKey
	// HTTPRequestMethodOriginalKey holds a method outside the standard set,
	// as sent, next to http.request.method=_OTHER (see Methods).
	HTTPRequestMethodOriginalKey = semconv.HTTPRequestMethodOriginalKey
	// ExceptionTypeKey names a panic on a panic event, by its type only.
	ExceptionTypeKey = semconv.ExceptionTypeKey
)

// BodyBufferReasonKey says, on a body_not_buffered event, why the body
// was not buffered: BodyBufferTooLarge, BodyBufferUnknownLength or
// BodyBufferMemoryCap.
const BodyBufferReasonKey = attribute.Key("retry.body.not_buffered_reason")

// Why a request body was not buffered for retries.
const (
	// BodyBufferTooLarge: its ContentLength is above the per-request limit.
	BodyBufferTooLarge = "too_large"
	// BodyBufferUnknownLength: its length is unknown (ContentLength ≤ 0
	// with a body: net/http sends it chunked).
	BodyBufferUnknownLength = "unknown_length"
	// BodyBufferMemoryCap: the Transport's bodies in flight hold its whole
	// buffer memory.
	BodyBufferMemoryCap = "memory_cap"
)

// The attributes of a retry_after_invalid event: the hint header that was
// present and could not be read, and what was wrong with it (a
// HintProblem). The value itself is never recorded: a header may carry
// anything, a URL with credentials included.
const (
	RetryHintHeaderKey  = attribute.Key("retry.hint.header")
	RetryHintProblemKey = attribute.Key("retry.hint.problem")
)

// Redacted replaces every query value and credential in recorded URLs. The
// transport writes it; readers such as retryinspect accept it as clean.
const Redacted = redact.Placeholder

// Span names of the spans otelretry creates besides the attempt and
// operation spans, whose names are configurable.
const (
	// StateCheckSpanName names the child span of a state check.
	StateCheckSpanName = "state_check"
)

// Span events the transport adds to attempt spans.
const (
	// EventWireResend marks a write of the request on the wire beyond the
	// first within one attempt (see WireWritesKey).
	EventWireResend = "wire_resend"
	// EventWireLate marks writes on the wire that the base reported after
	// the attempt's event was written, with the attempt's writes now
	// (WireWritesKey); the attempt's attributes keep the count they had.
	EventWireLate = "wire_late"
	// EventRetryAfterInvalid marks a retry hint header (Retry-After, or
	// another hint header read) that was present but malformed, and so
	// ignored. It carries RetryHintHeaderKey and RetryHintProblemKey.
	EventRetryAfterInvalid = "retry_after_invalid"
	// EventBodyNotReplayable marks a retry that was due but could not be
	// made because the request body cannot be sent again.
	EventBodyNotReplayable = "body_not_replayable"
	// EventBodyNotBuffered is added to the operation span when a request
	// body without GetBody was not buffered for retries (see
	// otelretry.WithBodyBuffer), so that it stays not replayable. It
	// carries BodyBufferReasonKey.
	EventBodyNotBuffered = "body_not_buffered"
	// EventPanic marks a base RoundTripper or hook that panicked; the
	// transport ends its spans and panics again.
	EventPanic = "panic"
	// EventAttemptAbandoned is added to the operation span when a retry was
	// decided but its call was not made: something that ran after the
	// decision stopped it (the caller, the next attempt's preparation, or
	// the time it took). It carries retry.attempt (the number the call
	// would have had), retry.decision and retry.reason, so that no retry
	// is left without its next attempt and no explanation.
	EventAttemptAbandoned = "attempt_abandoned"
	// EventHedgeSent is added to the operation span when a hedge was sent:
	// retry.attempt (the hedge's number), retry.hedge.of and
	// retry.hedge.delay_ms.
	EventHedgeSent = "hedge_sent"
	// EventHedgeRefused is added to the operation span when an attempt's
	// hedge delay passed and no hedge was sent: retry.hedge.of,
	// retry.hedge.delay_ms and retry.reason (a body that cannot be
	// replayed, the attempt limit, the deadline, the dependency's hedge
	// rate, the retry budget, a preparation that failed). Requests that are
	// never hedged (writes, NoRetry, a single attempt) record none.
	EventHedgeRefused = "hedge_refused"
)
