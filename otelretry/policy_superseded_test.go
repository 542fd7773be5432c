// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A race no attempt won records its other attempts operation_ended, even
// one whose answer came after the race's end: here the caller cancels a
// race no attempt answered; the first attempt records canceled and the
// operation ends canceled; the hedge, in flight then, gets its 503 a moment
// after (a base that had it in hand). It lost to no other attempt.
func TestAHedgeAnsweredAfterTheCallerCanceledIsNoLoserToAnotherAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		time.AfterFunc(25*time.Millisecond, cancel)
		var calls atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			first := calls.Add(1) == 1
			<-r.Context().Done()
			if first {
				return nil, r.Context().Err()
			}
			time.Sleep(time.Millisecond) // its answer, already on its way, comes a moment after
			return &http.Response{StatusCode: 503, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
		})
		h := newHarness(t, nil)
		h.transprt = otelretry.NewTransport(base, otelretry.WithTracerProvider(h.tp), otelretry.WithMeterProvider(h.mp),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
		if _, _, err := roundTrip(t, h, get(t, ctx, "http://api.test/items")); err == nil {
			t.Fatal("the race ended with no error")
		}
		for _, a := range hedgeAttempts(t, h) {
			t.Logf("attempt %d: decision=%s reason=%s status=%d class=%s", a.number, a.decision, a.reason, a.status, a.class)
			if a.decision == "superseded" && a.reason != string(attrs.ReasonOperationEnded) {
				t.Errorf("attempt %d records superseded, reason %s: no other attempt answered, the caller's cancel ended the operation; want operation_ended",
					a.number, a.reason)
			}
		}
	})
}
