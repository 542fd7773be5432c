// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/codes"

	"github.com/otelretry/otelretry-go/attrs"
)

// StateCheck describes a write whose outcome is unknown.
type StateCheck struct {
	// OperationID is the operation's id: the key to look the write up by.
	OperationID string
	// Request is a copy of the write. Its body was already sent and is not
	// readable; use method, URL and headers (for example an Idempotency-Key)
	// to find the record.
	Request *http.Request
	// Attempt is the number of the attempt whose outcome is unknown.
	Attempt int
	// Err is that attempt's error (a timeout or a broken connection).
	Err error
}

// StateResult is the answer of a StateCheckFunc.
type StateResult struct {
	// State says whether the write was applied.
	State attrs.StateCheckResult
	// Response is the stored result of the write. It is required when
	// State is attrs.StateApplied and is then returned to the caller as the
	// operation's response; it is ignored otherwise.
	Response *http.Response
}

// StateCheckFunc resolves an unknown write outcome (decision check_state),
// typically by querying the server for the record by operation id or
// idempotency key.
//
//   - StateApplied: the write happened; Response is returned to the caller.
//   - StateNotApplied: the write did not happen; it is sent again, within the
//     same deadline, attempt limit and budget as a retry.
//   - StateUnknown, or an error: the outcome stays unknown; RoundTrip returns
//     an error matching ErrOutcomeUnknown.
//
// ctx carries the operation deadline and the state_check span, so calls the
// hook makes through an instrumented client appear under it. A lookup it
// makes through an otelretry Transport is an operation of its own (its own
// operation id, never counted as a repeat of the write). An error it
// returns is recorded, sanitized, on the state_check span and is reachable
// from the error RoundTrip returns with errors.Is and errors.As.
type StateCheckFunc func(ctx context.Context, check StateCheck) (StateResult, error)

// checkState resolves the unknown outcome of attempt a with the user's
// hook, if any, in a state_check span. It returns the verdict that
// follows (retry: resend; return: with the stored response; else
// terminal), the stored response, and the hook's error, sanitized.
func (op *operation) checkState(a *attempt, cause error) (verdict, *http.Response, error) {
	hook := op.t.cfg.stateCheck
	if hook == nil {
		return a.ev.verdict, nil, nil
	}
	ctx, cancel := context.WithDeadline(op.ctx, op.clock.deadline)
	defer cancel()
	ctx, span := op.t.tracer.Start(lookupContext(ctx), attrs.StateCheckSpanName, op.t.internal...)
	defer span.End()

	result, err := hook(ctx, StateCheck{OperationID: op.opID(), Request: a.checkCopy(ctx), Attempt: a.ev.attempt, Err: cause})
	state, problem := stateOf(result, err)
	if problem != "" {
		span.SetStatus(codes.Error, problem)
	}
	if err != nil {
		err = op.sanitize(err, a.out.URL)
		span.RecordError(err)
		span.SetStatus(codes.Error, "state check failed: "+err.Error())
	}
	if state != attrs.StateApplied {
		closeResponse(result.Response)
	}
	in := op.inputAt(phaseStateCheck, op.since())
	in.state = state
	v := op.settle(in, a.n, &Answer{})
	if span.IsRecording() {
		span.SetAttributes(append(op.attrs(), attrs.OperationIDKey.String(op.opID()), state.Attribute(),
			v.decision.Attribute(), v.reason.Attribute())...)
	}
	if v.decision != attrs.DecisionReturn {
		return v, nil, err
	}
	stored := result.Response
	if stored.Body == nil {
		stored.Body = http.NoBody
	}
	if stored.Request == nil {
		stored.Request = op.req
	}
	return v, stored, nil
}

// stateOf is the state a check's answer stands for, and what was wrong
// with it: an error or an answer outside the set is unknown, and an
// applied write with no stored result cannot be returned (a response is
// never invented), so it is unknown too.
func stateOf(result StateResult, err error) (attrs.StateCheckResult, string) {
	switch {
	case err != nil:
		return attrs.StateUnknown, ""
	case result.State == attrs.StateApplied && result.Response == nil:
		return attrs.StateUnknown, "state check reported applied without a response"
	case result.State != attrs.StateApplied && result.State != attrs.StateNotApplied:
		return attrs.StateUnknown, ""
	}
	return result.State, ""
}

// lookupContext is the state check's context: a lookup the hook makes
// through an otelretry Transport is an operation of its own, not a repeat
// of the write (see scopeOf).
func lookupContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, hookKey{}, true)
}

// checkCopy is the copy of the write a state check gets: the prepared
// request that went on the wire, without its body (it was sent, and is
// not the hook's to read or close), with the idempotency headers under
// their canonical names.
func (a *attempt) checkCopy(ctx context.Context) *http.Request {
	c := a.out.Clone(ctx)
	c.Body, c.GetBody, c.ContentLength = http.NoBody, nil, 0
	for _, k := range netHTTPIdempotencyKeys {
		if v, ok := c.Header[k.hidden]; ok {
			delete(c.Header, k.hidden)
			c.Header[k.canonical] = v
		}
	}
	return c
}
