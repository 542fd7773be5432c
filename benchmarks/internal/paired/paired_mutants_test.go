// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package paired

import "testing"

// A run whose x is 0 is a measurement (Ratio's doc: every x a finite
// number at or above zero): its ratio is 0, not "no ratio".
func TestARunWhoseXIsZeroHasARatio(t *testing.T) {
	r, ok := Ratio([]float64{0, 0, 0}, []float64{1, 2, 3})
	if !ok || r != 0 {
		t.Fatalf("Ratio of zeros = %v, %v; want 0, true", r, ok)
	}
	if _, _, ok := Interval([]float64{0, 0, 0, 0, 0}, []float64{1, 1, 1, 1, 1}); !ok {
		t.Fatal("Interval refuses runs whose x is 0")
	}
}
