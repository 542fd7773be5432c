// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"math/rand/v2"
	"time"
)

// Backoff returns the pause before retry n (n = 1 before the second
// attempt), after the answer a it follows: its status, headers and error,
// and the pause taken before it (a.PreviousPause). Use the answer to
// honour a service's own hints (RateLimit-Reset, X-RateLimit-Reset) or to
// grow the pause from the last one (DecorrelatedJitter); ConstantBackoff
// and ExponentialBackoff ignore it. It must be safe for concurrent use.
// The pause is still at least the server's retry hint (Retry-After, and
// the headers of WithRetryHint), and the transport caps every pause by
// the operation deadline: a pause that cannot end before the deadline is
// never started. It is not asked once the deadline has passed, or leaves
// no time even for the drain of the answer's body. It is asked for the
// last attempt's retryable answer too (the deadline is judged before the
// attempt limit: a pause it would cut ends the operation
// deadline_exceeded, not max_attempts), so a Backoff is called once more
// than the retries made. A panic in it goes on to the caller (see the
// package documentation).
type Backoff func(retry int, a Answer) time.Duration

// ConstantBackoff pauses d before every retry. Without jitter, clients that
// failed together retry together; prefer ExponentialBackoff in production.
func ConstantBackoff(d time.Duration) Backoff {
	d = max(d, 0)
	return func(int, Answer) time.Duration { return d }
}

// ExponentialBackoff pauses a random duration in [0, min(max, initial·2^(n-1))]
// before retry n ("full jitter"), so clients that failed together spread
// their retries instead of arriving in lockstep. The max bounds every
// pause: a max below initial lowers initial to it.
func ExponentialBackoff(initial, max time.Duration) Backoff {
	max = clampNonNegative(max)
	initial = min(clampNonNegative(initial), max)
	return (&exponentialBackoff{initial: initial, max: max}).delay
}

type exponentialBackoff struct{ initial, max time.Duration }

func (e *exponentialBackoff) delay(retry int, _ Answer) time.Duration {
	return fullJitter(e.ceiling(retry))
}

// ceiling is the upper bound of the pause before retry n, doubling from
// initial and saturating at max: the doubling stops before it could
// overflow, for every retry number.
func (e *exponentialBackoff) ceiling(retry int) time.Duration {
	c := e.initial
	for i := 1; i < retry && c < e.max; i++ {
		if c > e.max/2 {
			return e.max
		}
		c *= 2
	}
	return min(c, e.max)
}

func fullJitter(ceiling time.Duration) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	if ceiling == 1<<63-1 {
		return time.Duration(rand.Int64())
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

// DecorrelatedJitter pauses a random duration in [base, min(cap, 3 × the
// previous pause)] before each retry, starting from base: the
// "decorrelated jitter" AWS describes in its architecture blog ("Exponential
// Backoff And Jitter"). Pauses grow from the last one actually taken, the
// answer's PreviousPause; without one (0) it draws from [base, 3·base].
// The cap bounds every pause: a cap below base lowers base to it.
func DecorrelatedJitter(base, cap time.Duration) Backoff {
	cap = clampNonNegative(cap)
	base = min(clampNonNegative(base), cap)
	return decorrelatedJitter{base: base, cap: cap}.delay
}

type decorrelatedJitter struct{ base, cap time.Duration }

func (d decorrelatedJitter) delay(_ int, a Answer) time.Duration {
	return d.next(max(a.PreviousPause, d.base))
}

func (d decorrelatedJitter) next(prev time.Duration) time.Duration {
	hi := d.cap
	if prev <= d.cap/3 {
		hi = min(3*prev, d.cap)
	}
	if hi <= d.base {
		return d.base
	}
	return d.base + fullJitter(hi-d.base)
}

func clampNonNegative(d time.Duration) time.Duration { return max(d, 0) }
