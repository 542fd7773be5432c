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
	// DecisionDeadlineExceeded stops because the operation budget cannot
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
)

// Decisions lists every Decision, in declaration order.
func Decisions() []Decision {
	return []Decision{
		DecisionReturn, DecisionRetry, DecisionCheckState, DecisionDeadlineExceeded,
		DecisionMaxAttempts, DecisionStop, DecisionBudgetExhausted, DecisionCanceled,
	}
}

// Valid reports whether d is one of the declared decisions.
func (d Decision) Valid() bool { return slices.Contains(Decisions(), d) }

// Terminal reports whether d ends the operation.
func (d Decision) Terminal() bool { return d != DecisionRetry }

// Outcome returns the operation outcome that a terminal decision implies.
// It returns "" for DecisionRetry, which ends nothing.
func (d Decision) Outcome() Outcome {
	if !d.Terminal() {
		return ""
	}
	return Outcome(d)
}

// Attribute returns d as a retry.decision attribute.
func (d Decision) Attribute() attribute.KeyValue { return DecisionKey.String(string(d)) }

// Outcome is the terminal reason of an operation: the decisions minus retry.
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
)

// Outcomes lists every Outcome, in declaration order.
func Outcomes() []Outcome {
	return []Outcome{
		OutcomeReturn, OutcomeCheckState, OutcomeDeadlineExceeded, OutcomeMaxAttempts,
		OutcomeStop, OutcomeBudgetExhausted, OutcomeCanceled,
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
	// request was written.
	ErrorClassConnectionReset ErrorClass = "connection_reset"
	// ErrorClassDNS: the host name did not resolve; nothing was sent.
	ErrorClassDNS ErrorClass = "dns"
	// ErrorClassTLS: the TLS handshake failed; nothing was sent.
	ErrorClassTLS ErrorClass = "tls"
	// ErrorClassCanceled: the caller canceled the context.
	ErrorClassCanceled ErrorClass = "canceled"
	// ErrorClassOther: any other failure.
	ErrorClassOther ErrorClass = "other"
)

// ErrorClasses lists every ErrorClass, in declaration order.
func ErrorClasses() []ErrorClass {
	return []ErrorClass{
		ErrorClassTimeout, ErrorClassConnectionRefused, ErrorClassConnectionReset,
		ErrorClassDNS, ErrorClassTLS, ErrorClassCanceled, ErrorClassOther,
	}
}

// Valid reports whether c is one of the declared error classes.
func (c ErrorClass) Valid() bool { return slices.Contains(ErrorClasses(), c) }

// NotSent reports whether the class proves the request never reached the
// server, which makes a retry safe for any method.
func (c ErrorClass) NotSent() bool {
	return c == ErrorClassConnectionRefused || c == ErrorClassDNS || c == ErrorClassTLS
}

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
