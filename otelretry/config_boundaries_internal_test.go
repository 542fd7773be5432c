// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The options' ranges at their edges: WithStateCheckDelay's 0 is a value
// ("Values < 0 are ignored. Default: 0"), taken over an earlier delay and
// not reported; WithRetryHint's first unit past HintWholeMilliseconds is
// no unit ("a unit other than the three HintUnits is ignored (and
// reported)").
func TestOptionRangesAtTheirEdges(t *testing.T) {
	c := newConfig([]Option{WithStateCheckDelay(time.Second), WithStateCheckDelay(0)})
	if c.stateCheckDelay != 0 || c.complaint() != nil {
		t.Errorf("WithStateCheckDelay(0) after 1s: delay %v, complaint %v; want 0 and none", c.stateCheckDelay, c.complaint())
	}
	c = newConfig([]Option{WithRetryHint("X-Wait", HintWholeMilliseconds+1)})
	if slices.ContainsFunc(c.hints, func(h hintHeader) bool { return h.name == "X-Wait" }) {
		t.Errorf("hints = %v: the unit after HintWholeMilliseconds was kept", c.hints)
	}
	if c.complaint() == nil || !strings.Contains(c.complaint().Error(), `WithRetryHint("X-Wait", 3) ignored`) {
		t.Errorf("complaint = %v, want WithRetryHint(\"X-Wait\", 3) reported", c.complaint())
	}
	for _, u := range []HintUnit{HintSeconds, HintMilliseconds, HintWholeMilliseconds} {
		if c := newConfig([]Option{WithRetryHint("X-Wait", u)}); c.complaint() != nil || c.hints[0] != (hintHeader{name: "X-Wait", unit: u}) {
			t.Errorf("WithRetryHint(X-Wait, %d): hints %v, complaint %v; want it first, unreported", u, c.hints, c.complaint())
		}
	}
}

// WithIdempotencyKeys: "one that does not write the key whole" is
// ignored and reported, checked on both probe keys. A Value that writes an
// all-digit key whole but changes its letters (strings.ToUpper) holds no
// key whole once the key has a hex letter in it: writes would not be
// found by their keys, and its Value must be dropped, and said so.
func TestIdempotencyKeysValueThatChangesTheKeysLettersIsIgnored(t *testing.T) {
	c := newConfig([]Option{WithIdempotencyKeys(IdempotencyKey{Name: "X-Key", Value: strings.ToUpper})})
	if c.keys == nil || c.keys.Value != nil {
		t.Errorf("keys = %+v: a Value that upper-cases the key was kept", c.keys)
	}
	if c.complaint() == nil || !strings.Contains(c.complaint().Error(), `WithIdempotencyKeys("X-Key"): its Value ignored`) {
		t.Errorf("complaint = %v, want the Value reported", c.complaint())
	}
}
