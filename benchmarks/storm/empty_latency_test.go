// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"strings"
	"testing"
)

// A phase with no operation has no latency either: the table prints its
// amplification and success share as NaN (no figure where nothing was
// measured), and its p50_ms and p99_ms read 0.0, a measurement of instant
// answers (a reviewer's find): they are NaN too.
func TestAnEmptyPhasesLatencyIsNoFigure(t *testing.T) {
	empty := &stats{name: "outage"}
	r := result{config: "otelretry-budget", clients: 1, outage: empty, brownout: &stats{name: "brownout"}, recovery: math.Inf(1)}
	var b strings.Builder
	printTable(&b, []result{r})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	row := strings.Fields(lines[len(lines)-1])
	// config phase ops attempts amp success p50_ms p99_ms ...
	if len(row) < 8 || row[1] != "outage" || row[4] != "NaN" {
		t.Fatalf("setup: row %q", lines[len(lines)-1])
	}
	if row[6] != "NaN" || row[7] != "NaN" {
		t.Errorf("an empty phase's p50_ms %s and p99_ms %s: a 0 latency where nothing was measured (amp %s, success %s)\n%s", row[6], row[7], row[4], row[5], b.String())
	}
}
