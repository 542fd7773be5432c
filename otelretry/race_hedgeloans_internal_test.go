// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// 72 hedged races in flight
// together on three Transports sharing one Budget whose table holds one or
// two hosts (IdleEviction a minute, so hosts are forgotten while others
// lend), with panicking Classifiers and PrepareAttemptFuncs, callers that
// cancel, deadlines that cut hedges, and Retry-After holds arriving
// meanwhile. Afterwards no loan stays open, the table keeps its
// invariants, and once every host answered enough successes it is fresh
// again (Available 2).
func TestHedgeLoansAllSettleUnderStress(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		maxHosts := 1 + int(seed%2)
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			rng := rand.New(rand.NewPCG(seed, 77))
			roll := func(p float64) bool { mu.Lock(); defer mu.Unlock(); return rng.Float64() < p }
			dur := func(max int) time.Duration {
				mu.Lock()
				defer mu.Unlock()
				return time.Duration(rng.IntN(max)) * time.Millisecond
			}
			var healthy atomic.Bool
			var panics atomic.Int32
			b := &Budget{MaxHosts: maxHosts, IdleEviction: time.Minute}
			base := baseFunc(func(r *http.Request) (*http.Response, error) {
				if !healthy.Load() {
					select {
					case <-r.Context().Done():
						return nil, r.Context().Err()
					case <-time.After(dur(300)):
					}
				}
				st, h := 200, http.Header{}
				if !healthy.Load() {
					switch {
					case roll(0.35):
						st = 503
						if roll(0.3) {
							h.Set("Retry-After", "1")
						}
					case roll(0.1):
						st = 429
					}
				}
				return &http.Response{StatusCode: st, Header: h, Body: http.NoBody, Request: r}, nil
			})
			classifier := func(a Answer) Classification {
				if !healthy.Load() && roll(0.06) {
					panic("classifier")
				}
				return Classification{}
			}
			prep := func(req *http.Request, attempt int) error {
				if !healthy.Load() {
					time.Sleep(dur(40))
					if attempt > 1 && roll(0.08) {
						panic("prep")
					}
				}
				return nil
			}
			var trs []*Transport
			for i := range 3 {
				trs = append(trs, NewTransport(base, WithBudget(b), WithMaxAttempts(4),
					WithDeadline(time.Duration(300+200*i)*time.Millisecond),
					WithPrepareAttempt(prep), WithClassifier(classifier),
					WithBackoff(func(int, Answer) time.Duration { return 5 * time.Millisecond }),
					WithHedging(Hedging{Delay: 30 * time.Millisecond, MaxHedges: 3, MaxShare: 1})))
			}
			call := func(tr *Transport, host string, cancelAfter time.Duration) {
				defer func() {
					if recover() != nil {
						panics.Add(1)
					}
				}()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if cancelAfter > 0 {
					tm := time.AfterFunc(cancelAfter, cancel)
					defer tm.Stop()
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/x", nil)
				if resp, err := tr.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
			}
			hosts := []string{"a.test", "b.test", "c.test", "d.test"}
			maxOpen, lendingHosts := 0, 0
			stopSampling := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				for {
					select {
					case <-stopSampling:
						return
					case <-time.After(5 * time.Millisecond):
					}
					b.mu.Lock()
					n, lh := 0, 0
					for _, h := range b.hosts {
						n += len(h.loans.open)
						if len(h.loans.open) > 0 {
							lh++
						}
					}
					b.mu.Unlock()
					maxOpen, lendingHosts = max(maxOpen, n), max(lendingHosts, lh)
				}
			}()
			for wave := range 4 {
				var wg sync.WaitGroup
				for i := range 72 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						time.Sleep(dur(50))
						var c time.Duration
						if i%4 == 0 {
							c = dur(400) + time.Millisecond
						}
						call(trs[i%3], hosts[(i+wave)%len(hosts)], c)
					}()
				}
				// Hosts idle for the period while these races run: a new
				// host may find the table full of ones that lend.
				wg.Wait()
				time.Sleep(61 * time.Second)
			}
			close(stopSampling)
			<-sampled
			synctest.Wait()
			b.mu.Lock()
			for k, h := range b.hosts {
				if len(h.loans.open) != 0 {
					t.Errorf("seed %d: host %s has %d loans open", seed, k, len(h.loans.open))
				}
			}
			b.mu.Unlock()
			checkBudget(t, b)
			// Healthy now: enough successes bring every host back to fresh.
			healthy.Store(true)
			for range 2 {
				for _, h := range hosts {
					for range 13 {
						call(trs[0], h, 0)
					}
				}
				time.Sleep(61 * time.Second)
			}
			for _, h := range hosts {
				if got := b.Available(budgetRequest(h)); got != 2 {
					b.mu.Lock()
					e, kept := b.hosts[h]
					b.mu.Unlock()
					t.Errorf("seed %d (MaxHosts %d): %s Available %d after recovery, want 2 (kept %v, %+v)", seed, maxHosts, h, got, kept, e)
				}
			}
			checkBudget(t, b)
			t.Logf("seed %d (MaxHosts %d): %d panics, at most %d loans open at once on %d hosts", seed, maxHosts, panics.Load(), maxOpen, lendingHosts)
		})
	}
}
