package attrs

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
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
	// RemainingMsKey is the operation budget left before the call, in
	// milliseconds, on the monotonic clock.
	RemainingMsKey = attribute.Key("retry.remaining_ms")
	// RetryAfterMsKey is the server's Retry-After hint in milliseconds, set
	// only when the response carried a parseable value.
	RetryAfterMsKey = attribute.Key("retry.retry_after_ms")
	// BackoffMsKey is the pause chosen before the next attempt, set only when
	// the decision is DecisionRetry.
	BackoffMsKey = attribute.Key("retry.backoff_ms")
	// BudgetMsKey is the whole operation budget in milliseconds (deadline
	// minus start), set on the operation span so a reader can tell whether an
	// attempt started after the deadline.
	BudgetMsKey = attribute.Key("retry.budget_ms")
	// IdempotencyContractKey is true on an operation the user declared safe
	// to repeat although its method is not: a method added with
	// WithIdempotentMethods, or an Idempotency-Key under
	// WithIdempotencyKeyContract. Readers use it to tell a legitimate resend
	// of a write from a blind one.
	IdempotencyContractKey = attribute.Key("retry.idempotency_contract")
	// StateCheckResultKey is the answer of a state check after an unknown
	// write outcome.
	StateCheckResultKey = attribute.Key("retry.state_check.result")
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
)

// Redacted replaces every query value and credential in recorded URLs. The
// transport writes it; readers such as retryinspect accept it as clean.
const Redacted = "REDACTED"

// Span names of the spans otelretry creates besides the attempt and
// operation spans, whose names are configurable.
const (
	// StateCheckSpanName names the child span of a state check.
	StateCheckSpanName = "state_check"
)
