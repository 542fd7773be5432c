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
// race. Attempts conclude under its lock, one at a time, and a hedge is
// decided and counted in flight under it too, so that the first verdict
// that is not retry wins, every later one reads superseded, and every
// conclusion sees the attempts in flight.
//
// A race is one attempt of the loop and its hedges. Each hedge is prepared
// on a goroutine of its own, so that slow hooks (a PrepareFunc, a GetBody)
// never hold back an answer that came; the operation does not wait for a
// preparation once its race is over: the preparation finds the race closed
// (or another race begun: gen) and lets go of its attempt.
type raceState struct {
	mu sync.Mutex
	// gen counts the races of the operation; closed: the current one is
	// over, and takes no hedge and no report.
	gen    int
	closed bool
	// inFlight are the attempts sent and not concluded yet; won: one of
	// them concluded with a verdict that ends the operation.
	inFlight []*attempt
	won      bool
	// launched counts the attempts of the current race that were sent, each
	// of which reports its end once; made is the last one's place.
	launched int
	made     attemptID
	// delay is the race's hedge delay.
	delay time.Duration
	// hintUntil is when the longest hint (Retry-After, a classifier's
	// pause) that an attempt of the race got while it left the retry to an
	// attempt in flight ends, on the operation's clock: the retry waits
	// for it, as it would have without hedging.
	hintUntil time.Duration
	// preparing is the hedge being prepared, nil when none.
	preparing *attempt
	// handedBack are hedges whose preparation outlived their race: the
	// race gave back their number and their hedge when it closed, and
	// their preparation, when it ends, only lets go of them.
	handedBack []*attempt
	// hedgesTried counts the hedges the operation decided to send, over all
	// its races, sent or refused at their preparation.
	hedgesTried int
	// hedges are the current race's hedges: each one's attempt, the attempt
	// it hedges, and when it was sent after that attempt's start.
	hedges []hedgeSent

	// reports carries what the race's goroutines report: an attempt's end,
	// a hedge refused at its preparation, a panic. They send only under mu
	// while the race is open, and at most once each, so that it never
	// blocks them; see newRace.
	reports chan raceDone
	// running counts the goroutines of sent attempts, for the cleanup after
	// a panic to wait for (see wait).
	running sync.WaitGroup
}

type hedgeSent struct {
	hedge, of *attempt
	after     time.Duration
}

// raceReport is what a race's goroutine reports.
type raceReport int

const (
	// reportEnd: an attempt's result.
	reportEnd raceReport = iota
	// reportRefused: a hedge was not sent; refused is the verdict.
	reportRefused
	// reportPanic: a panic (or runtime.Goexit: a nil value) ended the
	// goroutine.
	reportPanic
	// reportUnsent: hedge a was prepared for a race that was over (won,
	// or nothing left in flight), or was still being prepared when the
	// race closed: it is not sent, and its preparation lets go of it.
	reportUnsent
)

// raceDone is one report of a race's goroutine.
type raceDone struct {
	kind raceReport
	a    *attempt
	res  result
	// refused is why hedge a, of the attempt numbered of, was not sent
	// (reportRefused).
	refused verdict
	of      int
	value   any
}

// raceView is what an attempt concluding sees of its race.
type raceView struct {
	// superseded: another attempt already won; othersInFlight: another
	// attempt is in flight.
	superseded, othersInFlight bool
	// made is the last attempt sent.
	made attemptID
	// link is the attempt's place in the race.
	link hedgeLink
	// delay is the race's hedge delay.
	delay time.Duration
	// hintUntil: see raceState.
	hintUntil time.Duration
}

// newRace is the race of an operation that tries at most hedges hedges.
func newRace(hedges int) *raceState {
	// Each attempt and each preparation reports at most once.
	return &raceState{reports: make(chan raceDone, hedges+1)}
}

// begin starts a race with attempt a, hedged after delay: the operation's
// first attempt, or the one after a retry. The caller sends it (launch).
func (r *raceState) begin(a *attempt, delay time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gen++
	r.delay = delay
	r.closed, r.won, r.launched, r.hintUntil = false, false, 0, 0
	clear(r.hedges) // retain no attempts
	r.hedges = r.hedges[:0]
	r.addLocked(a)
}

// addLocked counts attempt a sent. The caller holds r.mu.
func (r *raceState) addLocked(a *attempt) {
	r.inFlight = append(r.inFlight, a)
	r.launched++
	if a.id.n > r.made.n {
		r.made = a.id
	}
	r.running.Add(1)
}

// hedgeable runs decide, which decides on a hedge of the attempt of (the
// last one sent) that would be sent n-th, while no attempt of the race
// concludes: when the race is still open, none won, an attempt is in
// flight and no other hedge is being prepared. It reports whether decide
// ran; a hedge it lets go ahead is tried, and being prepared.
func (r *raceState) hedgeable(decide func(n int, of *attempt, hedgesTried int) *attempt) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.won || len(r.inFlight) == 0 || r.preparing != nil {
		return false
	}
	if r.preparing = decide(r.made.n+1, r.inFlight[len(r.inFlight)-1], r.hedgesTried); r.preparing != nil {
		r.hedgesTried++
	}
	return true
}

// prepared ends hedge's preparation: when its race is still open, none
// won and an attempt is in flight, ready (the verdict of its preparation
// and the hedge rate) decides whether it is sent; sent counts it in flight
// and starts it (run under the lock, before any conclusion can see it).
// It reports whether hedge was sent, and whether the race took the rest
// over (reported): the refusal, or the hedge not sent once the race was
// over, is reported, and the race, not the preparation, gives back the
// hedge's number before the operation's next attempt takes one. When
// neither, the race was abandoned after a panic, and hedge is only let go
// of.
func (r *raceState) prepared(hedge, of *attempt, gen int, ready func() verdict, sent func()) (bool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.takeBackLocked(hedge) {
		return false, true
	}
	if r.preparing == hedge {
		r.preparing = nil
	}
	if gen != r.gen || r.closed {
		return false, false
	}
	if r.won || len(r.inFlight) == 0 {
		r.reports <- raceDone{kind: reportUnsent, a: hedge}
		return false, true
	}
	if v := ready(); !v.goAhead() {
		r.reports <- raceDone{kind: reportRefused, a: hedge, refused: v, of: of.id.number}
		return false, true
	}
	sent()
	r.hedges = append(r.hedges, hedgeSent{hedge, of, hedge.start - of.start})
	r.addLocked(hedge)
	return true, false
}

// panicked reports the panic (value) that ended the preparation of hedge
// for race gen, if the race is still open (reported); taken: the race
// already gave back its number and its hedge when it closed.
func (r *raceState) panicked(gen int, hedge *attempt, value any) (taken, reported bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.takeBackLocked(hedge) {
		return true, false
	}
	if gen != r.gen || r.closed {
		return false, false
	}
	r.reports <- raceDone{kind: reportPanic, a: hedge, value: value}
	return false, true
}

// takeBackLocked reports whether the race gave back hedge's number and
// hedge when it closed (handedBack), and forgets it: its preparation,
// which ended, only lets go of it. The caller holds r.mu.
func (r *raceState) takeBackLocked(hedge *attempt) bool {
	i := slices.Index(r.handedBack, hedge)
	if i < 0 {
		return false
	}
	r.handedBack = slices.Delete(r.handedBack, i, i+1)
	return true
}

// report sends d from a goroutine of race gen, if the race is still open,
// and reports whether it did.
func (r *raceState) report(gen int, d raceDone) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gen != r.gen || r.closed {
		return false
	}
	r.reports <- d
	return true
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
		link: hedgeLink{of: of, sentAfter: sentAfter, hedged: hedged}, delay: r.delay, hintUntil: r.hintUntil}
}

// done ends a's conclusion with verdict v (the zero verdict after a
// panic): a leaves the race, and wins it when v ends the operation; a
// retry it leaves to another attempt keeps its hint, which ends at
// hintUntil. A hedge being prepared is canceled once nothing is left to
// hedge.
func (r *raceState) done(a *attempt, v verdict, hintUntil time.Duration) {
	r.inFlight = slices.DeleteFunc(r.inFlight, func(b *attempt) bool { return b == a })
	if v.decision == attrs.DecisionRetry && v.reason == attrs.ReasonInFlight {
		r.hintUntil = max(r.hintUntil, hintUntil)
	}
	if v.decision != "" && v.decision.Terminal() {
		r.won = true
	}
	if p := r.preparing; p != nil && (r.won || len(r.inFlight) == 0) {
		p.release()
	}
	r.mu.Unlock()
}

// cancelAll ends the race: every attempt in flight, and a hedge being
// prepared, is canceled; the attempts conclude superseded. Another attempt
// won, or the operation is abandoned.
func (r *raceState) cancelAll() {
	r.mu.Lock()
	r.won = true
	running := slices.Clone(r.inFlight)
	if p := r.preparing; p != nil {
		running = append(running, p)
	}
	r.mu.Unlock()
	for _, a := range running {
		a.release()
	}
}

// closeIfReported closes the race once each of its sent attempts reported
// its end (received of them did): nothing is sent or reported in it any
// more. It reports whether it closed, and the reports its preparations
// sent before it did; a hedge still being prepared is canceled, and
// reported unsent (handedBack), so that its number is given back before
// the operation's next attempt takes one.
func (r *raceState) closeIfReported(received int) (bool, []raceDone) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if received < r.launched {
		return false, nil
	}
	r.closed = true
	var left []raceDone
	for len(r.reports) > 0 {
		left = append(left, <-r.reports)
	}
	if p := r.preparing; p != nil {
		p.release()
		r.preparing = nil
		r.handedBack = append(r.handedBack, p)
		left = append(left, raceDone{kind: reportUnsent, a: p})
	}
	return true, left
}

// wait, after a panic, cancels every attempt in flight, waits for their
// goroutines to end (they conclude, and record, before the operation lets
// go of what they record with), closes the race and lets go of what they
// got.
func (r *raceState) wait() {
	r.cancelAll()
	r.running.Wait()
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	for {
		select {
		case d := <-r.reports:
			letGo(d)
		default:
			return
		}
	}
}

// letGo lets go of what a report's attempt holds: its response, drained
// of nothing and closed, and the attempt.
func letGo(d raceDone) {
	if d.kind == reportUnsent {
		return // its preparation lets go of it
	}
	if d.kind == reportEnd {
		afterPanic(func() { d.a.discard(d.res.resp, 0) })
	}
	d.a.abandon()
}

// final reports whether verdict v is the one a race ends on: the first
// that ends the operation, or a retry no other attempt in flight carries
// out. Exactly one attempt of a race concludes with it: the later ones are
// superseded, and a retry while another attempt is in flight
// (ReasonInFlight) leaves the race to that attempt.
func final(v verdict) bool {
	return v.decision != attrs.DecisionSuperseded && !(v.decision == attrs.DecisionRetry && v.reason == attrs.ReasonInFlight)
}
