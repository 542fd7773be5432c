// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
	"time"
)

// Operations in flight together read the clock before they take the
// throttle's lock, so an admission may come with a reading a little older
// than an answer another operation already counted. The admission read
// the window ending at its own slot, which left out every newer slot: 20
// failures counted 100 ms later were not seen, and the request went. It
// reads the window ending at the newest slot counted now, as the counts
// are filed.
func TestAnAdmissionReadsTheNewestCountsWhateverItsReading(t *testing.T) {
	th := &Throttle{Window: time.Second, rand: func() float64 { return 0.5 }}
	origin := time.Unix(1_000_000, 0)
	if !th.admit("dep", origin) {
		t.Fatal("a fresh dependency's first request was refused")
	}
	for range 20 {
		th.record("dep", origin.Add(900*time.Millisecond), false)
	}
	if th.admit("dep", origin.Add(800*time.Millisecond)) {
		t.Error("a request read at 800 ms, after 20 failures counted at 900 ms in a window of 1 s, was admitted; " +
			"want refused (rejection 0.9 at most, drawn 0.5)")
	}
	if !th.admit("other", origin.Add(800*time.Millisecond)) {
		t.Error("another dependency's request was refused")
	}
}
