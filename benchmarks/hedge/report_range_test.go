// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"testing"
)

// p99.9's min-max is the lowest and highest of the repetitions, in
// whatever order they ran, NaN ones left out.
func TestP999RangeIsTheLowestAndHighest(t *testing.T) {
	fs := []figures{{P999Ms: 5}, {P999Ms: num(math.NaN())}, {P999Ms: 3}, {P999Ms: 7}, {P999Ms: 4}}
	lo, hi := p999Range(fs)
	if lo != 3 || hi != 7 {
		t.Errorf("p999Range = %v-%v, want 3-7", lo, hi)
	}
}
