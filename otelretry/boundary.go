// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"sync/atomic"
)

// boundary marks where an operation hands a context to code of its users:
// an attempt's context (which a PrepareAttemptFunc sees through its request,
// and a base below sends with), a Classifier's and a Backoff's (see
// answerContext), and a state check's. A
// call made with a context below it is an operation of its own.
//
// Each value of an operation's scope (an Intent, an operation id, a result
// slot) is stamped, when it is added to a context, with the nearest
// boundary above that context (nil for none), so that scopeOf can tell
// what was added since the nearest boundary, which the call honours, from
// what was inherited from above it, which it ignores: by comparing
// pointers, with no lock and no walk of the context chain beyond
// context.Value's own.
type boundary struct {
	// operations counts the otelretry operations that began below it (also
	// making it not zero-sized, so that every boundary is a pointer of its
	// own): an attempt's tells whether a Transport below made one
	// operation or more (see unsentBelow).
	operations atomic.Int32
}

type boundaryKey struct{}

// boundaryOf returns the nearest boundary above ctx, nil when there is
// none: the caller's own context.
func boundaryOf(ctx context.Context) *boundary {
	b, _ := ctx.Value(boundaryKey{}).(*boundary)
	return b
}
