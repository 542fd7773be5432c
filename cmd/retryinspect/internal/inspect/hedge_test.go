// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

// attemptAt is attempt n from startMs to endMs after hostileBase, with
// decision d and reason r; a negative start leaves the times unset.
func attemptAt(n, startMs, endMs int64, d attrs.Decision, r attrs.Reason) Attempt {
	at := Attempt{Number: n, Decision: string(d), Reason: string(r)}
	if startMs >= 0 {
		at.Start = hostileBase.Add(time.Duration(startMs) * time.Millisecond)
		at.End = hostileBase.Add(time.Duration(endMs) * time.Millisecond)
	}
	return at
}

// TestOverlapsAndInFlight: which attempt started while another was in
// flight (a hedge, whatever it records), and which ended while another
// was: sequential retries overlap nothing, a hedge overlaps the attempt it
// hedges, and attempts without times take part in neither.
func TestOverlapsAndInFlight(t *testing.T) {
	const (
		ret   = attrs.DecisionReturn
		retry = attrs.DecisionRetry
		sup   = attrs.DecisionSuperseded
	)
	for _, tc := range []struct {
		name     string
		atts     []Attempt
		overlaps []int64 // 0: none
		inFlight []bool
		ending   int
	}{
		{name: "sequential retries, the next one starting as the last ended",
			atts:     []Attempt{attemptAt(1, 0, 80, retry, ""), attemptAt(2, 80, 160, retry, ""), attemptAt(3, 200, 250, ret, "")},
			overlaps: []int64{0, 0, 0}, inFlight: []bool{false, false, false}, ending: 2},
		{name: "the hedge wins",
			atts:     []Attempt{attemptAt(1, 0, 91, sup, attrs.ReasonOtherAttempt), attemptAt(2, 50, 90, ret, "")},
			overlaps: []int64{0, 1}, inFlight: []bool{false, true}, ending: 1},
		{name: "the attempt hedged wins",
			atts:     []Attempt{attemptAt(1, 0, 70, ret, ""), attemptAt(2, 50, 71, sup, attrs.ReasonOtherAttempt)},
			overlaps: []int64{0, 1}, inFlight: []bool{true, false}, ending: 0},
		{name: "a failure while the hedge is in flight",
			atts:     []Attempt{attemptAt(1, 0, 80, retry, attrs.ReasonInFlight), attemptAt(2, 50, 110, ret, "")},
			overlaps: []int64{0, 1}, inFlight: []bool{true, false}, ending: 1},
		{name: "the hedge fails first, without in_flight, and the attempt hedged answers",
			atts:     []Attempt{attemptAt(1, 0, 100, ret, ""), attemptAt(2, 40, 60, retry, "")},
			overlaps: []int64{0, 1}, inFlight: []bool{false, true}, ending: 0},
		{name: "both fail: the last to answer decides the retry",
			atts: []Attempt{attemptAt(1, 0, 100, retry, attrs.ReasonInFlight), attemptAt(2, 50, 150, retry, attrs.ReasonRetryableStatus),
				attemptAt(3, 190, 260, ret, ""), attemptAt(4, 240, 261, sup, attrs.ReasonOtherAttempt)},
			overlaps: []int64{0, 1, 0, 3}, inFlight: []bool{true, false, true, false}, ending: 2},
		{name: "two hedges: the second hedges the first hedge",
			atts:     []Attempt{attemptAt(1, 0, 100, sup, ""), attemptAt(2, 20, 100, sup, ""), attemptAt(3, 40, 99, ret, "")},
			overlaps: []int64{0, 1, 2}, inFlight: []bool{true, true, true}, ending: 2},
		{name: "without times",
			atts:     []Attempt{attemptAt(1, -1, 0, retry, ""), attemptAt(2, -1, 0, retry, attrs.ReasonInFlight)},
			overlaps: []int64{0, 0}, inFlight: []bool{false, false}, ending: 0},
		{name: "an in_flight retry alone ends the operation",
			atts:     []Attempt{attemptAt(1, 0, 80, retry, attrs.ReasonInFlight)},
			overlaps: []int64{0}, inFlight: []bool{false}, ending: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			atts := slices.Clone(tc.atts)
			markOverlaps(atts)
			var overlaps []int64
			for _, at := range atts {
				n := int64(0)
				if at.Overlaps != nil {
					n = *at.Overlaps
				}
				overlaps = append(overlaps, n)
			}
			if !slices.Equal(overlaps, tc.overlaps) {
				t.Errorf("overlaps %v, want %v", overlaps, tc.overlaps)
			}
			inFlight := inFlightAtEnd(atts)
			if !slices.Equal(inFlight, tc.inFlight) {
				t.Errorf("in flight at the end %v, want %v", inFlight, tc.inFlight)
			}
			if got := ending(atts, inFlight); got != tc.ending {
				t.Errorf("ending %d, want %d", got, tc.ending)
			}
		})
	}
}

// TestHedgeOfIsAnEarlierAttempt: retry.hedge.of names an earlier attempt
// of the operation; another value is an invalid attribute.
func TestHedgeOfIsAnEarlierAttempt(t *testing.T) {
	for _, of := range []int64{0, 2, 3} {
		at := minimalAttempt("t", 1, 0, "op", 2, 0)
		at.Attributes = append(at.Attributes, kv(keyHedgeOf, model.Int(of)))
		a, f := readAttempt(&at, false)
		want := of == 0 || of >= 2
		if got := len(f.invalid) > 0; got != want || (a.HedgeOf != nil) == want {
			t.Errorf("retry.hedge.of %d on attempt 2: invalid %q, read %v", of, f.invalid, a.HedgeOf)
		}
	}
	at := minimalAttempt("t", 1, 0, "op", 2, 0)
	at.Attributes = append(at.Attributes, kv(keyHedgeOf, model.Int(1)))
	if a, f := readAttempt(&at, false); len(f.invalid) > 0 || a.HedgeOf == nil || *a.HedgeOf != 1 || !a.IsHedge() {
		t.Errorf("retry.hedge.of 1 on attempt 2: invalid %q, read %v", f.invalid, a.HedgeOf)
	}
}

// TestHedgeEventsAreChecked: a hedge event's attribute of the wrong type
// is an invalid attribute of its operation span, named with its event.
func TestHedgeEventsAreChecked(t *testing.T) {
	op := operationSpan("t", 1, 0, "op", 1, 1000)
	op.Events = append(op.Events, model.Event{Name: attrs.EventHedgeRefused, Time: op.Start, Attributes: []model.Attribute{
		kv(keyHedgeOf, model.String("one")), kv(keyHedgeDelayMs, model.Int(-5)), kv(keyReason, model.String(string(attrs.ReasonHedgeLimit)))}})
	_, f := readOperation(&op)
	if len(f.invalid) != 2 || !slices.ContainsFunc(f.invalid, func(s string) bool {
		return s == fmt.Sprintf("event %s: %s has type string, want int", attrs.EventHedgeRefused, keyHedgeOf)
	}) {
		t.Errorf("invalid %q", f.invalid)
	}
}

// A race no attempt won has no winner, whichever attempt the library
// judged first: one superseded by the operation's end (operation_ended),
// or, in a trace from before that reason, an attempt without an answer
// that the caller's cancel or a deadline ended beside a superseded one. A
// race whose ending attempt answered, or whose superseded attempt lost to
// an answer, has one.
func TestARaceNoAttemptWonHasNoWinner(t *testing.T) {
	const (
		sup      = attrs.DecisionSuperseded
		canceled = attrs.DecisionCanceled
		deadline = attrs.DecisionDeadlineExceeded
	)
	status := int64(503)
	answered := attemptAt(2, 50, 100, attrs.DecisionStop, attrs.ReasonStatus)
	answered.StatusCode = &status
	for _, tc := range []struct {
		name string
		atts []Attempt
		want int
	}{
		{"operation_ended", []Attempt{attemptAt(1, 0, 100, sup, attrs.ReasonOperationEnded), attemptAt(2, 50, 100, canceled, attrs.ReasonCaller)}, -1},
		{"an older trace: canceled beside a superseded one", []Attempt{attemptAt(1, 0, 100, sup, attrs.ReasonOtherAttempt), attemptAt(2, 50, 100, canceled, attrs.ReasonCaller)}, -1},
		{"an older trace: the deadline beside a superseded one", []Attempt{attemptAt(1, 0, 100, deadline, attrs.ReasonDeadline), attemptAt(2, 50, 100, sup, attrs.ReasonOtherAttempt)}, -1},
		{"the hedge answered and won", []Attempt{attemptAt(1, 0, 100, sup, attrs.ReasonOtherAttempt), answered}, 1},
		{"canceled alone, no answer", []Attempt{attemptAt(1, 0, 100, canceled, attrs.ReasonCaller)}, -1},
	} {
		if got := winner(&Operation{Attempts: tc.atts}); got != tc.want {
			t.Errorf("%s: winner = %d, want %d", tc.name, got, tc.want)
		}
	}
}
