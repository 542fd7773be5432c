// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// wavesBase is a dependency whose answer is set by the test (status), each
// after delay; it counts the calls and the answers by status.
type wavesBase struct {
	status   atomic.Int64
	delay    time.Duration
	calls    atomic.Int64
	canceled atomic.Int64
	mu       sync.Mutex
	answers  map[int]int
}

func newWavesBase(delay time.Duration) *wavesBase {
	b := &wavesBase{delay: delay, answers: map[int]int{}}
	b.status.Store(http.StatusOK)
	return b
}

func (b *wavesBase) RoundTrip(r *http.Request) (*http.Response, error) {
	b.calls.Add(1)
	if b.delay > 0 {
		select {
		case <-time.After(b.delay):
		case <-r.Context().Done():
			b.canceled.Add(1)
			return nil, r.Context().Err()
		}
	}
	s := int(b.status.Load())
	b.mu.Lock()
	b.answers[s]++
	b.mu.Unlock()
	return &http.Response{StatusCode: s, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

func (b *wavesBase) answered(pred func(int) bool) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for s, c := range b.answers {
		if pred(s) {
			n += c
		}
	}
	return n
}

// waveStats is what one wave of operations came to.
type waveStats struct{ ok, throttled, other int }

// wave runs inFlight GETs of url through each of trs together (operation i
// through trs[i%len(trs)]) and waits for them all.
func wave(t *testing.T, trs []http.RoundTripper, url string, inFlight int) waveStats {
	var (
		mu sync.Mutex
		ws waveStats
		wg sync.WaitGroup
	)
	for i := range inFlight {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
			resp, err := trs[i%len(trs)].RoundTrip(req)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, ErrThrottled):
				ws.throttled++
			case err != nil:
				ws.other++
			default:
				resp.Body.Close()
				if resp.StatusCode < 300 {
					ws.ok++
				} else {
					ws.other++
				}
			}
		})
	}
	wg.Wait()
	return ws
}

// throttleCounts are the requests and accepts th holds for dep now.
func throttleCounts(th *Throttle, dep string) (requests, accepts float64) {
	return th.countsAt(dep, time.Now())
}

func quietInternal() []Option {
	return []Option{WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(metricnoop.NewMeterProvider())}
}

// The throttle's counts match what the dependency saw: over waves of 32
// and 64 operations in flight together, through a healthy stretch, an
// outage and a recovery, with retries and the default budget, its
// requests are the base's calls plus its refusals, and its accepts the
// answers other than 503 (docs/budget.md: requests are every attempt the
// application made, those the throttle refused included; accepts the
// answers other than 429 and 503).
func TestThrottleCountsMatchTheCallsOverWaves(t *testing.T) {
	for _, inFlight := range []int{32, 64} {
		for _, c := range []struct {
			transports int
			hedging    bool
		}{{1, false}, {4, false}, {1, true}, {4, true}} {
			transports := c.transports
			t.Run(fmt.Sprintf("inFlight=%d/transports=%d/hedging=%v", inFlight, transports, c.hedging), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					base := newWavesBase(20 * time.Millisecond)
					th := &Throttle{Window: 10 * time.Minute, rand: lockedRand(1, 2)}
					budget := &Budget{}
					reader := sdkmetric.NewManualReader()
					mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
					var trs []http.RoundTripper
					for range transports {
						opts := append(quietInternal(), WithMeterProvider(mp), WithThrottle(th), WithBudget(budget), WithBackoff(ConstantBackoff(10*time.Millisecond)))
						if c.hedging {
							opts = append(opts, WithHedging(Hedging{Delay: 5 * time.Millisecond, MaxShare: 1}))
						}
						trs = append(trs, NewTransport(base, opts...))
					}
					refused := 0
					for _, phase := range []struct {
						status, waves int
					}{{200, 3}, {503, 6}, {200, 6}} {
						base.status.Store(int64(phase.status))
						for range phase.waves {
							ws := wave(t, trs, "http://api.test/items", inFlight)
							refused += ws.throttled
							time.Sleep(time.Second)
						}
					}
					throttledMetric := int(counterSum(t, reader, "retry.throttled"))
					t.Logf("calls %d (%d canceled), %d operations throttled, retry.throttled %d, answers %v", base.calls.Load(), base.canceled.Load(), refused, throttledMetric, base.answers)
					refused = throttledMetric // a refused hedge counts as a request too, and does not end its operation
					requests, accepts := throttleCounts(th, "api.test")
					calls := int(base.calls.Load() - base.canceled.Load()) // a superseded attempt counts neither way
					ok := base.answered(func(s int) bool { return s != 503 && s != 429 })
					if int(requests) != calls+refused || int(accepts) != ok {
						t.Errorf("throttle counts %v requests, %v accepts; want %d (%d calls + %d refused), %d (answers other than 503)",
							requests, accepts, calls+refused, calls, refused, ok)
					}
				})
			})
		}
	}
}

// Refusals end with the outage, within about two windows, when the
// operations come in waves of 32 and 64 in flight together, with retries
// and the default budget, and with hedging too (docs/budget.md: at the
// defaults, over 30 runs, the last refusal fell in the 2nd window after the
// recovery 28 times and in the 3rd twice). A 10 s window, a 20 s outage, a
// wave a second; each wave's answers come after 20 ms.
func TestThrottleRefusalsEndWithinTwoWindowsOverWaves(t *testing.T) {
	const window = 10 * time.Second
	for _, inFlight := range []int{32, 64} {
		for _, hedging := range []bool{false, true} {
			for seed := range uint64(3) {
				t.Run(fmt.Sprintf("inFlight=%d/hedging=%v/seed=%d", inFlight, hedging, seed), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						base := newWavesBase(20 * time.Millisecond)
						th := &Throttle{Window: window, rand: lockedRand(seed, 1)}
						opts := append(quietInternal(), WithThrottle(th), WithBackoff(ConstantBackoff(10*time.Millisecond)))
						if hedging {
							opts = append(opts, WithHedging(Hedging{Delay: 5 * time.Millisecond, MaxShare: 1}))
						}
						trs := []http.RoundTripper{NewTransport(base, opts...)}
						base.status.Store(503)
						for range 20 {
							wave(t, trs, "http://api.test/items", inFlight)
							time.Sleep(time.Second)
						}
						base.status.Store(200)
						byWindow := make([]int, 5)
						for i := range 5 * int(window/time.Second) {
							ws := wave(t, trs, "http://api.test/items", inFlight)
							byWindow[i/int(window/time.Second)] += ws.throttled
							time.Sleep(time.Second)
						}
						t.Logf("refused by window after the recovery: %v", byWindow)
						if byWindow[3] != 0 || byWindow[4] != 0 {
							t.Errorf("refused in each window after the recovery: %v of %d; want none after the 3rd", byWindow, inFlight*10)
						}
					})
				})
			}
		}
	}
}

// counterSum is the sum of the Int64 counter name in reader's collection.
func counterSum(t *testing.T, reader *sdkmetric.ManualReader, name string) int64 {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range sum.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return n
}

// Several Transports on one dependency, each its own budget (the default)
// and one shared Throttle: in an outage, waves of 32 and 64 operations in
// flight together make no more than two retries per Transport (budget.md:
// two retries per client in all), hedges included; every request passes
// the one admission point (the throttle draws once per request asked).
func TestSeveralTransportsInAnOutageRetryTwiceEach(t *testing.T) {
	for _, inFlight := range []int{32, 64} {
		for _, hedging := range []bool{false, true} {
			for _, transports := range []int{1, 4, 8} {
				t.Run(fmt.Sprintf("inFlight=%d/hedging=%v/transports=%d", inFlight, hedging, transports), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						base := newWavesBase(50 * time.Millisecond)
						base.status.Store(503)
						var draws atomic.Int64
						rng := rand.New(rand.NewPCG(7, 7))
						var rmu sync.Mutex
						th := &Throttle{Window: 10 * time.Minute, rand: func() float64 {
							draws.Add(1)
							rmu.Lock()
							defer rmu.Unlock()
							return rng.Float64()
						}}
						reader := sdkmetric.NewManualReader()
						mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
						var trs []http.RoundTripper
						for range transports {
							opts := append(quietInternal(), WithMeterProvider(mp), WithThrottle(th), WithBackoff(ConstantBackoff(10*time.Millisecond)))
							if hedging {
								opts = append(opts, WithHedging(Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
							}
							trs = append(trs, NewTransport(base, opts...))
						}
						ops, throttled := 0, 0
						for range 5 {
							ws := wave(t, trs, "http://api.test/items", inFlight)
							ops += inFlight
							throttled += ws.throttled
							time.Sleep(time.Second)
						}
						refusals := int(counterSum(t, reader, "retry.throttled"))
						calls := int(base.calls.Load())
						first := ops - throttled // upper bound on first attempts sent (a refused retry's op sent its first)
						t.Logf("%d ops, %d calls, %d ops throttled, %d refusals, %d draws", ops, calls, throttled, refusals, draws.Load())
						if extra := calls - first; extra > 2*transports {
							t.Errorf("%d calls for %d operations sent, %d beyond: want at most %d (two per Transport)", calls, first, extra, 2*transports)
						}
						if int(draws.Load()) < calls+refusals {
							t.Errorf("%d throttle draws for %d calls and %d refusals: a request passed no admission", draws.Load(), calls, refusals)
						}
					})
				})
			}
		}
	}
}

// budget.md: "At the default window, 32 operations a second after a
// 4-minute outage: about 85 % of them refused in the first two minutes
// after the recovery, a third in the next two, none after about 3.5
// minutes." Here the 32 of each second are in flight together.
func TestThrottleDefaultWindowAfterAFourMinuteOutage(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := newWavesBase(20 * time.Millisecond)
				th := &Throttle{rand: lockedRand(seed, 3)}
				trs := []http.RoundTripper{NewTransport(base, append(quietInternal(), WithMaxAttempts(1), WithThrottle(th))...)}
				base.status.Store(503)
				for range 240 {
					wave(t, trs, "http://api.test/items", 32)
					time.Sleep(time.Second)
				}
				base.status.Store(200)
				var first, second, afterThreeAndAHalf, last int
				for s := range 300 {
					ws := wave(t, trs, "http://api.test/items", 32)
					switch {
					case s < 120:
						first += ws.throttled
					case s < 240:
						second += ws.throttled
					}
					if s >= 210 {
						afterThreeAndAHalf += ws.throttled
					}
					if ws.throttled > 0 {
						last = s
					}
					time.Sleep(time.Second)
				}
				t.Logf("refused: first 2 min %.1f %%, next 2 min %.1f %%, after 3.5 min %d, last refusal %d s after the recovery",
					100*float64(first)/(120*32), 100*float64(second)/(120*32), afterThreeAndAHalf, last)
				if last >= 240 || first < 3000 || second == 0 { // "about 3.5 minutes": the last seen 219 s
					t.Errorf("refused %d, %d, last at %d s: want about 85 %% in the first 2 min, some in the next, none after 4 min", first, second, last)
				}
			})
		})
	}
}

// lockedRand is a seeded draw safe for the concurrent admissions (the
// throttle draws before its lock).
func lockedRand(seed1, seed2 uint64) func() float64 {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed1, seed2))
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return rng.Float64()
	}
}
