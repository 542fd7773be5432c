// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"testing"
	"time"
)

// race.go, latencySample: an attempt tells the sketch its time to headers
// when answered, a lower bound when cut once another won, its elapsed time
// when it timed out past the delay, and nothing else: an attempt that
// failed past the delay (a reset, a refused connection), neither answered
// nor timed out nor superseded, says nothing of the time to headers (a
// reviewer's mutant, sampling it, passed every test before this one).
func TestLatencySampleOfAFailureThatNeitherTimedOutNorLostIsNothing(t *testing.T) {
	const delay = 10 * time.Millisecond
	reset := errors.New("connection reset by peer")
	for _, o := range []observation{
		{end: 40 * time.Millisecond, err: reset},
		{start: 5 * time.Millisecond, end: 900 * time.Millisecond, err: reset},
	} {
		if took, cut := latencySample(o, raceView{delay: delay}); took != 0 || cut {
			t.Errorf("failed after %v past the delay: sample %v, cut %v; want nothing", o.end-o.start, took, cut)
		}
	}
	// The sample a timeout and an answer past the delay still give.
	if took, cut := latencySample(observation{end: 40 * time.Millisecond, err: reset, timedOut: true}, raceView{delay: delay}); took != 40*time.Millisecond || cut {
		t.Errorf("timed out: %v, %v", took, cut)
	}
}
