// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// A dependency that holds what it is sent (an overload) while reads are
// hedged: every attempt, the hedge included, times out, none is answered
// and none wins. The throttle counts every attempt once it ends
// (answered, failed or timed out); only the caller's cancellation and an
// attempt superseded by its hedge count neither way (Throttle's godoc,
// budget.md). So each timed-out attempt counts as a request not accepted,
// whether the attempt timeout or the operation's deadline cut it.
func TestThrottleCountsEveryHeldHedgedAttempt(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"attempt timeout cuts", []Option{WithDeadline(30 * time.Second), WithAttemptTimeout(time.Second)}},
		{"deadline cuts", []Option{WithDeadline(time.Second)}}, // the attempt timeout at its default, 10 s
		{"attempt timeout cuts, without budget", []Option{WithDeadline(30 * time.Second), WithAttemptTimeout(time.Second), WithoutBudget()}},
		{"deadline cuts, without budget", []Option{WithDeadline(time.Second), WithoutBudget()}},
	} {
		for _, inFlight := range []int{32, 64} {
			t.Run(fmt.Sprintf("%s/inFlight=%d", tc.name, inFlight), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var calls atomic.Int64
					base := baseFunc(func(r *http.Request) (*http.Response, error) {
						calls.Add(1)
						<-r.Context().Done() // holds it
						return nil, r.Context().Err()
					})
					th := &Throttle{Window: 10 * time.Minute, MaxRejection: 1, rand: func() float64 { return 1 }} // never refuses
					opts := append(quietInternal(), WithThrottle(th), WithMaxAttempts(2),
						WithHedging(Hedging{Delay: 100 * time.Millisecond, MaxShare: 1}))
					tr := NewTransport(base, append(opts, tc.opts...)...)
					ws := wave(t, []http.RoundTripper{tr}, "http://held.test/items", inFlight)
					requests, accepts := throttleCounts(th, "held.test")
					if int(requests) != int(calls.Load()) || accepts != 0 {
						t.Errorf("%d operations (%d ok), %d attempts sent, all timed out: the throttle counts %v requests, %v accepts; want %d, 0",
							inFlight, ws.ok, calls.Load(), requests, accepts, calls.Load())
					}
				})
			})
		}
	}
}

// The consequence, in a brownout: half the operations are answered at
// once, half are held by the dependency until their 1 s deadline cuts
// them, each with its hedge. Per wave of 32: 16 accepts for 48 requests
// sent, so the rule, max(0, (requests − 2·accepts)/(requests + 1)), asks
// for about a third refused from the second wave on. The throttle, seeing
// only one of each held operation's two attempts, counts 32 requests for
// 16 accepts, and refuses nothing.
func TestThrottleRefusesInABrownoutWhereHedgesAreHeld(t *testing.T) {
	for _, budget := range []bool{false} { // the default budget admits few hedges (20 of 160 here)
		t.Run(fmt.Sprintf("budget=%v", budget), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int64
				base := baseFunc(func(r *http.Request) (*http.Response, error) {
					calls.Add(1)
					if r.URL.Path == "/slow" {
						<-r.Context().Done() // holds it
						return nil, r.Context().Err()
					}
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				th := &Throttle{Window: 10 * time.Minute, rand: lockedRand(5, 5)}
				reader := sdkmetric.NewManualReader()
				opts := append(quietInternal(), WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
					WithThrottle(th), WithDeadline(time.Second), WithMaxAttempts(2),
					WithHedging(Hedging{Delay: 100 * time.Millisecond, MaxShare: 1}))
				if !budget {
					opts = append(opts, WithoutBudget())
				}
				tr := NewTransport(base, opts...)
				refused := 0
				for range 10 {
					var mu sync.Mutex
					var wg sync.WaitGroup
					for i := range 32 {
						wg.Go(func() {
							path := "/fast"
							if i%2 == 1 {
								path = "/slow"
							}
							req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://brown.test"+path, nil)
							resp, err := tr.RoundTrip(req)
							if err == nil {
								resp.Body.Close()
							}
							if errors.Is(err, ErrThrottled) {
								mu.Lock()
								refused++
								mu.Unlock()
							}
						})
					}
					wg.Wait()
					time.Sleep(time.Second)
				}
				requests, accepts := throttleCounts(th, "brown.test")
				refusals := int(counterSum(t, reader, "retry.throttled")) // operations and hedges it refused
				t.Logf("%d calls sent, %d operations and %d requests refused; the throttle counts %v requests, %v accepts",
					calls.Load(), refused, refusals, requests, accepts)
				if int(requests) != int(calls.Load())+refusals {
					t.Errorf("the throttle counts %v requests for %d sent and %d refused", requests, calls.Load(), refusals)
				}
				if refused == 0 {
					t.Errorf("320 operations, half held to their deadline with a hedge each: none refused")
				}
			})
		})
	}
}
