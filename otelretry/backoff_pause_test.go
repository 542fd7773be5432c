// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/time-and-bodies.md: a caller that cancels during the pause before a
// retry ends the operation canceled (caller) with an *Error and no
// response: the answer that asked for the retry was let go of when the
// pause began (row 13 returns the answer only when the cancel came before
// the decision).
func TestACancelDuringThePauseReturnsNoAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody, Request: r}, nil
		})
		tr := otelretry.NewTransport(base, otelretry.WithBackoff(otelretry.ConstantBackoff(200*time.Millisecond)))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel) // during the pause after the 503
		resp, err := tr.RoundTrip(get(t, ctx, "http://api.test/x"))
		var oe *otelretry.Error
		if resp != nil || !errors.As(err, &oe) || !errors.Is(err, context.Canceled) ||
			oe.Outcome != attrs.OutcomeCanceled || oe.Reason != attrs.ReasonCaller {
			t.Fatalf("RoundTrip = %v, %v; want no response, a canceled (caller) *Error", resp, err)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("%d calls; want 1 (no retry)", n)
		}
	})
}

// docs/time-and-bodies.md: the pause counts from the answer, so a
// Classifier that takes longer than the chosen pause leaves no wait after
// it (the next attempt starts once it returned), and retry.backoff_ms is
// the chosen pause (a reviewer's reading, made a test).
func TestHooksThatOutlastThePauseLeaveNoWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls []time.Time
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls = append(calls, time.Now())
			status := 503
			if len(calls) == 2 {
				status = 200
			}
			return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		h := newHarness(t, nil)
		tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(h.tp), otelretry.WithoutBudget(),
			otelretry.WithBackoff(otelretry.ConstantBackoff(50*time.Millisecond)),
			otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification {
				time.Sleep(200 * time.Millisecond) // a lookup longer than the pause
				return otelretry.Classification{}
			}))
		resp, err := tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(calls) != 2 {
			t.Fatalf("%d calls, want 2", len(calls))
		}
		if gap := calls[1].Sub(calls[0]); gap != 200*time.Millisecond {
			t.Errorf("the retry started %v after the answer, want when the Classifier returned (200ms)", gap)
		}
		if evs := h.events(t); len(evs) != 2 || evs[0].BackoffMs != 50 {
			t.Errorf("attempt events %+v, want the first's retry.backoff_ms the chosen 50", evs)
		}
	})
}
