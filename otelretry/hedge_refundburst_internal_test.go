// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
	"time"
)

// hedgeBurst "is how many hedges a dependency may send in a row beyond
// its rate". A hedge taken and given back (refund: it was not sent) while
// operations begun refilled the allowance to its burst must not leave the
// dependency more than its burst (a reviewer's mutant, dropping the
// refund's cap, passed every test before this one).
func TestARefundedHedgeNeverLiftsTheAllowancePastItsBurst(t *testing.T) {
	const key = "api.test"
	rate := 0.05 // a burst of 5
	burst := int(hedgeBurst(rate))
	var h hedger
	now := time.Unix(0, 0)
	h.begun(key, rate, now) // a full burst
	if !h.take(key) {
		t.Fatal("no hedge from a full burst")
	}
	for i := range 40 { // operations begun refill the allowance to the burst
		h.begun(key, rate, now.Add(time.Duration(i+1)*time.Millisecond))
	}
	h.refund(key, rate) // the hedge taken was not sent
	took := 0
	for h.take(key) {
		took++
		if took > 2*burst {
			break
		}
	}
	if took != burst {
		t.Errorf("%d hedges in a row, want at most the burst, %d", took, burst)
	}
}
