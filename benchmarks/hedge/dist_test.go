// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var tailDist = defaultOptions().service

// msf is a float number of milliseconds as a Duration, rounded to the
// nanosecond.
func msf(x float64) time.Duration { return time.Duration(math.Round(x * float64(time.Millisecond))) }

// Below the stalls' least value (200 ms), P(T ≤ t) = 0.993·(1 - e^-(t-2ms)/1ms),
// so the q-quantile is 2 ms + ln(0.993/(0.993-q)) ms; above the fast
// answers' tail, P(T ≤ t) = 0.993 + 0.007·(1 - e^-(t/100-2ms)/1ms), so the
// p99.9 is 100·(2 + ln 7) ms. The brownout's p50 is 100·(2 + ln 2) ms.
func TestQuantilesAreTheDistributionsOwn(t *testing.T) {
	for _, c := range []struct {
		name string
		d    serviceDist
		q    float64
		want time.Duration
	}{
		{"p50", tailDist, 0.50, msf(2 + math.Log(0.993/0.493))},
		{"p95", tailDist, 0.95, msf(2 + math.Log(0.993/0.043))},
		{"p99", tailDist, 0.99, msf(2 + math.Log(0.993/0.003))},
		{"p99.9", tailDist, 0.999, msf(100 * (2 + math.Log(7)))},
		{"brownout p50", tailDist.stalled(), 0.50, msf(100 * (2 + math.Log(2)))},
	} {
		got := c.d.quantile(c.q)
		if diff := got - c.want; diff < -2 || diff > 2 {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
		if c.d.cdf(got) < c.q || c.d.cdf(got-1) >= c.q {
			t.Errorf("%s: %v is not the least time with cdf ≥ %v", c.name, got, c.q)
		}
	}
	if got := tailDist.quantile(0.95); got != 5139531 {
		t.Errorf("the hedge delay printed by the benchmark: got %d ns, want 5139531", got)
	}
}

func TestDrawsFollowTheDistribution(t *testing.T) {
	const n = 200_000
	rng := rand.New(rand.NewPCG(7, 7))
	draws := make([]time.Duration, n)
	stalls := 0
	for i := range draws {
		d, stalled := tailDist.draw(rng)
		if stalled {
			stalls++
			if d < 200*time.Millisecond {
				t.Fatalf("a stall of %v, under 100 × the 2 ms floor", d)
			}
		} else if d < 2*time.Millisecond || d >= 200*time.Millisecond {
			t.Fatalf("a fast answer of %v", d)
		}
		draws[i] = d
	}
	// 0.7 % of 200,000: σ ≈ 37, the bounds are 4.5σ.
	if stalls < 1232 || stalls > 1568 {
		t.Errorf("%d stalls in %d draws, want about 1400", stalls, n)
	}
	slices.Sort(draws)
	for _, c := range []struct {
		ppm int
		q   float64
	}{{ppmP50, 0.5}, {950_000, 0.95}, {ppmP999, 0.999}} {
		got, want := percentile(draws, c.ppm), tailDist.quantile(c.q)
		if math.Abs(float64(got-want)) > 0.03*float64(want) {
			t.Errorf("empirical q%v = %v, the distribution's %v", c.q, got, want)
		}
	}
	brown := tailDist.stalled()
	for range 1000 {
		if d, stalled := brown.draw(rng); !stalled || d < 200*time.Millisecond {
			t.Fatalf("a brownout draw of %v (stalled %v)", d, stalled)
		}
	}
}

func TestRequestRandIsOneSourcePerRequest(t *testing.T) {
	first := func(seed uint64, op, k int) uint64 { return requestRand(seed, op, k).Uint64() }
	if first(1, 5, 1) != first(1, 5, 1) {
		t.Fatal("the same request draws differently")
	}
	base := first(1, 5, 1)
	for _, other := range []uint64{first(1, 5, 2), first(1, 6, 1), first(2, 5, 1)} {
		if other == base {
			t.Fatal("another request, operation or seed draws the same")
		}
	}
	// A hedge's draw is independent of its operation's first: over 50,000
	// operations the correlation of their uniforms is within noise
	// (σ ≈ 0.0045).
	const n = 50_000
	var sx, sy, sxy, sxx, syy float64
	for op := range n {
		x, y := requestRand(1, op, 1).Float64(), requestRand(1, op, 2).Float64()
		sx, sy, sxy, sxx, syy = sx+x, sy+y, sxy+x*y, sxx+x*x, syy+y*y
	}
	cov := sxy/n - sx/n*sy/n
	corr := cov / math.Sqrt((sxx/n-sx/n*sx/n)*(syy/n-sy/n*sy/n))
	if math.Abs(corr) > 0.02 {
		t.Errorf("first and second requests' draws correlate: %v", corr)
	}
}
