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

// Recovery judges n windows in time order, fails(i) saying whether window
// i fails, and returns the first window from which on none fails: 0 when
// none fails. ok is false when the last window fails: not recovered
// within the windows.
func Recovery(n int, fails func(i int) bool) (from int, ok bool) {
	for i := range n {
		if fails(i) {
			from = i + 1
		}
	}
	return from, n == 0 || from < n
}
