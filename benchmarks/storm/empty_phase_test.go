// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"strings"
	"testing"
)

// An outage in which no operation was offered has no amplification
// (attempts / operations is 0/0); reporting it as 0.000 says the client
// sent no extra request, the best figure there is (a reviewer's find); it
// is NaN, printed as such, and so is the success share of an empty phase.
func TestAPhaseWithNoOperationsHasNoFigures(t *testing.T) {
	empty := &stats{name: "outage"}
	r := result{config: "otelretry-budget", clients: 1, outage: empty, brownout: &stats{name: "brownout"}, recovery: math.Inf(1)}
	line := r.line()
	if !math.IsNaN(empty.amplification()) || strings.Contains(line, "amplification_outage=0.000") {
		t.Errorf("no operation in the outage, yet amplification %v: %s", empty.amplification(), line)
	}
	if strings.Contains(line, "success_brownout=0.000") {
		t.Errorf("no operation in the brownout, yet its success share is reported as 0: %s", line)
	}
}
