// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"testing"
)

// The caller's own context is below no boundary; each boundary (a state
// check's, an attempt's) is a pointer of its own, and the nearest one
// above a context is the one boundaryOf returns, also through contexts
// derived below it.
func TestBoundaryOfIsTheNearestBoundaryAbove(t *testing.T) {
	caller := context.Background()
	if b := boundaryOf(caller); b != nil {
		t.Fatalf("the caller's context is below boundary %p, want none", b)
	}
	check1, check2 := lookupContext(caller, nil), lookupContext(caller, nil)
	b1, b2 := boundaryOf(check1), boundaryOf(check2)
	if b1 == nil || b2 == nil || b1 == b2 {
		t.Errorf("two state checks' boundaries: %p and %p, want two of their own", b1, b2)
	}
	a1, a2 := &attempt{}, &attempt{}
	a1.ctx = attemptContext{Context: check1, a: a1}
	a2.ctx = attemptContext{Context: &a1.ctx, a: a2}
	derived, cancel := context.WithCancel(context.WithValue(&a2.ctx, struct{}{}, "a base's own value"))
	defer cancel()
	if got := boundaryOf(&a1.ctx); got != &a1.ctx.bound || got == b1 {
		t.Errorf("an attempt's context is below %p, want its own boundary %p", got, &a1.ctx.bound)
	}
	if got := boundaryOf(derived); got != &a2.ctx.bound {
		t.Errorf("a context derived from an attempt's is below %p, want that attempt's boundary %p", got, &a2.ctx.bound)
	}
	if got := boundaryOf(lookupContext(derived, nil)); got == &a2.ctx.bound || got == nil {
		t.Errorf("a boundary below an attempt's is %p, want one of its own", got)
	}
}
