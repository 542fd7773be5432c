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
// azcore and openai-go return ctx.Err() once the context is done. The
// zero value is ready to use, and it is safe for concurrent use.
type Results struct {
	mu  sync.Mutex
	ops []OperationResult
}

// OperationResult is what one operation (one RoundTrip) came to.
type OperationResult struct {
	// OperationID is the operation's id: the key to look a write up by.
	OperationID string
	// Outcome and Reason are the operation's terminal decision and why
	// (the retry.outcome and retry.reason its span records).
	Outcome attrs.Outcome
	Reason  attrs.Reason
	// Attempts is the number of network calls the operation made.
	Attempts int
	// StatusCode is the status of the response RoundTrip returned, 0 when
	// it returned an error.
	StatusCode int
	// OutcomeUnknown reports that a write of this operation may have been
	// applied while its answer was lost: otelretry did not resend it (Err
	// matches ErrOutcomeUnknown). Resolve it by OperationID, never by
	// sending the write again blindly.
	OutcomeUnknown bool
	// Err is the *Error RoundTrip returned, nil with a response.
	Err error
}

type resultsKey struct{}

// WithResults returns a context whose requests report their operations to
// r, as httptrace.WithClientTrace reports a request's events. Several
// operations may share it: an SDK's own retries, a redirect chain (one
// result per hop, under one operation id), concurrent calls. A call made
// from a hook (a PrepareFunc, a StateCheckFunc) is not reported to it. A
// nil r returns ctx unchanged.
func WithResults(ctx context.Context, r *Results) context.Context {
	if r == nil {
		return ctx
	}
	return context.WithValue(ctx, resultsKey{}, r)
}

// resultsOf returns the Results ctx carries, or nil.
func resultsOf(ctx context.Context) *Results {
	r, _ := ctx.Value(resultsKey{}).(*Results)
	return r
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
