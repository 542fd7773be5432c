// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestStateCheckResendsTakeTheirOwnTokens: the resend a state check's
// not_applied asks for takes a budget token of its own as it is admitted
// (its write was charged as it ended, down to the floor at most, and the
// host may have earned that back during the check). 32 writes cut
// together, checked after a delay during which six reads succeed, or each
// check's own lookup does, and writes cut one at a time with a lookup
// each: the requests beyond the operations' first stay within the tokens
// above half (3) plus 0.5 for every success. Before, the resends took
// nothing: all 32 were sent.
func TestStateCheckResendsTakeTheirOwnTokens(t *testing.T) {
	for _, tc := range []struct {
		name              string
		lookups, together bool
		reads             int
	}{
		{name: "together, six reads succeed during the delay", together: true, reads: 6},
		{name: "together, the checks' own lookups succeed", together: true, lookups: true},
		{name: "one at a time, the checks' own lookups succeed", lookups: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sent, successes, operations atomic.Int64
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					sent.Add(1)
					switch {
					case r.Method == http.MethodGet:
						successes.Add(1)
						return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
					case r.Header.Get("X-Attempt") == "1":
						<-r.Context().Done() // cut by the attempt timeout: an unknown write
						return nil, r.Context().Err()
					}
					return &http.Response{StatusCode: http.StatusInternalServerError, Body: http.NoBody, Request: r}, nil // neutral
				})
				var client *http.Client
				do := func(req *http.Request) {
					operations.Add(1)
					if resp, err := client.Do(req); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}
				client = &http.Client{Transport: otelretry.NewTransport(base,
					otelretry.WithAttemptHeader("X-Attempt"), otelretry.WithMaxAttempts(5),
					otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithDeadline(10*time.Second),
					otelretry.WithStateCheckDelay(300*time.Millisecond),
					otelretry.WithStateCheck(func(ctx context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
						if tc.lookups {
							req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/orders/lookup", nil)
							do(req)
						}
						return otelretry.StateResult{State: attrs.StateNotApplied}, nil
					}))}
				write := func() {
					req, _ := http.NewRequest(http.MethodPost, "http://api.test/orders", strings.NewReader(`{"n":1}`))
					do(req)
				}
				var wg sync.WaitGroup
				for range 32 {
					if !tc.together {
						write()
						continue
					}
					wg.Go(write)
				}
				time.Sleep(250 * time.Millisecond) // the writes were cut; their checks wait
				for range tc.reads {
					do(get(t, context.Background(), "http://api.test/items"))
				}
				wg.Wait()
				beyond, bound := sent.Load()-operations.Load(), 3+0.5*float64(successes.Load())
				if float64(beyond) > bound {
					t.Errorf("%d requests beyond the operations' first (%d successes); want at most %.1f", beyond, successes.Load(), bound)
				}
			})
		})
	}
}
