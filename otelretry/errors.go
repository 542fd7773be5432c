// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"strconv"

	"github.com/otelretry/otelretry-go/attrs"
)

// Sentinels for errors.Is. An *Error also matches context.DeadlineExceeded
// when its outcome is deadline_exceeded and context.Canceled when it is
// canceled.
var (
	// ErrOutcomeUnknown: a write may or may not have been applied (it timed
	// out or its connection broke after it was sent, or the caller gave up
	// while it was in flight). otelretry did not resend it, and refused to
	// let net/http resend it below; a layer above otelretry may still have.
	// Resolve it with a state check by the operation id, never by sending
	// the write again blindly.
	ErrOutcomeUnknown = errors.New("otelretry: outcome of the write is unknown; not resent by otelretry")
	// ErrMaxAttempts: every allowed attempt failed.
	ErrMaxAttempts = errors.New("otelretry: attempt limit reached")
	// ErrBudgetExhausted: the client-wide retry budget refused a retry.
	ErrBudgetExhausted = errors.New("otelretry: retry budget exhausted")
	// ErrNotReplayable: a retry was needed but the request body cannot be
	// sent twice (no GetBody).
	ErrNotReplayable = errors.New("otelretry: request body cannot be replayed")
)

// errNilURL rejects a request that names no URL.
var errNilURL = errors.New("otelretry: nil Request.URL")

// Error is returned by Transport.RoundTrip when the operation ended without
// a response to hand back. Its message never contains headers, bodies, URL
// userinfo or query values: URLs in a cause's message are sanitized.
type Error struct {
	// Outcome is the terminal reason.
	Outcome attrs.Outcome
	// Reason says why (retry.reason), for example budget or pushback for
	// budget_exhausted.
	Reason attrs.Reason
	// OperationID is the id shared by every attempt of the operation.
	OperationID string
	// Attempts is the number of network calls made (0 when the budget was
	// spent before the first call).
	Attempts int
	// Err is the last cause: the last attempt's transport error, or nil.
	Err error

	// unknownWrite marks a write whose outcome is unknown: check_state, or
	// a cancellation while the write was in flight.
	unknownWrite bool
}

func (e *Error) Error() string {
	msg := "otelretry: operation " + strconv.Quote(e.OperationID) + " ended " + string(e.Outcome)
	if e.Reason != "" {
		msg += " (" + string(e.Reason) + ")"
	}
	msg += " after " + strconv.Itoa(e.Attempts) + " attempt"
	if e.Attempts != 1 {
		msg += "s"
	}
	if e.unknownWrite {
		msg += "; outcome of the write unknown, not resent by otelretry"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the sentinels that describe the outcome and the cause, so
// errors.Is and errors.As see both.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 3)
	switch e.Outcome {
	case attrs.OutcomeDeadlineExceeded:
		errs = append(errs, context.DeadlineExceeded)
	case attrs.OutcomeCanceled:
		errs = append(errs, context.Canceled)
	case attrs.OutcomeMaxAttempts:
		errs = append(errs, ErrMaxAttempts)
	case attrs.OutcomeBudgetExhausted:
		errs = append(errs, ErrBudgetExhausted)
	}
	if e.unknownWrite {
		errs = append(errs, ErrOutcomeUnknown)
	}
	if e.Reason == attrs.ReasonNotReplayable {
		errs = append(errs, ErrNotReplayable)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}
