// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package attrs

import (
	"slices"

	"go.opentelemetry.io/otel/attribute"
)

// Decision is what the client chose to do after one attempt.
type Decision string

// The closed set of decisions.
const (
	// DecisionReturn hands the response to the caller.
	DecisionReturn Decision = "return"
	// DecisionRetry schedules another attempt after a backoff.
	DecisionRetry Decision = "retry"
	// DecisionCheckState marks an unknown write outcome: the request may or
	// may not have been applied, so it is not resent.
	DecisionCheckState Decision = "check_state"
	// DecisionDeadlineExceeded stops because the operation deadline cannot
	// cover the wait and another attempt.
	DecisionDeadlineExceeded Decision = "deadline_exceeded"
	// DecisionMaxAttempts stops because the attempt limit is reached.
	DecisionMaxAttempts Decision = "max_attempts"
	// DecisionStop stops because the result is not retryable (method,
	// status, error, or a body that cannot be replayed).
	DecisionStop Decision = "stop"
	// DecisionBudgetExhausted stops because the client-wide retry budget
	// refused another attempt.
	DecisionBudgetExhausted Decision = "budget_exhausted"
	// DecisionCanceled stops because the caller canceled the context.
	DecisionCanceled Decision = "canceled"
	// DecisionSuperseded: the attempt was still in flight when another
	// attempt of the operation (a hedge, or the attempt it hedged) answered
	// first (reason other_attempt), or when the operation ended with no
	// answer, the caller's cancel or a deadline ending every attempt in
	// flight (reason operation_ended); it was canceled, and its answer, if
	// any, discarded. It ends nothing: the other attempt's decision does.
	DecisionSuperseded Decision = "superseded"
	// DecisionThrottled stops because the client-side throttle
	// (otelretry.Throttle) refused the next request to an overloaded
	// dependency: the first attempt, which is then never sent, or a retry.
	DecisionThrottled Decision = "throttled"
)

// Decisions lists every Decision, in declaration order.
func Decisions() []Decision {
	return []Decision{
		DecisionReturn, DecisionRetry, DecisionCheckState, DecisionDeadlineExceeded,
		DecisionMaxAttempts, DecisionStop, DecisionBudgetExhausted, DecisionCanceled,
		DecisionSuperseded, DecisionThrottled,
	}
}

// Valid reports whether d is one of the declared decisions.
func (d Decision) Valid() bool { return slices.Contains(Decisions(), d) }

// Terminal reports whether d ends the operation's attempts: no attempt
// follows it on the policy's word. DecisionCheckState is the one a state
// check (otelretry's WithStateCheck) may carry on: the check resolves the
// write's outcome, and a write it finds not applied is sent again, so the
// operation then ends as the check says (return, say), not check_state.
func (d Decision) Terminal() bool { return d != DecisionRetry && d != DecisionSuperseded }

// Outcome returns the operation outcome that a terminal decision implies
// (for DecisionCheckState, when no state check resolved it: see
// Terminal). It returns "" for DecisionRetry and DecisionSuperseded,
// which end nothing, and for a value outside the set. An operation's own
// outcome is its span's retry.outcome.
func (d Decision) Outcome() Outcome {
	if !d.Terminal() || !d.Valid() {
		return ""
	}
	return Outcome(d)
}

// Attribute returns d as a retry.decision attribute.
func (d Decision) Attribute() attribute.KeyValue { return DecisionKey.String(string(d)) }

// Outcome is the terminal reason of an operation: the decisions minus retry
// and superseded (which ends an attempt, not its operation).
type Outcome string

// The closed set of outcomes.
const (
	OutcomeReturn           = Outcome(DecisionReturn)
	OutcomeCheckState       = Outcome(DecisionCheckState)
	OutcomeDeadlineExceeded = Outcome(DecisionDeadlineExceeded)
	OutcomeMaxAttempts      = Outcome(DecisionMaxAttempts)
	OutcomeStop             = Outcome(DecisionStop)
	OutcomeBudgetExhausted  = Outcome(DecisionBudgetExhausted)
	OutcomeCanceled         = Outcome(DecisionCanceled)
	OutcomeThrottled        = Outcome(DecisionThrottled)
)

// Outcomes lists every Outcome, in declaration order.
func Outcomes() []Outcome {
	return []Outcome{
		OutcomeReturn, OutcomeCheckState, OutcomeDeadlineExceeded, OutcomeMaxAttempts,
		OutcomeStop, OutcomeBudgetExhausted, OutcomeCanceled, OutcomeThrottled,
	}
}

// Valid reports whether o is one of the declared outcomes.
func (o Outcome) Valid() bool { return slices.Contains(Outcomes(), o) }

// Attribute returns o as a retry.outcome attribute.
func (o Outcome) Attribute() attribute.KeyValue { return OutcomeKey.String(string(o)) }

// ErrorClass classifies a transport or client failure that produced no
// response. It is derived from error types, never from error text.
type ErrorClass string

// The closed set of error classes.
const (
	// ErrorClassTimeout: no answer before the attempt or operation deadline.
	ErrorClassTimeout ErrorClass = "timeout"
	// ErrorClassConnectionRefused: the peer refused the connection, so the
	// request never left the client.
	ErrorClassConnectionRefused ErrorClass = "connection_refused"
	// ErrorClassConnectionReset: the connection broke, possibly after the
	// request was written (a reset, a broken pipe, an aborted connection,
	// an EOF or an unexpected one, a closed connection, an HTTP/2 stream
	// the server counted in its GOAWAY before it closed the connection).
	ErrorClassConnectionReset ErrorClass = "connection_reset"
	// ErrorClassDNS: the host name did not resolve; nothing was sent.
	ErrorClassDNS ErrorClass = "dns"
	// ErrorClassTLS: the TLS handshake failed; nothing was sent.
	ErrorClassTLS ErrorClass = "tls"
	// ErrorClassCanceled: the caller canceled the context.
	ErrorClassCanceled ErrorClass = "canceled"
	// ErrorClassRefusedStream: the protocol proves the server did not
	// process the request although it may have received it: HTTP/2
	// REFUSED_STREAM (RFC 9113 §8.7) or a stream above a GOAWAY's last
	// stream id, HTTP/3 H3_REQUEST_REJECTED (RFC 9114 §4.1.1). Like a
	// refused connection, it is safe to resend, even for a write. Only a
	// classifier that reads the protocol's error codes sets it (see
	// otelretry.WithClassifier); error text never does.
	ErrorClassRefusedStream ErrorClass = "refused_stream"
	// ErrorClassOther: any other failure.
	ErrorClassOther ErrorClass = "other"
	// ErrorClassRaceLost: otelretry canceled the attempt because another
	// attempt of its hedged race answered first (decision superseded). It
	// says nothing of the server: the request may have been processed.
	ErrorClassRaceLost ErrorClass = "race_lost"
)

// ErrorClasses lists every ErrorClass, in declaration order.
func ErrorClasses() []ErrorClass {
	return []ErrorClass{
		ErrorClassTimeout, ErrorClassConnectionRefused, ErrorClassConnectionReset,
		ErrorClassDNS, ErrorClassTLS, ErrorClassCanceled, ErrorClassRefusedStream, ErrorClassOther, ErrorClassRaceLost,
	}
}

// Valid reports whether c is one of the declared error classes.
func (c ErrorClass) Valid() bool { return slices.Contains(ErrorClasses(), c) }

// NotSent reports whether the class proves the request never reached the
// server, which makes a retry safe for any method. One exception: a TLS
// 1.3 server's alert (a client certificate it refuses) comes after the
// request was written and is recorded as tls too; otelretry's own
// decision reads the attempt's trace there and resends no write, and a
// Classifier given Answer.ErrorClass should not take NotSent alone for
// proof either.
func (c ErrorClass) NotSent() bool {
	return c == ErrorClassConnectionRefused || c == ErrorClassDNS || c == ErrorClassTLS
}

// NotProcessed reports whether the class proves the server did not act on
// the request: it never reached the server (NotSent), or the protocol says
// the server refused it unprocessed (ErrorClassRefusedStream). Either
// makes a retry safe for any method.
func (c ErrorClass) NotProcessed() bool { return c.NotSent() || c == ErrorClassRefusedStream }

// Attribute returns c as a retry.error_class attribute.
func (c ErrorClass) Attribute() attribute.KeyValue { return ErrorClassKey.String(string(c)) }

// StateCheckResult is the answer of a state check after an unknown write
// outcome.
type StateCheckResult string

// The closed set of state-check results.
const (
	StateApplied    StateCheckResult = "applied"
	StateNotApplied StateCheckResult = "not_applied"
	StateUnknown    StateCheckResult = "unknown"
)

// Attribute returns r as a retry.state_check.result attribute.
func (r StateCheckResult) Attribute() attribute.KeyValue {
	return StateCheckResultKey.String(string(r))
}

// Reason says why a decision was taken. Decisions stay a small closed set
// that dashboards group by; reasons carry the cause, including whether a
// rule the user configured decided (ReasonClassifier, ReasonIntent) rather
// than a default one.
type Reason string

// The closed set of reasons.
const (
	// ReasonResponse: a 2xx or 3xx response (return).
	ReasonResponse Reason = "response"
	// ReasonRetryableStatus: a status the policy retries, on a request that
	// is safe to repeat (retry, or the limit that stopped it).
	ReasonRetryableStatus Reason = "retryable_status"
	// ReasonRetryableError: a transport error on a request that is safe to
	// repeat.
	ReasonRetryableError Reason = "retryable_error"
	// ReasonNotProcessed: the error proves the request was not processed
	// (never sent, or refused by the protocol), so even a write may be
	// resent.
	ReasonNotProcessed Reason = "not_processed"
	// ReasonClassifier: the user's classifier (WithClassifier) decided.
	ReasonClassifier Reason = "classifier"
	// ReasonIntent: the request's own intent (WithIntent) forbids retries
	// (Intent.NoRetry). An intent's own attempt limit or deadline ends an
	// operation like the Transport's do, with attempt_limit or deadline.
	ReasonIntent Reason = "intent"
	// ReasonUnknownWrite: a write that may have been applied lost its
	// answer (timeout, broken connection, or a resend refused below the
	// transport); it is not resent (check_state).
	ReasonUnknownWrite Reason = "unknown_write"
	// ReasonStateApplied, ReasonStateNotApplied, ReasonStateUnknown: the
	// answer of a state check (return, retry, check_state).
	ReasonStateApplied    Reason = "state_applied"
	ReasonStateNotApplied Reason = "state_not_applied"
	ReasonStateUnknown    Reason = "state_unknown"
	// ReasonStatus: a status the policy does not retry (stop).
	ReasonStatus Reason = "status"
	// ReasonNotIdempotent: a retryable status or error on a request that is
	// not safe to repeat (stop).
	ReasonNotIdempotent Reason = "not_idempotent"
	// ReasonNotReplayable: a retry was due, but the body cannot be sent
	// again (stop).
	ReasonNotReplayable Reason = "not_replayable"
	// ReasonPrepareFailed: the per-attempt preparation hook failed, or
	// changed what the policy judged: the method, the host, or the headers
	// of the idempotency-key contract (stop).
	ReasonPrepareFailed Reason = "prepare_failed"
	// ReasonDeadline: no time left for the pause and another attempt, or
	// none before a call (deadline_exceeded).
	ReasonDeadline Reason = "deadline"
	// ReasonAttemptLimit: no attempt left (max_attempts).
	ReasonAttemptLimit Reason = "attempt_limit"
	// ReasonBudget: the retry budget's tokens are spent (budget_exhausted).
	ReasonBudget Reason = "budget"
	// ReasonPushback: the server asked the whole client to hold back
	// (Retry-After, or 429) and the retry would start before that ends
	// (budget_exhausted).
	ReasonPushback Reason = "pushback"
	// ReasonHostLimit: the retry budget's table of hosts is full of hosts
	// that still carry state, so a new host's retry is refused rather than
	// waved through (budget_exhausted).
	ReasonHostLimit Reason = "host_limit"
	// ReasonCaller: the caller's context was canceled (canceled) or its
	// deadline passed (deadline_exceeded).
	ReasonCaller Reason = "caller"
	// ReasonServerNoRetry: the service said its answer must not be retried
	// (a should-retry header: Stripe-Should-Retry, X-Should-Retry: false)
	// (stop).
	ReasonServerNoRetry Reason = "server_no_retry"
	// ReasonServerRetry: the service said the request may be repeated (a
	// should-retry header: true), which made its failed answer retryable
	// (retry, or the limit that stopped it).
	ReasonServerRetry Reason = "server_retry"
	// ReasonOverrun: a retry was decided with time for its pause and its
	// call, but work that ran after the decision (the next attempt's
	// PrepareAttemptFunc, a slow log handler or exporter) took that time, so the
	// planned call was not made (deadline_exceeded). The operation span
	// records the call that was not made (EventAttemptAbandoned).
	ReasonOverrun Reason = "overrun"
	// ReasonOtherAttempt: another attempt of the operation answered first
	// (superseded).
	ReasonOtherAttempt Reason = "other_attempt"
	// ReasonOperationEnded: the attempt had no answer when the operation
	// ended without one (the caller canceled, or a deadline passed), with
	// another attempt in flight whose decision ends the operation
	// (superseded): the end cut it, no other attempt won.
	ReasonOperationEnded Reason = "operation_ended"
	// ReasonInFlight: the answer was retryable, and another attempt of the
	// operation (a hedge) is already in flight: that attempt is the retry,
	// with no pause of its own (retry).
	ReasonInFlight Reason = "in_flight"
	// ReasonHedgeLimit: a hedge was refused by the dependency's hedge rate
	// (see otelretry.Hedging), or because the Transport's full table of
	// dependencies had no place for it.
	ReasonHedgeLimit Reason = "hedge_limit"
	// ReasonThrottle: the client-side throttle refused the request
	// (throttled, or a hedge refused).
	ReasonThrottle Reason = "throttle"
	// ReasonKeyInProgress: a request that carries an idempotency key was
	// answered 409 Conflict, which the idempotency-key draft
	// (draft-ietf-httpapi-idempotency-key-header) gives while a request with
	// the same key is still being processed: it is sent again after a pause
	// (retry, or the limit that stopped it).
	ReasonKeyInProgress Reason = "key_in_progress"
	// ReasonKeyReused: a request that carries an idempotency key was
	// answered 422 Unprocessable Content, which the draft gives when the key
	// was used before with another payload: never sent again (stop).
	ReasonKeyReused Reason = "key_reused"
	// ReasonKeyConflict: the request carries two different idempotency keys
	// in the contract's headers, so no server could tell which one it is
	// repeated under: not sent (stop).
	ReasonKeyConflict Reason = "key_conflict"
	// ReasonInvalidRequest: net/http's Transport refused the request
	// itself before it asked for a connection (a header, a trailer, the
	// method, the scheme or the host it does not accept): the same request
	// is refused again, and its host saw nothing, so it is neither resent
	// nor charged to the retry budget (stop).
	ReasonInvalidRequest Reason = "invalid_request"
	// ReasonCertificate: the client could not verify the server's TLS
	// certificate (an unknown authority, another host's name, expired or
	// otherwise invalid): the same certificate fails again, so the request
	// is not retried (stop); its host saw a handshake, nothing more.
	ReasonCertificate Reason = "certificate"
)

// Reasons lists every Reason, in declaration order.
func Reasons() []Reason {
	return []Reason{
		ReasonResponse, ReasonRetryableStatus, ReasonRetryableError, ReasonNotProcessed,
		ReasonClassifier, ReasonIntent, ReasonUnknownWrite, ReasonStateApplied,
		ReasonStateNotApplied, ReasonStateUnknown, ReasonStatus, ReasonNotIdempotent,
		ReasonNotReplayable, ReasonPrepareFailed, ReasonDeadline, ReasonAttemptLimit,
		ReasonBudget, ReasonPushback, ReasonHostLimit, ReasonCaller, ReasonOverrun,
		ReasonServerNoRetry, ReasonServerRetry, ReasonOtherAttempt, ReasonOperationEnded, ReasonInFlight, ReasonHedgeLimit,
		ReasonThrottle, ReasonKeyInProgress, ReasonKeyReused, ReasonKeyConflict, ReasonInvalidRequest,
		ReasonCertificate,
	}
}

// Valid reports whether r is one of the declared reasons.
func (r Reason) Valid() bool { return slices.Contains(Reasons(), r) }

// Attribute returns r as a retry.reason attribute.
func (r Reason) Attribute() attribute.KeyValue { return ReasonKey.String(string(r)) }

// KeySource says where the idempotency key a request carries came from
// (retry.idempotency_key.source).
type KeySource string

// The closed set of key sources.
const (
	// KeySourceGenerated: otelretry generated the key for the operation
	// (otelretry.WithIdempotencyKeys), or took it from an earlier operation
	// the request repeats under the same operation id.
	KeySourceGenerated KeySource = "generated"
	// KeySourceCaller: the caller, an SDK or a PrepareAttemptFunc set the key, in
	// a header the user declared the server honours.
	KeySourceCaller KeySource = "caller"
)

// KeySources lists every KeySource, in declaration order.
func KeySources() []KeySource { return []KeySource{KeySourceGenerated, KeySourceCaller} }

// Valid reports whether s is one of the declared key sources.
func (s KeySource) Valid() bool { return slices.Contains(KeySources(), s) }

// Attribute returns s as a retry.idempotency_key.source attribute.
func (s KeySource) Attribute() attribute.KeyValue { return IdempotencyKeySourceKey.String(string(s)) }

// HintProblem says what was wrong with a retry hint header that was
// present and could not be read (the retry_after_invalid event's
// retry.hint.problem): what the parser can tell of the value, never the
// value.
type HintProblem string

// The closed set of hint problems.
const (
	// HintProblemEmpty: the value is empty.
	HintProblemEmpty HintProblem = "empty"
	// HintProblemNegative: a number with a minus sign.
	HintProblemNegative HintProblem = "negative"
	// HintProblemFraction: a number with a fraction, where the header
	// takes a whole number (Retry-After's delay-seconds).
	HintProblemFraction HintProblem = "fraction"
	// HintProblemNotANumber: not a decimal number, where the header takes
	// one (a number of milliseconds).
	HintProblemNotANumber HintProblem = "not_a_number"
	// HintProblemZero: 0, where the header takes a whole number above 0
	// (HintWholeMilliseconds, as azcore reads retry-after-ms).
	HintProblemZero HintProblem = "zero"
	// HintProblemNotADate: neither a number nor an HTTP-date, where the
	// header takes either (Retry-After).
	HintProblemNotADate HintProblem = "not_a_date"
)

// HintProblems lists every HintProblem, in declaration order.
func HintProblems() []HintProblem {
	return []HintProblem{HintProblemEmpty, HintProblemNegative, HintProblemFraction, HintProblemNotANumber, HintProblemZero, HintProblemNotADate}
}

// Valid reports whether p is one of the declared hint problems.
func (p HintProblem) Valid() bool { return slices.Contains(HintProblems(), p) }

// Attribute returns p as a retry.hint.problem attribute.
func (p HintProblem) Attribute() attribute.KeyValue { return RetryHintProblemKey.String(string(p)) }
