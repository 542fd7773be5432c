// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// A state check's resend takes a budget token of its own as it is
// admitted, and, as a hedge's, gives it back when the throttle refuses
// it: a cut write whose resend is refused cost one token (its failure),
// not two.
func TestAResendTheThrottleRefusesGivesItsTokenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int64
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			<-r.Context().Done() // cut by the attempt timeout: an unknown write
			return nil, r.Context().Err()
		})
		b := &Budget{}
		th := &Throttle{MaxRejection: 1, rand: func() float64 { return 0 }} // refuses once anything failed
		tr := NewTransport(base, WithBudget(b), WithThrottle(th), WithMaxAttempts(5),
			WithAttemptTimeout(30*time.Millisecond), WithDeadline(5*time.Second), WithStateCheckDelay(time.Millisecond),
			WithStateCheck(func(context.Context, StateCheck) (StateResult, error) {
				return StateResult{State: attrs.StateNotApplied}, nil
			}))
		req, _ := http.NewRequest(http.MethodPost, "http://api.test/orders", strings.NewReader(`{"n":1}`))
		if _, err := tr.RoundTrip(req); !errors.Is(err, ErrThrottled) || sent.Load() != 1 {
			t.Fatalf("err %v after %d requests; want the resend throttled, one request sent", err, sent.Load())
		}
		probe, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
		if got := b.Available(probe); got != 1 {
			t.Errorf("Available %d after one cut write whose resend the throttle refused; want 1 (the write's failure alone)", got)
		}
	})
}
