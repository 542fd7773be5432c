// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package benchrun holds what the benchmark commands share about a run:
// the machine's load, printed beside the figures, and when a run recovered.
package benchrun

import (
	"os"
	"strings"
)

// Loadavg is the machine's 1-minute load, printed so that a run distorted
// by other work on the machine can be recognized ("?" where it is not
// known).
func Loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// Recovery judges n windows in time order, judge(i) saying whether any
// operation arrived in window i and whether the window fails, and returns
// the first window from which on none fails: 0 when none fails. ok is
// false when the last window fails (not recovered within the windows), and
// when no window from there on held an operation: a stretch in which
// nothing arrived shows no recovery, nor do no windows at all.
func Recovery(n int, judge func(i int) (seen, fails bool)) (from int, ok bool) {
	lastSeen := -1
	for i := range n {
		seen, fails := judge(i)
		if seen {
			lastSeen = i
		}
		if fails {
			from = i + 1
		}
	}
	return from, lastSeen >= from
}
