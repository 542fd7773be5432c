// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

type stopCountingBody struct {
	io.Reader
	once   sync.Once
	closed *atomic.Int32
	panics bool
}

func (b *stopCountingBody) Close() error {
	b.once.Do(func() { b.closed.Add(1) })
	if b.panics {
		panic("close")
	}
	return nil
}

// TestRacesStoppedByPanicsAlwaysEnd: random hedged races whose
// Classifiers, Backoffs and PrepareAttemptFuncs panic or Goexit, some twice in one race,
// with slow Classifiers and callers that cancel: every RoundTrip ends, every
// response body is closed, no loan stays open, no number stays taken.
func TestRacesStoppedByPanicsAlwaysEnd(t *testing.T) {
	for seed := uint64(1); seed <= 150; seed++ {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			rng := rand.New(rand.NewPCG(seed, 11))
			roll := func(p float64) bool { mu.Lock(); defer mu.Unlock(); return rng.Float64() < p }
			dur := func(max int) time.Duration {
				mu.Lock()
				defer mu.Unlock()
				return time.Duration(rng.IntN(max)) * time.Millisecond
			}
			var made, closed atomic.Int32
			var panics, goexits atomic.Int32
			th, b := &Throttle{Window: time.Hour}, &Budget{}
			base := baseFunc(func(r *http.Request) (*http.Response, error) {
				select {
				case <-r.Context().Done():
					return nil, r.Context().Err()
				case <-time.After(dur(400)):
				}
				st := 200
				switch {
				case roll(0.4):
					st = 503
				case roll(0.1):
					st = 400
				}
				made.Add(1)
				return &http.Response{StatusCode: st, Body: &stopCountingBody{Reader: strings.NewReader("x"), closed: &closed, panics: roll(0.05)}, Request: r}, nil
			})
			hook := func() {
				switch {
				case roll(0.12):
					panic("hook")
				case roll(0.05):
					runtime.Goexit()
				}
			}
			classifier := func(a Answer) Classification {
				if roll(0.3) {
					select {
					case <-a.Request.Context().Done():
					case <-time.After(dur(600)):
					}
				}
				hook()
				return Classification{}
			}
			prep := func(req *http.Request, attempt int) error {
				time.Sleep(dur(80))
				if attempt > 1 {
					hook()
				}
				return nil
			}
			backoff := func(int, Answer) time.Duration {
				hook()
				return 10 * time.Millisecond
			}
			tr := NewTransport(base, WithThrottle(th), WithBudget(b), WithMaxAttempts(4), WithDeadline(time.Second),
				WithPrepareAttempt(prep), WithBackoff(backoff),
				WithHedging(Hedging{Delay: 60 * time.Millisecond, MaxHedges: 3, MaxShare: 1}), WithClassifier(classifier))
			var wg sync.WaitGroup
			for i := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					finished := false
					defer func() {
						if recover() != nil {
							panics.Add(1)
						} else if !finished {
							goexits.Add(1)
						}
					}()
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					if i%3 == 0 {
						tm := time.AfterFunc(dur(700), cancel)
						defer tm.Stop()
					}
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://api%d.test/x", i%2), nil)
					if resp, err := tr.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
					finished = true
				}()
			}
			wg.Wait()
			time.Sleep(10 * time.Second) // hooks still sleeping on goroutines of their own end
			synctest.Wait()
			t.Logf("seed %d: %d panics, %d goexits", seed, panics.Load(), goexits.Load())
			if made.Load() != closed.Load() {
				t.Errorf("seed %d: %d bodies made, %d closed", seed, made.Load(), closed.Load())
			}
			b.mu.Lock()
			for k, h := range b.hosts {
				if len(h.loans.open) != 0 {
					t.Errorf("seed %d: host %s has %d loans open", seed, k, len(h.loans.open))
				}
			}
			b.mu.Unlock()
		})
	}
}
