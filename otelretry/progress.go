// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// progress is where an operation stands between its attempts. It is a
// value its loop (run) owns: passed to what needs it, updated from what
// each step returns.
type progress struct {
	attempts int // network calls made
	// lastMade is the number (retry.attempt) of the last call made.
	lastMade int
	// afterRetry: a retry was decided and its call not made yet.
	afterRetry bool
	// unresolvedWrite: a write of this operation has an unknown outcome.
	unresolvedWrite bool
	// landed counts the copies of the request that may have been applied:
	// the attempts judged, but those proven not processed and one a state
	// check found not applied.
	landed int
	// last is the event of the last attempt made, nil before the first.
	last *attemptEvent
	// abandoned is the number of the call a retry planned and that was not
	// made, 0 when none.
	abandoned int
}

// after is where the operation stands once its attempt n was judged, as
// ev records it.
func (p progress) after(n int, ev *attemptEvent) progress {
	p = p.started(attemptID{n: n, number: ev.attempt})
	p.afterRetry, p.unresolvedWrite, p.last = ev.verdict.decision == attrs.DecisionRetry, ev.verdict.unresolvedWrite, ev
	if !ev.verdict.unsent {
		p.landed++
	}
	return p
}

// started is where the operation stands once its attempt id was made (a
// hedge is made while others are in flight).
func (p progress) started(id attemptID) progress {
	p.attempts, p.lastMade = max(p.attempts, id.n), max(p.lastMade, id.number)
	return p
}

// standing is what decide's input reads of where the operation stands.
func (p progress) standing() standing {
	return standing{attempts: p.attempts, unresolvedWrite: p.unresolvedWrite, afterRetry: p.afterRetry}
}

// abandon is where the operation stands once the call number a retry
// planned was not made (0: none was planned).
func (p progress) abandon(number int) progress {
	p.abandoned = number
	return p
}

// lastPause is the pause taken before the next attempt (0 before the
// first), for backoffs that grow from it (Answer.PreviousPause).
func (p progress) lastPause() time.Duration {
	if p.last == nil || p.last.verdict.decision != attrs.DecisionRetry {
		return 0
	}
	return p.last.verdict.pause
}

// lastNumber is the number of the last attempt made, or of the call a
// retry planned and did not make (abandoned) when it came later, 0 before
// the first: after a race, the last hedge's, whichever attempt's verdict
// the loop carries out. A redirect chain's next hop counts on from it.
func (p progress) lastNumber() int { return max(p.lastMade, p.abandoned) }

// resolved is where the operation stands once a state check said its
// unknown write was not applied: the write is sent again.
func (p progress) resolved() progress {
	p.afterRetry, p.unresolvedWrite = true, false
	p.landed = max(p.landed-1, 0) // the copy the check found not applied
	return p
}
