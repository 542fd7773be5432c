package otelretry

import (
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// observation is everything the decision depends on. decide reads nothing
// else: no clock, no I/O, no configuration.
type observation struct {
	// idempotent: the method is safe to repeat (GET, HEAD, OPTIONS, TRACE,
	// or a method the user declared) or the request carries an idempotency
	// key under a contract the user opted in to.
	idempotent bool
	// status is the response status code, 0 when no response arrived.
	status int
	// errorClass classifies the failure when no response arrived.
	errorClass attrs.ErrorClass
	// neverSent: the failure proves the request did not reach the server.
	neverSent bool
	// retryableStatus: status is one the policy retries (408, 429, 502,
	// 503, 504 by default).
	retryableStatus bool
	// remainingAfter is the operation budget left after this attempt.
	remainingAfter time.Duration
	// attemptsLeft is how many more calls the attempt limit allows.
	attemptsLeft int
	// backoff is the pause the Backoff chose; retryAfter the server's hint
	// (0 when absent). The pause is the larger of the two.
	backoff, retryAfter time.Duration
	// replayable: the request body can be sent again (none, or GetBody set).
	replayable bool
}

// decide applies the decision rules to one attempt's observation and
// returns the decision and, for DecisionRetry, the pause before the next
// attempt. It is the only place the rules live.
func decide(o observation) (attrs.Decision, time.Duration) {
	if o.status == 0 && o.errorClass == attrs.ErrorClassCanceled {
		return attrs.DecisionCanceled, 0
	}
	if o.status >= 200 && o.status < 400 {
		return attrs.DecisionReturn, 0
	}
	if !retryable(o) {
		if o.status == 0 && !o.idempotent && (o.errorClass == attrs.ErrorClassTimeout || o.errorClass == attrs.ErrorClassConnectionReset) {
			// The write may have been applied while its answer was lost.
			return attrs.DecisionCheckState, 0
		}
		return attrs.DecisionStop, 0
	}
	return nextStep(o.remainingAfter, o.attemptsLeft, max(o.backoff, o.retryAfter), o.replayable)
}

// retryable reports whether the result of an attempt may be tried again,
// before any limit is applied.
func retryable(o observation) bool {
	if o.status != 0 {
		return o.retryableStatus && o.idempotent
	}
	return o.neverSent || o.idempotent
}

// nextStep applies the limits to a retryable result: the deadline first
// (never sleep past it), then the attempt limit, then whether the body can be
// sent again.
func nextStep(remaining time.Duration, attemptsLeft int, wait time.Duration, replayable bool) (attrs.Decision, time.Duration) {
	switch {
	case remaining <= wait:
		return attrs.DecisionDeadlineExceeded, 0
	case attemptsLeft <= 0:
		return attrs.DecisionMaxAttempts, 0
	case !replayable:
		return attrs.DecisionStop, 0
	default:
		return attrs.DecisionRetry, wait
	}
}

// afterStateCheck decides what follows a state check of an unknown write.
// Applied returns the stored result; unknown keeps the outcome unknown;
// not-applied lets the write be sent again within the same limits as a
// retry, with no pause: the server has just said the write is not there.
func afterStateCheck(result attrs.StateCheckResult, remaining time.Duration, attemptsLeft int, replayable bool) attrs.Decision {
	switch result {
	case attrs.StateApplied:
		return attrs.DecisionReturn
	case attrs.StateNotApplied:
		d, _ := nextStep(remaining, attemptsLeft, 0, replayable)
		return d
	default:
		return attrs.DecisionCheckState
	}
}
