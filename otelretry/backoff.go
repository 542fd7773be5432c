package otelretry

import (
	"math/rand/v2"
	"time"
)

// Backoff chooses the pause before a retry. The transport still caps every
// pause by the operation deadline: a pause that cannot end before the
// deadline is never started.
type Backoff interface {
	// Delay returns the pause before retry n (n = 1 before the second
	// attempt). It must be safe for concurrent use.
	Delay(retry int) time.Duration
}

// BackoffFunc adapts a function to the Backoff interface.
type BackoffFunc func(retry int) time.Duration

// Delay calls f(retry).
func (f BackoffFunc) Delay(retry int) time.Duration { return f(retry) }

// ConstantBackoff pauses d before every retry. Without jitter, clients that
// failed together retry together; prefer ExponentialBackoff in production.
func ConstantBackoff(d time.Duration) Backoff { return constantBackoff(max(d, 0)) }

type constantBackoff time.Duration

func (c constantBackoff) Delay(int) time.Duration { return time.Duration(c) }

// ExponentialBackoff pauses a random duration in [0, min(max, initial·2^(n-1))]
// before retry n ("full jitter"), so clients that failed together spread
// their retries instead of arriving in lockstep.
func ExponentialBackoff(initial, max time.Duration) Backoff {
	initial = clampNonNegative(initial)
	max = clampNonNegative(max)
	if max < initial {
		max = initial
	}
	return &exponentialBackoff{initial: initial, max: max, rand: rand.Int64N}
}

type exponentialBackoff struct {
	initial, max time.Duration
	// rand returns a uniform value in [0, n); a seam for deterministic tests.
	rand func(n int64) int64
}

func (e *exponentialBackoff) Delay(retry int) time.Duration {
	return fullJitter(e.ceiling(retry), e.rand)
}

// ceiling is the upper bound of the pause before retry n, doubling from
// initial and saturating at max without overflowing.
func (e *exponentialBackoff) ceiling(retry int) time.Duration {
	c := e.initial
	for i := 1; i < retry && c < e.max; i++ {
		c *= 2
	}
	return min(c, e.max)
}

func fullJitter(ceiling time.Duration, rnd func(int64) int64) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(rnd(int64(ceiling) + 1))
}

func clampNonNegative(d time.Duration) time.Duration { return max(d, 0) }
