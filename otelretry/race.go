// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"slices"
	"sync"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// raceState is what the attempts of a hedged operation share while they
// race: which are in flight, whether one already won, and when each hedged
// attempt's hedge was sent. Attempts conclude under its lock, one at a
// time, and a hedge is decided, prepared and counted in flight under it
// too (exclusive), so that the first verdict that is not retry wins, every
// later one reads superseded, and every conclusion sees the hedges in
// flight.
type raceState struct {
	mu       sync.Mutex
	inFlight []*attempt
	won      bool
	// made is the number (n) of the last attempt started.
	made int
	// hedges are the race's hedges: each one's attempt, the attempt it
	// hedges, and when it was sent after that attempt's start.
	hedges []hedgeSent

	// reports carries each attempt's end from its goroutine; it has room
	// for every attempt of one race, so that no goroutine waits on it.
	reports chan raceDone
	// running counts the attempts' goroutines, for the cleanup after a
	// panic to wait for (see wait).
	running sync.WaitGroup
}

type hedgeSent struct {
	hedge, of *attempt
	after     time.Duration
}

// raceDone is one attempt's end, as its goroutine reports it: its result,
// or the panic (or runtime.Goexit: panicked with a nil value) that ended
// it.
type raceDone struct {
	a        *attempt
	res      result
	panicked bool
	value    any
}

// raceView is what an attempt concluding sees of its race.
type raceView struct {
	// superseded: another attempt already won; othersInFlight: another
	// attempt is in flight.
	superseded, othersInFlight bool
	// made is the number (n) of the last attempt started.
	made int
	// link is the attempt's place in the race.
	link hedgeLink
}

// newRace is the race of an operation that sends at most maxHedges hedges
// per attempt.
func newRace(maxHedges int) *raceState {
	return &raceState{reports: make(chan raceDone, maxHedges+1)}
}

// begin starts a race with attempt a in flight: the operation's first
// attempt, or the one after a retry.
func (r *raceState) begin(a *attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.hedges) // retain no attempts
	r.hedges = r.hedges[:0]
	r.addLocked(a)
}

// addLocked counts attempt a in flight. The caller holds r.mu.
func (r *raceState) addLocked(a *attempt) {
	r.inFlight = append(r.inFlight, a)
	r.made = max(r.made, a.id.n)
	r.running.Add(1)
}

// exclusive runs f, which decides on a hedge and may send one, while no
// attempt of the race may conclude, if an attempt is still in flight and
// none won; it reports whether f ran. The hedge f prepares is counted in
// flight (addLocked) before any other attempt concludes.
func (r *raceState) exclusive(f func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.won || len(r.inFlight) == 0 {
		return false
	}
	f()
	return true
}

// addHedgeLocked counts hedge, of attempt of, in flight: sent after after
// of of's own time. The caller holds r.mu (see exclusive).
func (r *raceState) addHedgeLocked(hedge, of *attempt, after time.Duration) {
	r.hedges = append(r.hedges, hedgeSent{hedge, of, after})
	r.addLocked(hedge)
}

// concluding locks the race for a's conclusion and reports what a sees of
// it. done, called with a's verdict, ends the conclusion; it must be
// called, after a panic too.
func (r *raceState) concluding(a *attempt) raceView {
	r.mu.Lock()
	var of int
	var sentAfter time.Duration
	var hedged bool
	for _, h := range r.hedges {
		switch a {
		case h.hedge:
			of = h.of.id.number
		case h.of:
			sentAfter, hedged = h.after, true
		}
	}
	return raceView{superseded: r.won, othersInFlight: len(r.inFlight) > 1, made: r.made,
		link: hedgeLink{of: of, sentAfter: sentAfter, hedged: hedged}}
}

// done ends a's conclusion with verdict v (the zero verdict after a
// panic): a leaves the race, and wins it when v ends the operation.
func (r *raceState) done(a *attempt, v verdict) {
	r.inFlight = slices.DeleteFunc(r.inFlight, func(b *attempt) bool { return b == a })
	if v.decision != "" && v.decision.Terminal() {
		r.won = true
	}
	r.mu.Unlock()
}

// cancelAll ends the race: every attempt in flight is canceled, and
// concludes superseded. Another attempt won, or the operation is
// abandoned.
func (r *raceState) cancelAll() {
	r.mu.Lock()
	r.won = true
	running := slices.Clone(r.inFlight)
	r.mu.Unlock()
	for _, a := range running {
		a.release()
	}
}

// await takes the ends of the race's pending attempts, which were
// canceled, and lets go of what they got.
func (r *raceState) await(pending int) {
	for range pending {
		d := <-r.reports
		if !d.panicked {
			afterPanic(func() { d.a.discard(d.res.resp, 0) })
		}
		d.a.abandon()
	}
}

// wait, after a panic, cancels every attempt in flight, waits for their
// goroutines to end (they conclude, and record, before the operation lets
// go of what they record with) and lets go of what they got.
func (r *raceState) wait() {
	r.cancelAll()
	r.running.Wait()
	for {
		select {
		case d := <-r.reports:
			if !d.panicked {
				afterPanic(func() { d.a.discard(d.res.resp, 0) })
			}
			d.a.abandon()
		default:
			return
		}
	}
}

// final reports whether verdict v is the one a race ends on: the first
// that ends the operation, or a retry no other attempt in flight carries
// out. Exactly one attempt of a race concludes with it: the later ones are
// superseded, and a retry while another attempt is in flight
// (ReasonInFlight) leaves the race to that attempt.
func final(v verdict) bool {
	return v.decision != attrs.DecisionSuperseded && !(v.decision == attrs.DecisionRetry && v.reason == attrs.ReasonInFlight)
}
