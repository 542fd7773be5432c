// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"math"
	"testing"
	"time"
)

// The exponential ceiling doubles from initial and saturates at max for
// every retry number, however large: it never overflows to zero or below.
func TestExponentialBackoffSaturates(t *testing.T) {
	for _, tc := range []struct{ initial, max time.Duration }{
		{time.Second, math.MaxInt64},
		{100 * time.Millisecond, 2 * time.Second},
		{1, math.MaxInt64},
		{math.MaxInt64 / 3, math.MaxInt64},
	} {
		e := exponentialBackoff{initial: tc.initial, max: tc.max}
		prev := time.Duration(0)
		for n := 1; n <= 200; n++ {
			c := e.ceiling(n)
			if c < prev || c > tc.max || c <= 0 {
				t.Fatalf("ExponentialBackoff(%v, %v): ceiling(%d) = %v after %v", tc.initial, tc.max, n, c, prev)
			}
			prev = c
		}
		if prev != tc.max {
			t.Errorf("ExponentialBackoff(%v, %v): ceiling(200) = %v, want the max", tc.initial, tc.max, prev)
		}
	}
	// The case: a retry far out is paused, not skipped.
	e := ExponentialBackoff(time.Second, math.MaxInt64)
	zero := 0
	for range 100 {
		if e(40, Answer{}) == 0 {
			zero++
		}
	}
	if zero > 1 {
		t.Errorf("ExponentialBackoff(1s, MaxInt64) for retry 40 was 0 in %d of 100 draws", zero)
	}
}
