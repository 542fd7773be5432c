// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"net/http/httptrace"
	"testing"
)

// The attempt's context answers httptrace's own key, so that its
// ClientTrace is made only when a layer below asks for it, once: this Go
// release's httptrace finds a trace by that one key. Should a release
// change that, attempts fall back to WithClientTrace, and this test says
// so.
func TestAttemptContextMakesItsClientTraceWhenAsked(t *testing.T) {
	if !answersClientTrace {
		t.Fatal("httptrace's key was not found: every attempt pays for its ClientTrace through WithClientTrace")
	}
	a := &attempt{}
	a.ctx = attemptContext{Context: context.Background(), a: a}
	if a.wire.trace.Load() != nil {
		t.Fatal("a trace before anyone asked")
	}
	got := httptrace.ContextClientTrace(&a.ctx)
	if got == nil || got != a.wire.trace.Load() || got.GetConn == nil || got.GotConn == nil || got.WroteHeaders == nil || got.WroteRequest == nil {
		t.Fatalf("ContextClientTrace = %+v, want the wire's trace with its four hooks", got)
	}
	if again := httptrace.ContextClientTrace(&a.ctx); again != got {
		t.Error("a second ask made another trace")
	}
}
