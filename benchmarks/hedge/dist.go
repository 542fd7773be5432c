// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"math/rand/v2"
	"time"
)

// serviceDist is a service-time distribution with a long tail: a fast
// answer takes fastMin plus an exponential of mean fastMean; with
// probability stallProb the request stalls instead, stallFactor times a
// fast draw. Its quantiles are known exactly, so the hedge delay of the
// fixed-delay configurations is the true p95, not an estimate.
type serviceDist struct {
	fastMin, fastMean time.Duration
	stallProb         float64 // 0: never stalls; 1: always (the brownout)
	stallFactor       float64
}

// draw returns one service time and whether it stalled.
func (d serviceDist) draw(rng *rand.Rand) (time.Duration, bool) {
	stalled := rng.Float64() < d.stallProb
	fast := float64(d.fastMin) + rng.ExpFloat64()*float64(d.fastMean)
	if stalled {
		return time.Duration(fast * d.stallFactor), true
	}
	return time.Duration(fast), false
}

// fastCDF is P(fast draw ≤ t), t in nanoseconds.
func (d serviceDist) fastCDF(t float64) float64 {
	if t < float64(d.fastMin) {
		return 0
	}
	return -math.Expm1(-(t - float64(d.fastMin)) / float64(d.fastMean))
}

// cdf is P(service time ≤ t).
func (d serviceDist) cdf(t time.Duration) float64 {
	x := float64(t)
	return (1-d.stallProb)*d.fastCDF(x) + d.stallProb*d.fastCDF(x/d.stallFactor)
}

// quantile returns the smallest t (to the nanosecond) with cdf(t) ≥ q,
// 0 < q < 1, by bisection: the mixture has no closed-form inverse.
func (d serviceDist) quantile(q float64) time.Duration {
	lo, hi := time.Duration(0), d.fastMin+time.Duration(1)
	for d.cdf(hi) < q {
		hi *= 2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if d.cdf(mid) >= q {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// stalled returns the distribution with every request stalled: the
// brownout's.
func (d serviceDist) stalled() serviceDist {
	d.stallProb = 1
	return d
}

// requestRand is the source of one request's service time: request k
// (1 for the first to reach the server) of operation op, in the
// repetition seeded with seed. The first request of an operation draws the
// same time under every configuration; each further one draws afresh.
func requestRand(seed uint64, op, k int) *rand.Rand {
	// splitmix64 is a bijection, so distinct (op, k) give distinct states.
	return rand.New(rand.NewPCG(splitmix64(seed^splitmix64(uint64(op))), splitmix64(uint64(k))))
}

// splitmix64 is Steele, Lea and Flood's finalizer, used to spread nearby
// integers over the whole seed space.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
