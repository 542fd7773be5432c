// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build race

package otelretry_test

// raceScale divides the size of the stress tests under the race detector:
// ThreadSanitizer keeps state for every goroutine that ever ran, and a
// test binary that starts tens of thousands of them can trip its own
// internal checks (golang/go#63276). The full sizes run without -race.
const raceScale = 3
