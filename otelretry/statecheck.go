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
// (ctx), under the operation's deadline, with a copy of the write that
// went on the wire. A lookup the hook makes through an otelretry Transport
// is an operation of its own (lookupContext). The stored response it
// hands back was fetched with the hook's context, so that context lives on
// until the stored body is closed (and no longer than the deadline: a
// context.WithDeadline, whose contexts derived from it end
// DeadlineExceeded as the hook expects).
func runStateCheck(ctx context.Context, deadline time.Time, hook stateCheckFunc, rec *recorder, id string, a *attempt, cause error,
	sanitize func(error) error) checkAnswer {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	handedOver := false
	defer func() {
		if !handedOver {
			cancel()
		}
	}()
	ctx, span := rec.startStateCheck(lookupContext(ctx, a.setup))
	answered := false
	defer func() {
		if !answered { // the hook panicked, or called runtime.Goexit
			r := recover()
			afterPanic(func() { // what ties the span to its operation, as endStateCheck writes it
				if span.IsRecording() {
					span.SetAttributes(attrs.OperationIDKey.String(id), attrs.StateCheckAttemptKey.Int(a.id.number))
				}
			})
			afterPanic(func() { endWithPanic(span, r) }) // the hook's panic goes on, whatever the telemetry's
			if r != nil {
				panic(r)
			}
		}
	}()
	result, err := hook(ctx, StateCheck{OperationID: id, Request: a.checkCopy(ctx), Attempt: a.id.number, Err: cause})
	state, problem := stateOf(result, err)
	stored := result.Response
	if state != attrs.StateApplied {
		closeResponse(stored) // the hook's body's Close may panic: the span ends above then
		stored = nil
	}
	answered = true
	if stored != nil {
		handOver(stored, new(responseBody), releaseFunc(cancel))
		handedOver = true
	}
	return checkAnswer{state: state, stored: stored, problem: problem, err: sanitize(err), span: span}
}

// lookupContext is the state check's context, below a boundary: a lookup
// the hook makes through an otelretry Transport is an operation of its
// own, not a repeat of the write (see scopeOf). It tells the hook the
// operation's own Intent and id, as an attempt's context does.
func lookupContext(ctx context.Context, s *attemptSetup) context.Context {
	var own ownScope
	if s != nil {
		own = s.own
	}
	return &boundedContext{Context: ctx, own: own}
}

// releaseFunc is a releaser that calls itself: a stored response's body
// cancels its lookup's context when it is closed.
type releaseFunc func()

func (f releaseFunc) release()            { f() }
func (releaseFunc) bodyBroke(error, bool) {} // a stored response has no attempt span
func (releaseFunc) bodyClosing()          {}
func (releaseFunc) closeBase()            {} // the stored body is the hook's own, unwrapped
