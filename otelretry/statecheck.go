// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// checkAnswer is what a state check of an unknown write came to: the state
// its answer stands for (stateOf), the stored response when the write was
// applied, what was wrong with the answer, the hook's error (sanitized),
// and its span, still open for the verdict that follows.
type checkAnswer struct {
	state   attrs.StateCheckResult
	stored  *http.Response
	problem string
	err     error
	span    trace.Span
}

// runStateCheck asks the user's hook about the unknown outcome of attempt
// a of operation id: in a state_check span, a child of the operation span
// (ctx), under the operation's deadline (checkContext), with a copy of the
// write that went on the wire. A lookup the hook makes through an
// otelretry Transport is an operation of its own (lookupContext). The
// stored response it hands back keeps the hook's context alive until its
// body is closed: that body is the caller's, as an attempt's is.
func runStateCheck(ctx context.Context, deadline time.Time, hook stateCheckFunc, rec *recorder, id string, a *attempt, cause error,
	sanitize func(error) error) checkAnswer {
	check := newCheckContext(ctx, deadline)
	handedOver := false
	defer func() {
		if !handedOver {
			check.release()
		}
	}()
	ctx, span := rec.startStateCheck(lookupContext(check))
	answered := false
	defer func() {
		if !answered { // the hook panicked, or called runtime.Goexit
			r := recover()
			endWithPanic(span, r)
			if r != nil {
				panic(r)
			}
		}
	}()
	result, err := hook(ctx, StateCheck{OperationID: id, Request: a.checkCopy(ctx), Attempt: a.id.number, Err: cause})
	answered = true
	state, problem := stateOf(result, err)
	stored := result.Response
	if state != attrs.StateApplied {
		closeResponse(stored)
		stored = nil
	}
	if stored != nil {
		check.expire.Stop() // the deadline bounded the lookup's headers, not its body
		handOver(stored, new(responseBody), check)
		handedOver = true
	}
	return checkAnswer{state: state, stored: stored, problem: problem, err: sanitize(err), span: span}
}

// checkContext is a state check's context: the operation's, canceled at
// the operation's deadline, which it reports, as context.WithDeadline's
// would be, by a timer that, unlike WithDeadline's, can be stopped: the
// stored response a hook hands back was fetched with this context, and its
// body must outlive the deadline once the caller has it. Closing that body
// releases the context.
type checkContext struct {
	context.Context // a context.WithCancelCause of the operation's
	deadline        time.Time
	cancel          context.CancelCauseFunc
	expire          *time.Timer
}

func newCheckContext(parent context.Context, deadline time.Time) *checkContext {
	ctx, cancel := context.WithCancelCause(parent)
	c := &checkContext{Context: ctx, deadline: deadline, cancel: cancel}
	c.expire = time.AfterFunc(time.Until(deadline), func() { cancel(context.DeadlineExceeded) })
	return c
}

// Deadline is the operation's, or the parent's when it is earlier.
func (c *checkContext) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Err is context.DeadlineExceeded once the deadline passed, as a
// WithDeadline context's is.
func (c *checkContext) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

// release lets go of the context: when the hook returned without a stored
// response, or when the stored response's body is closed.
func (c *checkContext) release() {
	c.expire.Stop()
	c.cancel(nil)
}
