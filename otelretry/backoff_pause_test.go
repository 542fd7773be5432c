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
