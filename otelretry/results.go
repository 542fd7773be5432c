// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"slices"
	"sync"

	"github.com/otelretry/otelretry-go/attrs"
)

// Results collects what became of every operation a Transport ran with a
// context that carries it (WithResults). It is filled before RoundTrip
// returns, so it tells the outcome even when a layer above rewrites the
// error: http.Client's Timeout flattens it to text, and SDKs such as
// azcore and openai-go return ctx.Err() once the context is done. An
// operation a panic ended (of a base, a hook or the telemetry: RoundTrip
// does not return) reports nothing to it. The zero value is ready to use,
// and it is safe for concurrent use.
type Results struct {
	mu  sync.Mutex
	ops []OperationResult
}

// OperationResult is what one operation (one RoundTrip) came to.
type OperationResult struct {
	// OperationID is the operation's id: the key to look a write up by.
	OperationID string
	// Outcome and Reason are the operation's terminal decision and why:
	// the retry.outcome its span records, and the retry.reason its log
	// record carries (docs/telemetry.md), as does the attempt span that
	// ended it, when one did (an operation may end before any call).
	Outcome attrs.Outcome
	Reason  attrs.Reason
	// Attempts is the number of network calls the operation made, as
	// retry.attempts counts them (docs/telemetry.md): an attempt cut while
	// it started (the deadline, the caller, or a hedge its race's win cut)
	// is counted, its base not called.
	Attempts int
	// StatusCode is the status of the response RoundTrip returned, 0 when
	// it returned an error.
	StatusCode int
	// OutcomeUnknown reports that a write of this operation may have been
	// applied while its answer was lost, and no later answer settled it:
	// otelretry did not resend it, or resent it under an idempotency-key
	// contract and got no answer that says what became of it. When
	// RoundTrip returned an error, Err matches ErrOutcomeUnknown; it may
	// also be true with a response, and Err nil: a keyed write whose first
	// attempt timed out and whose resends were answered 503 returns the
	// last 503, and one answered 409 until its attempts ran out (the key's
	// first request still in progress) the last 409. Resolve it by
	// OperationID, never by sending the write again blindly.
	OutcomeUnknown bool
	// Err is the *Error RoundTrip returned, nil with a response.
	Err error
}

type resultsKey struct{}

// WithResults returns a context whose requests report their operations to
// r, as httptrace.WithClientTrace reports a request's events. Several
// operations may share it: an SDK's own retries, a redirect chain (one
// result per hop, under one operation id), concurrent calls. Slots nest,
// as httptrace's traces do: an operation is reported to every slot its
// context carries (once to a slot added twice), so that a helper's slot
// added under the caller's blinds neither. A call made from a hook (a
// PrepareAttemptFunc, a Classifier, a Backoff, a state check, a base below) is
// an operation of its own when it is made on the context the hook was
// given (the request's): it is reported to the slots the hook added to
// that context, and to none of the calling operation's. One made on a
// context the hook captured from the caller is the caller's own call,
// reported to the caller's slots under the caller's operation id. A nil
// r returns ctx unchanged.
func WithResults(ctx context.Context, r *Results) context.Context {
	if r == nil {
		return ctx
	}
	prev, _ := ctx.Value(resultsKey{}).(*resultsSlot)
	return context.WithValue(ctx, resultsKey{}, &resultsSlot{r: r, at: boundaryOf(ctx), prev: prev})
}

// resultsSlot is a Results a context carries (WithResults), with the
// nearest boundary above the context it was added to (see boundary), and
// the slot the context carried before it.
type resultsSlot struct {
	r    *Results
	at   *boundary
	prev *resultsSlot
}

// resultsSince returns the last slot added to ctx since boundary at, nil
// when there is none: the slots added before it (prev) down to the first
// added above the boundary are the others.
func resultsSince(ctx context.Context, at *boundary) *resultsSlot {
	if s, ok := ctx.Value(resultsKey{}).(*resultsSlot); ok && s.at == at {
		return s
	}
	return nil
}

// report adds res to every slot from s back to the first one added since
// s's boundary, once to each Results.
func (s *resultsSlot) report(res OperationResult) {
	for slot := s; slot != nil && slot.at == s.at; slot = slot.prev {
		if !s.holdsBefore(slot) {
			slot.r.add(res)
		}
	}
}

// holdsBefore reports whether a slot from s back to (not including) last
// holds last's Results: it was reported there already.
func (s *resultsSlot) holdsBefore(last *resultsSlot) bool {
	for slot := s; slot != last; slot = slot.prev {
		if slot.r == last.r {
			return true
		}
	}
	return false
}

func (r *Results) add(res OperationResult) {
	r.mu.Lock()
	r.ops = append(r.ops, res)
	r.mu.Unlock()
}

// Operations returns the operations reported so far, in the order they
// ended.
func (r *Results) Operations() []OperationResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops)
}

// Last returns the operation that ended last, if any.
func (r *Results) Last() (OperationResult, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ops) == 0 {
		return OperationResult{}, false
	}
	return r.ops[len(r.ops)-1], true
}

// OutcomeUnknown reports whether any operation reported so far left a
// write whose outcome is unknown: a layer above that sent the write again
// may have had it applied twice. When that layer resends it under one
// idempotency key (stripe-go does), the service answers a resend with the
// first one's result, so a later answer settles it: read Last instead.
func (r *Results) OutcomeUnknown() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.ops, func(o OperationResult) bool { return o.OutcomeUnknown })
}
