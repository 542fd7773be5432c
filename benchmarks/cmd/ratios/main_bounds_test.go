// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
)

// lineWith is the first printed line that contains s.
func lineWith(t *testing.T, out, s string) string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			return sc.Text()
		}
	}
	t.Fatalf("no line with %q in:\n%s", s, out)
	return ""
}

// The targets' bounds are the ones their labels (and compare.sh's doc)
// state: noop allocs/op strictly below retryablehttp-deadline's (equal is
// a MISS), noop ns/op at most 0.8x it (0.82x in every run is a MISS), and
// the log events within 10 % (1.12x in every run is a MISS).
func TestTheTargetsJudgeTheBoundsTheirLabelsState(t *testing.T) {
	var raw strings.Builder
	for range 6 {
		raw.WriteString(runHeader)
		raw.WriteString(rawLine("bare", 500))
		raw.WriteString(rawLine("otelretry-noop", 820))
		raw.WriteString(rawLine("retryablehttp-deadline", 1000)) // same 10 allocs/op
		fmt.Fprintf(&raw, "BenchmarkLogEvents/kind=success/case=noop-direct-2 \t 10000 \t 10000 ns/op \t 6820 B/op \t 29 allocs/op\n")
		fmt.Fprintf(&raw, "BenchmarkLogEvents/kind=success/case=noop-events-2 \t 10000 \t 11200 ns/op \t 6979 B/op \t 33 allocs/op\n")
	}
	out := runRatios(t, raw.String())
	for _, label := range []string{
		"in memory: noop allocs/op < retryablehttp-deadline",
		"in memory: noop ns/op <= 0.8x retryablehttp-deadline",
		"noop-events <= 1.10x noop-direct",
	} {
		if line := lineWith(t, out, label); !strings.HasPrefix(line, "MISS") {
			t.Errorf("want MISS: %s", line)
		}
	}
}
