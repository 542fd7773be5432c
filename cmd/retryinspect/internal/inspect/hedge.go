// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"slices"
	"sort"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// A hedged operation has attempts that overlap in time: a hedge is sent
// while the attempt it hedges is still in flight, the first answer whose
// verdict is not retry wins, and the others are canceled (superseded) or
// leave the retry to the attempt still in flight (reason in_flight).
// Attempts are ordered by number, which is the order they started in;
// these functions say which attempt overlaps which, from their times, so
// that the checks hold for another implementation's hedges too, whatever
// it records.

// markOverlaps sets each attempt's Overlaps: the number of an earlier
// attempt (by number) still in flight when it started, the one of them
// that ran longest. It takes one pass: the earlier attempt that ends last
// is the one to compare with. Attempts without times overlap nothing.
func markOverlaps(atts []Attempt) {
	longest := -1 // the earlier attempt that ends last
	for i := range atts {
		at := &atts[i]
		at.Overlaps = nil
		if longest >= 0 && !at.Start.IsZero() {
			e := &atts[longest]
			if e.Number > 0 && !e.Start.After(at.Start) && e.End.After(at.Start) {
				n := e.Number
				at.Overlaps = &n
			}
		}
		if !at.Start.IsZero() && !at.End.IsZero() && (longest < 0 || !at.End.Before(atts[longest].End)) {
			longest = i
		}
	}
}

// inFlightAtEnd reports, for each attempt, whether another attempt of its
// operation was in flight when it ended: one that started before its end
// and had not ended before it. It counts them on the sorted starts and
// ends, in O(n log n). Attempts without times are never in flight.
func inFlightAtEnd(atts []Attempt) []bool {
	starts, ends := make([]time.Time, 0, len(atts)), make([]time.Time, 0, len(atts))
	for _, at := range atts {
		if !at.Start.IsZero() && !at.End.IsZero() {
			starts = append(starts, at.Start)
			ends = append(ends, latest(at.Start, at.End))
		}
	}
	slices.SortFunc(starts, time.Time.Compare)
	slices.SortFunc(ends, time.Time.Compare)
	before := func(ts []time.Time, t time.Time) int { // how many of ts are before t
		return sort.Search(len(ts), func(k int) bool { return !ts[k].Before(t) })
	}
	out := make([]bool, len(atts))
	for i, at := range atts {
		if at.Start.IsZero() || at.End.IsZero() {
			continue
		}
		t := latest(at.Start, at.End)
		n := before(starts, t) - before(ends, t) // started before t, not ended before t
		if at.Start.Before(t) {
			n-- // itself
		}
		out[i] = n > 0
	}
	return out
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// ending returns the position of the attempt an operation ended on (see
// Operation.Ending), or -1 without attempts. inFlight, from inFlightAtEnd,
// may be nil.
func ending(atts []Attempt, inFlight []bool) int {
	for i := len(atts) - 1; i >= 0; i-- {
		at := &atts[i]
		switch {
		case at.Decision == string(attrs.DecisionSuperseded):
		case at.Decision == string(attrs.DecisionRetry) && (at.Reason == string(attrs.ReasonInFlight) || inFlight != nil && inFlight[i]):
		default:
			return i
		}
	}
	return len(atts) - 1
}

// winner returns the position of the attempt that won op: the one it
// ended on, when that one's verdict ended the operation (a decision of the
// vocabulary other than retry and superseded); -1 when none did (the
// operation ended between attempts, or its last attempt decided retry), or
// when the race ended with no answer: an attempt superseded by the
// operation's end (reason operation_ended), or an ending attempt without
// an answer that the caller's cancel or a deadline ended (the winner is an
// answer). Which of a race's attempts the library judged first then is
// chance, not a win.
func winner(op *Operation) int {
	i := op.Ending()
	if i < 0 {
		return -1
	}
	if d := attrs.Decision(op.Attempts[i].Decision); !d.Valid() || !d.Terminal() {
		return -1
	}
	for _, at := range op.Attempts {
		if at.Decision == string(attrs.DecisionSuperseded) && at.Reason == string(attrs.ReasonOperationEnded) {
			return -1
		}
	}
	if endedWithoutAnswer(&op.Attempts[i]) {
		return -1 // no answer: the caller or a deadline ended it, whichever attempt that was
	}
	return i
}

// endedWithoutAnswer reports whether an attempt ended its operation with
// no answer, by the caller's cancel or a deadline.
func endedWithoutAnswer(at *Attempt) bool {
	d := attrs.Decision(at.Decision)
	return at.StatusCode == nil && (d == attrs.DecisionCanceled || d == attrs.DecisionDeadlineExceeded)
}

// hedged reports whether op sent a hedge: an attempt of it is a hedge, or
// its span records a hedge_sent event.
func hedged(op *Operation) bool {
	return slices.ContainsFunc(op.Attempts, func(at Attempt) bool { return at.IsHedge() }) ||
		slices.ContainsFunc(op.HedgeEvents, func(e HedgeEvent) bool { return e.Event == attrs.EventHedgeSent })
}
