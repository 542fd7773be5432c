// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
)

// The per-case table's header says its values are "medians of N runs";
// a case whose sub-benchmark ran in one run of five is printed under that
// header as if it were a median of five (and its ratio to the other
// cases, one run against five, beside them), with nothing on its row
// saying otherwise (a reviewer's find); such a row says of how many runs.
func TestTheCaseTablesRunCountHoldsForEveryRow(t *testing.T) {
	var raw strings.Builder
	for i := range 5 {
		raw.WriteString(runHeader)
		raw.WriteString(rawLine("bare", 100))
		if i == 0 {
			raw.WriteString(rawLine("otelretry-noop", 500))
		}
	}
	out := runRatios(t, raw.String())
	if !strings.Contains(out, "medians of 5 runs") {
		t.Fatalf("setup: no header of 5 runs in:\n%s", out)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "otelretry-noop ") && !strings.Contains(l, "(1 of 5 runs)") {
			t.Errorf("otelretry-noop measured in 1 run of 5, printed under \"medians of 5 runs\" as %q:\n%s", l, out)
		}
	}
}

// A run whose value is no number (go test prints NaN for a reported
// metric of 0/0) is no measurement: paired.Ratio refuses it, but the
// table's median takes it as a run (sorted first) and prints the median
// of the other values as the median of all the runs (a reviewer's find);
// it is left out, as a run lacking the unit.
func TestANaNRunIsNotAMedianValue(t *testing.T) {
	var raw strings.Builder
	for _, v := range []string{"NaN", "100", "300"} {
		raw.WriteString(runHeader)
		fmt.Fprintf(&raw, "BenchmarkRoundTrip/case=bare-2 \t 100000 \t %s ns/op \t 1000 B/op \t 10 allocs/op\n", v)
	}
	res := &results{s: samples{}, cases: map[string][]string{}}
	if err := res.read(strings.NewReader(raw.String())); err != nil {
		t.Fatal(err)
	}
	got, ok := res.med("RoundTrip", "bare", "ns/op")
	if !ok || got != 200 {
		t.Errorf("runs NaN, 100, 300: median %v (ok=%v): the NaN counted as the lowest run", got, ok)
	}
}

// A row's "(k of N runs)" counted its ns/op alone: a NaN left out of its
// allocs/op (or B/op) column made that median of fewer runs with nothing
// on the row saying so (stop 83's left item). The row counts the fewest
// runs of its columns.
func TestARowSaysWhenAnyColumnIsOfFewerRuns(t *testing.T) {
	var raw strings.Builder
	for i := range 4 {
		allocs := "10"
		if i > 0 {
			allocs = "NaN"
		}
		raw.WriteString(runHeader)
		raw.WriteString(rawLine("bare", 100))
		fmt.Fprintf(&raw, "BenchmarkRoundTrip/case=otelretry-noop-2 \t 100000 \t 500 ns/op \t 1000 B/op \t %s allocs/op\n", allocs)
	}
	out := runRatios(t, raw.String())
	if !strings.Contains(out, "medians of 4 runs") {
		t.Fatalf("setup: no header of 4 runs in:\n%s", out)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "otelretry-noop ") && !strings.Contains(l, "(1 of 4 runs)") {
			t.Errorf("otelretry-noop's allocs/op measured in 1 run of 4, its row %q says nothing of it:\n%s", l, out)
		}
	}
}
