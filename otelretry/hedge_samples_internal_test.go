// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
	"time"
)

// The sketch follows its answers from the minSamples-th on: 19 answers
// give no quantile, 20 do.
func TestTheSketchGivesAQuantileFromItsTwentiethAnswer(t *testing.T) {
	var s latencySketch
	for i := range minSamples {
		if _, ok := s.quantile(0.95); ok {
			t.Fatalf("a quantile after %d answers, want none before %d", i, minSamples)
		}
		s.add(10 * time.Millisecond)
	}
	if _, ok := s.quantile(0.95); !ok {
		t.Errorf("no quantile after %d answers", minSamples)
	}
}

// Through the hedger: with Delay set, the 20th answer switches the
// adaptive delay from Delay to the observed quantile.
func TestTheAdaptiveDelayFollowsTheAnswersFromTheTwentieth(t *testing.T) {
	var h hedger
	p := Hedging{Adaptive: true, Delay: time.Second}.withDefaults()
	h.begun("api.test", p.MaxShare, time.Unix(1_000_000, 0))
	for range minSamples {
		h.observe("api.test", 10*time.Millisecond, false)
	}
	if d := h.delay("api.test", p); d >= 100*time.Millisecond {
		t.Errorf("after %d answers of 10ms: delay %v, want about 10ms (the observed p95), not Delay", minSamples, d)
	}
}
