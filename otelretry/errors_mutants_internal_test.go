// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
)

// RetryableError is true only for max_attempts, never for a write whose
// outcome is unknown, nor when the last error is a budget's or a
// throttle's refusal (errors.go: RetryableError's godoc).
func TestRetryableErrorRefusesUnknownWritesAndRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		e    *Error
		want bool
	}{
		{"max_attempts", &Error{Outcome: attrs.OutcomeMaxAttempts, Attempts: 3}, true},
		{"max_attempts unknown write", &Error{Outcome: attrs.OutcomeMaxAttempts, Attempts: 3, unknownWrite: true}, false},
		{"max_attempts on a budget refusal below", &Error{Outcome: attrs.OutcomeMaxAttempts, Attempts: 3, Err: ErrBudgetExhausted}, false},
		{"max_attempts on a throttle below", &Error{Outcome: attrs.OutcomeMaxAttempts, Attempts: 3, Err: ErrThrottled}, false},
		{"budget_exhausted", &Error{Outcome: attrs.OutcomeBudgetExhausted, Attempts: 1}, false},
	} {
		if got := c.e.RetryableError(); got != c.want {
			t.Errorf("%s: RetryableError() = %v, want %v", c.name, got, c.want)
		}
	}
}

// The message counts attempts in English: 0 attempts, 1 attempt.
func TestErrorMessageCountsAttempts(t *testing.T) {
	for n, want := range map[int]string{0: "after 0 attempts", 1: "after 1 attempt", 2: "after 2 attempts"} {
		msg := (&Error{Outcome: attrs.OutcomeCanceled, OperationID: "op", Attempts: n}).Error()
		if !strings.HasSuffix(msg, want) {
			t.Errorf("%d attempts: %q, want it to end %q", n, msg, want)
		}
	}
}

// A caller's cut names what ended it: a cancel, or the caller's deadline.
func TestCallerCutErrorNamesItsCause(t *testing.T) {
	for err, want := range map[error]string{context.Canceled: "canceled", context.DeadlineExceeded: "deadline"} {
		e := callerCutError{err}
		if !strings.Contains(e.Error(), want) || !errors.Is(e, err) {
			t.Errorf("callerCutError(%v) = %q, want it to say %q and match", err, e.Error(), want)
		}
	}
}

// A key conflict is ErrIdempotencyKeyConflict to errors.Is, and its message
// names the headers, never the keys.
func TestKeyConflictErrorIsTheSentinel(t *testing.T) {
	e := keyConflictError{headers: []string{"Idempotency-Key", "X-Idempotency-Key"}}
	if !errors.Is(e, ErrIdempotencyKeyConflict) {
		t.Errorf("errors.Is(%v, ErrIdempotencyKeyConflict) = false", e)
	}
	if !strings.Contains(e.Error(), "Idempotency-Key, X-Idempotency-Key") {
		t.Errorf("message %q does not name the headers", e.Error())
	}
}
