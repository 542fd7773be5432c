// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import "slices"

// tokenCost is a token, in the thousandths a Budget counts: what a failed
// attempt (a timeout too) costs, and what a hedge takes when it is
// admitted.
const tokenCost = 1000

// budgetLoan names the token one hedge took from its host (Budget.hedge),
// so that the hedge settles its own loan: loans open together end in any
// order. The zero value is no loan.
type budgetLoan uint64

// hostLoans are a host's loans not yet settled, and what the host would
// hold had any of them taken nothing. A hedge pays its token when it is
// admitted; sent, the take is the host's for good; given back, the host
// holds what it would had that hedge never been admitted: the answers
// counted meanwhile, floor and ceiling included, replayed without its
// take. Every answer moves the host by a clamped shift (tokenStep), and
// such steps compose into one, so the replay is exact and each answer
// costs one composition, whatever the count of loans: before is the
// host's tokens just before its oldest open loan took its own, and each
// loan keeps the composed step of the answers counted from its take to
// the next loan's (the newest, to now).
type hostLoans struct {
	before int64
	open   []hedgeLoan
}

type hedgeLoan struct {
	id    budgetLoan
	after tokenStep
}

// tokenStep maps a host's tokens x to min(max(x+shift, lo), hi): an
// answer's step (a success's ratio up to the ceiling, a failure's token
// down to the floor), or several composed.
type tokenStep struct{ shift, lo, hi int64 }

// unbounded stands for no floor or no ceiling: far beyond any tokens, and
// far enough from the int64 limits that shifts never overflow.
const unbounded = 1 << 50

var unchanged = tokenStep{lo: -unbounded, hi: unbounded}

func (s tokenStep) apply(x int64) int64 { return min(max(x+s.shift, s.lo), s.hi) }

// then is s followed by next.
func (s tokenStep) then(next tokenStep) tokenStep {
	lo, hi := s.lo+next.shift, s.hi+next.shift
	return tokenStep{
		shift: s.shift + next.shift,
		lo:    min(max(lo, next.lo), next.hi),
		hi:    max(min(hi, next.hi), next.lo),
	}
}

// lend opens loan id on a host holding milli before its take.
func (l *hostLoans) lend(id budgetLoan, milli int64) {
	if len(l.open) == 0 {
		l.before = milli
	}
	l.open = append(l.open, hedgeLoan{id: id, after: unchanged})
}

// count composes an answer's step into the newest loan's.
func (l *hostLoans) count(s tokenStep) {
	if n := len(l.open); n > 0 {
		l.open[n-1].after = l.open[n-1].after.then(s)
	}
}

// settle ends loan id, sent or given back, and returns what the host
// holds then: the replay with the loans still open taking their tokens.
// ok is false when the host holds no such loan.
func (l *hostLoans) settle(id budgetLoan, sent bool) (milli int64, ok bool) {
	i := slices.IndexFunc(l.open, func(o hedgeLoan) bool { return o.id == id })
	if i < 0 {
		return 0, false
	}
	take := unchanged
	if sent {
		take.shift = -tokenCost
	}
	switch folded := take.then(l.open[i].after); {
	case i > 0:
		l.open[i-1].after = l.open[i-1].after.then(folded)
	case len(l.open) > 1:
		l.before = folded.apply(l.before)
	default:
		milli = folded.apply(l.before)
	}
	l.open = slices.Delete(l.open, i, i+1)
	if len(l.open) == 0 {
		l.open = nil
		return milli, true
	}
	milli = l.before
	for _, o := range l.open {
		milli = o.after.apply(milli - tokenCost)
	}
	return milli, true
}
