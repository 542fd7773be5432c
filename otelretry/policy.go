// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// phase is the point of an operation at which decide is asked.
type phase uint8

const (
	// phaseBeforeCall: before each network call (the first, and each one
	// after a pause). The verdict is empty when the call may go ahead.
	phaseBeforeCall phase = iota
	// phaseAttempt: after an attempt got a response's headers or failed.
	phaseAttempt
	// phaseStateCheck: after a state check answered for an unknown write.
	phaseStateCheck
)

// input is everything a decision depends on. The transport gathers it and
// carries out the verdict; decide reads nothing else: no clock, no I/O, no
// configuration, no hook.
type input struct {
	phase phase

	// callerCanceled, callerDeadline: the caller's context was canceled,
	// or its deadline passed.
	callerCanceled, callerDeadline bool

	// remaining is the operation's time left: before the call in
	// phaseBeforeCall, after the attempt (or state check) otherwise.
	remaining time.Duration
	// attemptsLeft is how many more calls the attempt limit allows.
	attemptsLeft int

	// repeatable: the request is safe to repeat: a safe method, a method
	// declared with WithIdempotentMethods, an idempotency key under
	// WithIdempotencyKeyContract, or Intent.Repeatable.
	repeatable bool
	// noRetry: the request's Intent forbids retries.
	noRetry bool
	// replayable: the body can be sent again (none, or GetBody set).
	replayable bool

	// The answer: a status, or an error class (never both).
	status int
	// retryableStatus: status is one the policy retries.
	retryableStatus bool
	class           attrs.ErrorClass
	// notProcessed: the error proves the server did not act on the
	// request (it never left, or the protocol says it was refused).
	notProcessed bool
	// written: the base reported the request's headers written on the
	// wire (httptrace), so the server may have begun to act on it: a
	// failure after that, whatever its class, leaves a write's outcome
	// unknown. A base that reports no writes leaves it false.
	written bool

	// classifier is the user's classification, zero when none decided.
	classifier Classification

	// backoff is the Backoff's pause once pauseAsked, retryAfter the
	// server's hint. The Backoff is asked only for an answer that may be
	// retried (see needPause).
	pauseAsked          bool
	backoff, retryAfter time.Duration

	// budget is the retry budget's answer once budgetAsked: "" when
	// allowed, else the refusal's reason.
	budgetAsked bool
	budget      attrs.Reason

	// state is the state check's answer (phaseStateCheck).
	state attrs.StateCheckResult
}

// verdict is what decide returns: the decision, the pause before the next
// attempt (decision retry), and the reason.
type verdict struct {
	decision attrs.Decision
	pause    time.Duration
	reason   attrs.Reason
	// unknownWrite: the request may have been applied while its answer was
	// lost (check_state, or a cancellation while it was in flight).
	unknownWrite bool
	// needPause, needBudget: the answer may be retried, but the Backoff
	// (or the retry budget) was not asked yet; ask it and decide again
	// with its answer. Asking only then keeps a Backoff or a budget from
	// being consulted for an answer that ends the operation anyway.
	needPause, needBudget bool
}

// goAhead reports whether a phaseBeforeCall verdict lets the call go ahead.
func (v verdict) goAhead() bool { return v.decision == "" }

// decide applies the decision rules. It is pure, and it is the only place
// the rules live: the transport gathers the input and carries out the
// verdict (README, "Decisions").
func decide(in input) verdict {
	switch in.phase {
	case phaseBeforeCall:
		return decideBeforeCall(in)
	case phaseStateCheck:
		return decideAfterStateCheck(in)
	default:
		return decideAfterAttempt(in)
	}
}

func decideBeforeCall(in input) verdict {
	switch {
	case in.callerCanceled:
		return verdict{decision: attrs.DecisionCanceled, reason: attrs.ReasonCaller}
	case in.callerDeadline:
		return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonCaller}
	case in.remaining <= 0:
		return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonDeadline}
	}
	return verdict{}
}

func decideAfterAttempt(in input) verdict {
	answered := in.status != 0
	if !answered && (in.callerCanceled || in.class == attrs.ErrorClassCanceled) {
		// The caller gave up. A write in flight may still be applied.
		return verdict{decision: attrs.DecisionCanceled, reason: attrs.ReasonCaller,
			unknownWrite: !in.repeatable && !in.notProcessed}
	}
	if answered && success(in.status) {
		return verdict{decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}
	}
	if answered && (in.callerCanceled || in.callerDeadline) {
		// A failed answer, and the caller has given up or run out of time:
		// no retry will follow, so none is recorded. The answer is
		// returned.
		return callerGone(in, false)
	}
	// unknown: a write that may have been applied lost its answer. No rule
	// and no hook turns that into a resend; only the caller's word that
	// the request is repeatable does.
	unknown := !answered && !in.repeatable && !in.notProcessed &&
		(in.written || in.class == attrs.ErrorClassTimeout || in.class == attrs.ErrorClassConnectionReset)
	if unknown {
		return verdict{decision: attrs.DecisionCheckState, reason: attrs.ReasonUnknownWrite, unknownWrite: true}
	}

	retryable, why := retryable(in)
	if !retryable {
		return verdict{decision: attrs.DecisionStop, reason: why}
	}
	if in.noRetry {
		return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonIntent}
	}
	if !in.pauseAsked {
		return verdict{decision: attrs.DecisionRetry, reason: why, needPause: true}
	}
	pause := max(in.backoff, in.retryAfter, in.classifier.pause)
	return applyLimits(in, pause, why)
}

// retryable reports whether an answer that is neither a success nor an
// unknown write may be tried again before any limit applies, and why (or
// why not).
func retryable(in input) (bool, attrs.Reason) {
	answered := in.status != 0
	switch in.classifier.kind {
	case classNotRetryable:
		return false, attrs.ReasonClassifier
	case classNotProcessed:
		if !answered {
			return true, attrs.ReasonClassifier
		}
	case classRetryable:
		// A classifier widens what is retried; it never makes a write
		// repeatable.
		if in.repeatable {
			return true, attrs.ReasonClassifier
		}
		return false, attrs.ReasonNotIdempotent
	}
	switch {
	case !answered && in.notProcessed:
		return true, attrs.ReasonNotProcessed
	case !answered && in.repeatable:
		return true, attrs.ReasonRetryableError
	case !answered:
		return false, attrs.ReasonNotIdempotent
	case !in.retryableStatus:
		return false, attrs.ReasonStatus
	case !in.repeatable:
		return false, attrs.ReasonNotIdempotent
	default:
		return true, attrs.ReasonRetryableStatus
	}
}

// applyLimits applies the limits to a retryable answer, in order: the
// deadline (never start a pause it would cut), the attempt limit, whether
// the body can be sent again, and last the retry budget, so that the
// budget is asked only for a retry that would otherwise happen.
func applyLimits(in input, pause time.Duration, why attrs.Reason) verdict {
	switch {
	case in.remaining <= pause:
		return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonDeadline}
	case in.attemptsLeft <= 0:
		return verdict{decision: attrs.DecisionMaxAttempts, reason: attrs.ReasonAttemptLimit}
	case !in.replayable:
		return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonNotReplayable}
	case !in.budgetAsked:
		return verdict{decision: attrs.DecisionRetry, pause: pause, reason: why, needBudget: true}
	case in.budget != "":
		return verdict{decision: attrs.DecisionBudgetExhausted, reason: in.budget}
	default:
		return verdict{decision: attrs.DecisionRetry, pause: pause, reason: why}
	}
}

// decideAfterStateCheck decides what follows a state check of an unknown
// write. Applied returns the stored result; unknown keeps the outcome
// unknown; not-applied lets the write be sent again within the same limits
// as a retry, with no pause: the server has just said the write is not
// there.
func decideAfterStateCheck(in input) verdict {
	switch in.state {
	case attrs.StateApplied:
		return verdict{decision: attrs.DecisionReturn, reason: attrs.ReasonStateApplied}
	case attrs.StateNotApplied:
		if in.callerCanceled || in.callerDeadline {
			return callerGone(in, false) // known not applied: nothing unknown
		}
		if in.noRetry {
			return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonIntent}
		}
		// A limit that stops the resend leaves the write not applied, which
		// is known: the operation ends with that limit, not unknown.
		return applyLimits(in, 0, attrs.ReasonStateNotApplied)
	default:
		if in.callerCanceled || in.callerDeadline {
			return callerGone(in, true)
		}
		return verdict{decision: attrs.DecisionCheckState, reason: attrs.ReasonStateUnknown, unknownWrite: true}
	}
}

// callerGone is the verdict when the caller's context is done: canceled,
// or deadline_exceeded, reason caller.
func callerGone(in input, unknownWrite bool) verdict {
	if in.callerCanceled {
		return verdict{decision: attrs.DecisionCanceled, reason: attrs.ReasonCaller, unknownWrite: unknownWrite}
	}
	return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonCaller, unknownWrite: unknownWrite}
}

// success reports whether a status ends an operation with return: 2xx,
// 3xx, or 101 Switching Protocols (the connection now speaks another
// protocol, which is what the caller asked for).
func success(status int) bool {
	return status == 101 || (status >= 200 && status < 400)
}
