// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// A run that offered no operation has no amplification (requests per
// operation offered, 0/0): it read 0.000, the best figure (a reviewer's
// find; the storm benchmark's had the same fault); it is NaN, printed so.
func TestARunOfNoOperationHasNoAmplification(t *testing.T) {
	o := defaultOptions()
	o.before, o.trigger, o.after, o.tail = 2*time.Second, time.Second, 3*time.Second, time.Second
	o.bucket = 500 * time.Millisecond
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	rep := analyze(o, result{config: "otelretry"})
	if line := rep.line(); !math.IsNaN(rep.amplification) || !strings.Contains(line, "amplification=NaN") {
		t.Errorf("no operation offered, yet amplification %v: %s", rep.amplification, line)
	}
}
