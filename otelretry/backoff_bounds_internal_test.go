// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
	"time"
)

// ExponentialBackoff's ceiling before retry n is min(max, initial·2^(n-1)):
// initial before the first retry, doubled before each one after, max once
// the doubling would pass it (an odd max included).
func TestExponentialBackoffCeilingDoublesFromInitial(t *testing.T) {
	for _, tc := range []struct {
		initial, max time.Duration
		want         []time.Duration // ceilings before retries 1, 2, ...
	}{
		{100 * time.Millisecond, 10 * time.Second, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}},
		{1, 3, []time.Duration{1, 2, 3, 3}},
		{3, 7, []time.Duration{3, 6, 7, 7}},
	} {
		e := exponentialBackoff{initial: tc.initial, max: tc.max}
		for i, want := range tc.want {
			if got := e.ceiling(i + 1); got != want {
				t.Errorf("ExponentialBackoff(%v, %v): ceiling before retry %d = %v, want %v", tc.initial, tc.max, i+1, got, want)
			}
		}
	}
}

// The full jitter's range [0, ceiling] includes its ceiling: a ceiling of
// 1ns draws 1ns about one time in two. (Missing it 400 times in a row has
// probability 2^-400.)
func TestExponentialBackoffReachesItsCeiling(t *testing.T) {
	b := ExponentialBackoff(1, 1)
	seen := map[time.Duration]int{}
	for range 400 {
		seen[b(1, Answer{})]++
	}
	if seen[1] == 0 || seen[0] == 0 || len(seen) != 2 {
		t.Errorf("ExponentialBackoff(1ns, 1ns) drew %v, want both 0 and 1ns, nothing else", seen)
	}
}

// Without a previous pause, DecorrelatedJitter draws from [base, 3·base],
// not base alone. (Every one of 200 draws from 2e8+1 values landing on
// base has probability far below 1e-1000.)
func TestDecorrelatedJitterWithoutAPreviousPauseDrawsUpToThreeBases(t *testing.T) {
	const base = 100 * time.Millisecond
	b := DecorrelatedJitter(base, 10*time.Second)
	above := 0
	for range 200 {
		d := b(1, Answer{})
		if d < base || d > 3*base {
			t.Fatalf("DecorrelatedJitter(%v, 10s) with no previous pause: %v, want within [%v, %v]", base, d, base, 3*base)
		}
		if d > base {
			above++
		}
	}
	if above == 0 {
		t.Errorf("DecorrelatedJitter(%v, 10s) with no previous pause: every draw was %v, want draws up to %v", base, base, 3*base)
	}
}
