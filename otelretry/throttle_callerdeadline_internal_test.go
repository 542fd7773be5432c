// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// docs/budget.md: the caller's cancellation counts neither way in the
// throttle, but an attempt the caller's own deadline cut is a timeout:
// the dependency held the request past the caller's time, and it counts as
// a request not accepted, as one the attempt timeout cut does.
func TestTheCallersDeadlineCountsAsARequestNotAccepted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := &Throttle{rand: func() float64 { return 1 }} // never refuses: counts alone
		base := newWavesBase(time.Hour)                    // holds every request until its context ends
		rt := NewTransport(base, append(quietInternal(), WithThrottle(th), WithoutBudget())...)
		const url = "http://held.test/v1"

		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if _, err := rt.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the caller's deadline", err)
		}
		if r, a := throttleCounts(th, "held.test"); r != 1 || a != 0 {
			t.Errorf("after the caller's deadline: %v requests, %v accepts; want 1, 0", r, a)
		}

		ctx, cancelNow := context.WithCancel(t.Context())
		defer cancelNow()
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		go func() { time.Sleep(100 * time.Millisecond); cancelNow() }()
		if _, err := rt.RoundTrip(req); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want the caller's cancel", err)
		}
		if r, a := throttleCounts(th, "held.test"); r != 1 || a != 0 {
			t.Errorf("after the caller's cancel: %v requests, %v accepts; want still 1, 0", r, a)
		}
	})
}
