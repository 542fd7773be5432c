// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
)

// A case's printed median is the median over runs of each run's median,
// as the command's doc says ("the values one run gives a case, with
// -count, count as that run's median"), not the median of every value
// pooled (a reviewer's find: a run with -count=5 outvoted two runs with one
// value each).
func TestACasesMedianCountsEachRunOnce(t *testing.T) {
	var raw strings.Builder
	// Run 1: -count=5, bare measured 10 ns five times.
	raw.WriteString(runHeader)
	for range 5 {
		raw.WriteString(rawLine("bare", 10))
	}
	// Runs 2 and 3: one value each, 1000 ns.
	for range 2 {
		raw.WriteString(runHeader)
		raw.WriteString(rawLine("bare", 1000))
	}
	res := &results{s: samples{}, cases: map[string][]string{}}
	if err := res.read(strings.NewReader(raw.String())); err != nil {
		t.Fatal(err)
	}
	got, ok := res.med("RoundTrip", "bare", "ns/op")
	// Per-run medians are 10, 1000, 1000: their median is 1000.
	if !ok || got != 1000 {
		t.Fatalf("median of bare over 3 runs (per-run medians 10, 1000, 1000) = %v (ok=%v), want 1000: the five values of run 1 were pooled as five runs", got, ok)
	}
}
