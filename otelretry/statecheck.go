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
// hook makes through an instrumented client appear under it.
type StateCheckFunc func(ctx context.Context, check StateCheck) (StateResult, error)

// checkState resolves the unknown outcome of attempt a with the user's
// hook, if any, in a state_check span. It returns the verdict that
// follows (retry: resend; return: with the stored response; else
// terminal) and the stored response.
func (op *operation) checkState(a *attempt, cause error) (verdict, *http.Response) {
	hook := op.t.cfg.stateCheck
	if hook == nil {
		return a.ev.verdict, nil
	}
	ctx, cancel := context.WithDeadline(op.ctx, op.deadline)
	defer cancel()
	ctx, span := op.t.tracer.Start(ctx, attrs.StateCheckSpanName, op.t.internal...)
	defer span.End()

	// A copy without a body: the write's body was sent, and is the
	// caller's to close (through the attempt), not the hook's.
	copied := op.req.Clone(ctx)
	copied.Body, copied.GetBody, copied.ContentLength = http.NoBody, nil, 0
	result, err := hook(ctx, StateCheck{OperationID: op.opID(), Request: copied, Attempt: a.ev.attempt, Err: cause})
	state := result.State
	switch {
	case err != nil:
		state = attrs.StateUnknown
		span.SetStatus(codes.Error, "state check failed")
	case state == attrs.StateApplied && result.Response == nil:
		// An applied write with no stored result cannot be returned, and a
		// response is never invented.
		state = attrs.StateUnknown
		span.SetStatus(codes.Error, "state check reported applied without a response")
	case state != attrs.StateApplied && state != attrs.StateNotApplied:
		state = attrs.StateUnknown
	}
	if state != attrs.StateApplied {
		closeResponse(result.Response)
	}
	now := op.since()
	in := op.inputAt(phaseStateCheck, now)
	in.state = state
	v := op.settle(in, a.n, &Answer{}, now)
	if span.IsRecording() {
		span.SetAttributes(append(op.attrs(), attrs.OperationIDKey.String(op.opID()), state.Attribute(),
			v.decision.Attribute(), v.reason.Attribute())...)
	}
	if v.decision == attrs.DecisionReturn {
		stored := result.Response
		if stored.Body == nil {
			stored.Body = http.NoBody
		}
		if stored.Request == nil {
			stored.Request = op.req
		}
		return v, stored
	}
	return v, nil
}
