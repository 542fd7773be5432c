// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// 48 hedged GETs of 8 new hosts in flight together over a full table of
// idle hosts at the floor, with fast and slow hedge preparations: the
// table holds its invariants, nothing is left kept aside, every idle host
// is either back at the floor (its place given back) or forgotten for a
// host that kept its place (fresh), and each new host's hedges stay within
// a fresh host's 2 tokens above half.
func TestDisplacedHostsUnderHedgesInFlightTogether(t *testing.T) {
	for _, maxHosts := range []int{1, 2, 3} {
		for _, slowPrep := range []bool{false, true} {
			t.Run(fmt.Sprintf("max%d_slow%t", maxHosts, slowPrep), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var calls sync.Map
					var fail atomic.Bool
					base := baseFunc(func(r *http.Request) (*http.Response, error) {
						c, _ := calls.LoadOrStore(r.URL.Host, new(atomic.Int64))
						c.(*atomic.Int64).Add(1)
						status := http.StatusOK
						if fail.Load() {
							status = http.StatusServiceUnavailable
						} else {
							select {
							case <-time.After(30 * time.Millisecond):
							case <-r.Context().Done():
								return nil, r.Context().Err()
							}
						}
						return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
					})
					prepare := func(r *http.Request, attempt int) error {
						if slowPrep && attempt == 2 {
							time.Sleep(40 * time.Millisecond)
						}
						return nil
					}
					b := &Budget{MaxHosts: maxHosts, IdleEviction: time.Minute}
					rt := NewTransport(base, WithBudget(b), WithPrepareAttempt(prepare),
						WithBackoff(ConstantBackoff(time.Millisecond)),
						WithHedging(Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
					do := func(host string) {
						req, _ := http.NewRequest(http.MethodGet, "http://"+host+"/", nil)
						if resp, err := rt.RoundTrip(req); err == nil {
							resp.Body.Close()
						}
					}
					fail.Store(true)
					for i := range maxHosts {
						do(fmt.Sprintf("idle%d.test", i))
					}
					checkBudget(t, b)
					fail.Store(false)
					time.Sleep(2 * time.Minute)
					var wg sync.WaitGroup
					for op := range 48 {
						wg.Go(func() { do(fmt.Sprintf("new%d.test", op%8)) })
					}
					wg.Wait()
					synctest.Wait()
					checkBudget(t, b)
					b.mu.Lock()
					left := len(b.displaced)
					kept := len(b.hosts)
					b.mu.Unlock()
					if left != 0 {
						t.Errorf("%d hosts left aside", left)
					}
					if kept > maxHosts {
						t.Errorf("%d hosts kept, limit %d", kept, maxHosts)
					}
					for i := range maxHosts {
						if n := b.Available(budgetRequest(fmt.Sprintf("idle%d.test", i))); n != 0 && n != 2 {
							t.Errorf("idle%d.test: Available %d, want 0 (at the floor, its place back) or 2 (forgotten, fresh)", i, n)
						}
					}
					time.Sleep(time.Second) // hedge preparations left running end
					calls.Range(func(k, v any) bool {
						if n := v.(*atomic.Int64).Load(); strings.HasPrefix(k.(string), "new") && n > 6+2 {
							t.Errorf("%s: %d calls for 6 operations, want at most 8", k, n)
						}
						return true
					})
				})
			})
		}
	}
}
