// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// An otelretry Transport over another (docs/layers.md, "a library's
// Transport under yours"): the inner's throttle refuses the inner
// operation's first attempt, which is never sent (Throttle's godoc: "A
// first attempt it refuses is never sent"; Error.Attempts == 0). The
// outer's base is no net/http Transport and reported nothing, but the
// inner's error, the only operation below, says nothing was sent: the
// write is known unsent, not check_state. The silent-base rule (row 15)
// made it check_state, ErrOutcomeUnknown (a reviewer's find).
func TestAnInnerThrottledFirstAttemptIsNoUnknownWrite(t *testing.T) {
	var executed atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		executed.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()

	th := &Throttle{MaxRejection: 1, rand: func() float64 { return 0 }} // refuses once anything failed
	inner := NewTransport(base, WithThrottle(th), WithoutBudget(), WithBackoff(ConstantBackoff(time.Millisecond)))

	// One failed read fills the throttle's window: from now on it refuses.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/orders", nil)
	if resp, err := inner.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	before := executed.Load()

	budget := &Budget{}
	outer := NewTransport(inner, WithBudget(budget), WithBackoff(ConstantBackoff(time.Millisecond)))
	probe, _ := http.NewRequest(http.MethodPost, srv.URL+"/orders", nil)
	available := budget.Available(probe)
	var results Results
	req, _ = http.NewRequestWithContext(WithResults(t.Context(), &results), http.MethodPost, srv.URL+"/orders", strings.NewReader(`{"sku":1}`))
	resp, err := outer.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the throttled write came back as a response")
	}
	var inErr *Error
	if !errors.As(err, &inErr) {
		t.Fatalf("no *Error: %v", err)
	}
	r, _ := results.Last()
	t.Logf("server executed %d write(s); outer: %s (%s), unknown %v, ErrThrottled %v; err: %v",
		executed.Load()-before, r.Outcome, r.Reason, r.OutcomeUnknown, errors.Is(err, ErrThrottled), err)
	if executed.Load() != before {
		t.Fatalf("the server executed the throttled write")
	}
	// docs/budget.md: each retry of it costs the outer a token, as a
	// refused dial does (the inner's refusal says the host is failing).
	if n := budget.Available(probe); n >= available {
		t.Errorf("the outer's Available %d before, %d after; want its retries charged", available, n)
	}
	// A layer above (aws-sdk-go-v2, otelretryDecides) asks RetryableError:
	// what it retried was the throttle's refusal, which another try
	// would only ask again.
	if inErr.RetryableError() {
		t.Errorf("RetryableError true for %v: the outer ran out of attempts on its inner throttle's refusals", err)
	}
	if r.OutcomeUnknown || errors.Is(err, ErrOutcomeUnknown) || r.Outcome == attrs.OutcomeCheckState {
		t.Errorf("a write the inner throttle never sent ended %s (%s), outcome unknown %v, ErrOutcomeUnknown %v: an invented unknown outcome",
			r.Outcome, r.Reason, r.OutcomeUnknown, errors.Is(err, ErrOutcomeUnknown))
	}
}
