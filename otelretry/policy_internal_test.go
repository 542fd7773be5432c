// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

const msec = time.Millisecond

// attemptInput is a GET-like input after an attempt, with room for a retry
// and the budget already asked (and allowing).
func attemptInput(f func(*input)) input {
	in := input{phase: phaseAttempt, repeatable: true, remaining: 300 * msec, attemptsLeft: 2, backoff: 40 * msec,
		replayable: true, pauseAsked: true, budgetAsked: true}
	if f != nil {
		f(&in)
	}
	return in
}

func TestDecideAfterAttempt(t *testing.T) {
	status := func(code int, retryable bool) func(*input) {
		return func(in *input) { in.status, in.retryableStatus = code, retryable }
	}
	class := func(c attrs.ErrorClass) func(*input) {
		return func(in *input) { in.class, in.notProcessed = c, c.NotProcessed() }
	}
	write := func(fs ...func(*input)) func(*input) {
		return func(in *input) {
			in.repeatable, in.write = false, true
			for _, f := range fs {
				f(in)
			}
		}
	}
	with := func(fs ...func(*input)) func(*input) {
		return func(in *input) {
			for _, f := range fs {
				f(in)
			}
		}
	}
	// keyed: the request carries an idempotency key (generated, or under
	// the contract), which makes it repeatable.
	keyed := func(in *input) { in.keyed, in.repeatable = true, true }
	callerCanceled := func(in *input) { in.callerCanceled = true }
	cases := []struct {
		name   string
		in     input
		want   attrs.Decision
		reason attrs.Reason
		pause  time.Duration
		unkn   bool
	}{
		{"200 returns", attemptInput(status(200, false)), attrs.DecisionReturn, attrs.ReasonResponse, 0, false},
		{"304 returns", attemptInput(status(304, false)), attrs.DecisionReturn, attrs.ReasonResponse, 0, false},
		{"101 returns", attemptInput(status(101, false)), attrs.DecisionReturn, attrs.ReasonResponse, 0, false},
		{"GET 503 retries", attemptInput(status(503, true)), attrs.DecisionRetry, attrs.ReasonRetryableStatus, 40 * msec, false},
		{"GET 500 stops", attemptInput(status(500, false)), attrs.DecisionStop, attrs.ReasonStatus, 0, false},
		{"POST 503 stops", attemptInput(write(status(503, true))), attrs.DecisionStop, attrs.ReasonNotIdempotent, 0, false},
		{"GET timeout retries", attemptInput(class(attrs.ErrorClassTimeout)), attrs.DecisionRetry, attrs.ReasonRetryableError, 40 * msec, false},
		{"POST timeout checks state", attemptInput(write(class(attrs.ErrorClassTimeout))), attrs.DecisionCheckState, attrs.ReasonUnknownWrite, 0, true},
		{"POST reset checks state", attemptInput(write(class(attrs.ErrorClassConnectionReset))), attrs.DecisionCheckState, attrs.ReasonUnknownWrite, 0, true},
		{"POST other stops", attemptInput(write(class(attrs.ErrorClassOther))), attrs.DecisionStop, attrs.ReasonNotIdempotent, 0, false},
		{"POST other after it was written checks state", attemptInput(write(class(attrs.ErrorClassOther), func(in *input) { in.written = true })),
			attrs.DecisionCheckState, attrs.ReasonUnknownWrite, 0, true},
		{"POST refused retries", attemptInput(write(class(attrs.ErrorClassConnectionRefused))), attrs.DecisionRetry, attrs.ReasonNotProcessed, 40 * msec, false},
		{"POST refused stream retries", attemptInput(write(class(attrs.ErrorClassRefusedStream))), attrs.DecisionRetry, attrs.ReasonNotProcessed, 40 * msec, false},
		{"canceled GET", attemptInput(with(class(attrs.ErrorClassCanceled), callerCanceled)), attrs.DecisionCanceled, attrs.ReasonCaller, 0, false},
		{"canceled POST in flight is unknown", attemptInput(write(class(attrs.ErrorClassCanceled), callerCanceled)), attrs.DecisionCanceled, attrs.ReasonCaller, 0, true},
		// A key makes a resend safe, not the outcome known.
		{"canceled keyed POST in flight is unknown", attemptInput(write(keyed, class(attrs.ErrorClassCanceled), callerCanceled)), attrs.DecisionCanceled, attrs.ReasonCaller, 0, true},
		// The base's own cancellation (observedClass reads it as other)
		// is no caller's: a GET is retried.
		{"a GET the base canceled, the caller did not", attemptInput(class(attrs.ErrorClassOther)), attrs.DecisionRetry, attrs.ReasonRetryableError, 40 * msec, false},
		{"a 503 as the caller cancels: no retry recorded", attemptInput(with(status(503, true), func(in *input) { in.callerCanceled = true })),
			attrs.DecisionCanceled, attrs.ReasonCaller, 0, false},
		{"a 503 past the caller's deadline", attemptInput(with(status(503, true), func(in *input) { in.callerDeadline = true })),
			attrs.DecisionDeadlineExceeded, attrs.ReasonCaller, 0, false},
		{"a GET cut by the caller's deadline", attemptInput(with(class(attrs.ErrorClassTimeout), func(in *input) { in.callerDeadline = true })),
			attrs.DecisionDeadlineExceeded, attrs.ReasonCaller, 0, false},
		{"a POST in flight at the caller's deadline is unknown, with no state check", attemptInput(write(class(attrs.ErrorClassTimeout), func(in *input) {
			in.callerDeadline, in.write = true, true
		})), attrs.DecisionDeadlineExceeded, attrs.ReasonCaller, 0, true},
		{"a POST never sent at the caller's deadline is known", attemptInput(write(class(attrs.ErrorClassTimeout), func(in *input) {
			in.callerDeadline, in.write, in.notProcessed = true, true, true
		})), attrs.DecisionDeadlineExceeded, attrs.ReasonCaller, 0, false},
		{"a 200 as the caller cancels is still returned", attemptInput(with(status(200, false), func(in *input) { in.callerCanceled = true })),
			attrs.DecisionReturn, attrs.ReasonResponse, 0, false},
		{"pause equal to remaining is deadline_exceeded", attemptInput(with(status(503, true), func(in *input) { in.remaining = 40 * msec })),
			attrs.DecisionDeadlineExceeded, attrs.ReasonDeadline, 0, false},
		{"Retry-After beyond the deadline", attemptInput(with(status(503, true), func(in *input) { in.retryAfter = 5 * time.Second })),
			attrs.DecisionDeadlineExceeded, attrs.ReasonDeadline, 0, false},
		{"Retry-After longer than backoff wins", attemptInput(with(status(429, true), func(in *input) { in.retryAfter = 100 * msec })),
			attrs.DecisionRetry, attrs.ReasonRetryableStatus, 100 * msec, false},
		{"no attempts left", attemptInput(with(status(503, true), func(in *input) { in.attemptsLeft = 0 })),
			attrs.DecisionMaxAttempts, attrs.ReasonAttemptLimit, 0, false},
		{"deadline before the attempt limit", attemptInput(with(status(503, true), func(in *input) { in.attemptsLeft, in.remaining = 0, 0 })),
			attrs.DecisionDeadlineExceeded, attrs.ReasonDeadline, 0, false},
		{"not replayable stops", attemptInput(with(status(503, true), func(in *input) { in.replayable = false })),
			attrs.DecisionStop, attrs.ReasonNotReplayable, 0, false},
		{"budget refuses", attemptInput(with(status(503, true), func(in *input) { in.budget = attrs.ReasonBudget })),
			attrs.DecisionBudgetExhausted, attrs.ReasonBudget, 0, false},
		{"pushback holds back", attemptInput(with(status(503, true), func(in *input) { in.budget = attrs.ReasonPushback })),
			attrs.DecisionBudgetExhausted, attrs.ReasonPushback, 0, false},
		{"intent: no retries", attemptInput(with(status(503, true), func(in *input) { in.noRetry = true })),
			attrs.DecisionStop, attrs.ReasonIntent, 0, false},
		{"intent: no retries keeps an unknown write unknown", attemptInput(write(class(attrs.ErrorClassTimeout), func(in *input) { in.noRetry = true })),
			attrs.DecisionCheckState, attrs.ReasonUnknownWrite, 0, true},
		{"classifier: retry a 500", attemptInput(with(status(500, false), func(in *input) { in.classifier = Retryable(0) })),
			attrs.DecisionRetry, attrs.ReasonClassifier, 40 * msec, false},
		{"classifier: its pause hint wins", attemptInput(with(status(500, false), func(in *input) { in.classifier = Retryable(90 * msec) })),
			attrs.DecisionRetry, attrs.ReasonClassifier, 90 * msec, false},
		{"classifier: a write stays a write", attemptInput(write(status(500, false), func(in *input) { in.classifier = Retryable(0) })),
			attrs.DecisionStop, attrs.ReasonNotIdempotent, 0, false},
		{"classifier: cannot resend an unknown write", attemptInput(write(class(attrs.ErrorClassTimeout), func(in *input) { in.classifier = Retryable(0) })),
			attrs.DecisionCheckState, attrs.ReasonUnknownWrite, 0, true},
		{"classifier: not retryable", attemptInput(with(status(503, true), func(in *input) { in.classifier = NotRetryable() })),
			attrs.DecisionStop, attrs.ReasonClassifier, 0, false},
		{"classifier: not processed resends a write", attemptInput(write(func(in *input) {
			in.classifier = NotProcessed(Evidence{Protocol: "h3", Code: 0x10b})
			in.class, in.notProcessed = attrs.ErrorClassRefusedStream, true
		})), attrs.DecisionRetry, attrs.ReasonClassifier, 40 * msec, false},
		{"classifier: not processed still within the attempt limit", attemptInput(write(func(in *input) {
			in.classifier = NotProcessed(Evidence{})
			in.class, in.notProcessed, in.attemptsLeft = attrs.ErrorClassRefusedStream, true, 0
		})), attrs.DecisionMaxAttempts, attrs.ReasonAttemptLimit, 0, false},

		// The idempotency-key draft's answers, for a request that carries a key.
		{"keyed 409 retries after a pause", attemptInput(with(status(409, false), keyed)),
			attrs.DecisionRetry, attrs.ReasonKeyInProgress, 40 * msec, false},
		{"keyed 409 waits for its Retry-After", attemptInput(with(status(409, false), keyed, func(in *input) { in.retryAfter = 120 * msec })),
			attrs.DecisionRetry, attrs.ReasonKeyInProgress, 120 * msec, false},
		{"keyed 409 within the attempt limit", attemptInput(with(status(409, false), keyed, func(in *input) { in.attemptsLeft = 0 })),
			attrs.DecisionMaxAttempts, attrs.ReasonAttemptLimit, 0, false},
		{"keyed 409 within the budget", attemptInput(with(status(409, false), keyed, func(in *input) { in.budget = attrs.ReasonBudget })),
			attrs.DecisionBudgetExhausted, attrs.ReasonBudget, 0, false},
		{"keyed 409: the classifier's NotRetryable wins", attemptInput(with(status(409, false), keyed, func(in *input) { in.classifier = NotRetryable() })),
			attrs.DecisionStop, attrs.ReasonClassifier, 0, false},
		{"keyed 409: the service's false wins", attemptInput(with(status(409, false), keyed, func(in *input) { in.verdict = verdictNoRetry })),
			attrs.DecisionStop, attrs.ReasonServerNoRetry, 0, false},
		{"unkeyed 409 stops", attemptInput(status(409, false)), attrs.DecisionStop, attrs.ReasonStatus, 0, false},
		{"keyed 422 stops, never resent", attemptInput(with(status(422, false), keyed)), attrs.DecisionStop, attrs.ReasonKeyReused, 0, false},
		{"keyed 422: the service's true does not resend it", attemptInput(with(status(422, false), keyed, func(in *input) { in.verdict = verdictRetry })),
			attrs.DecisionStop, attrs.ReasonKeyReused, 0, false},
		{"keyed 422: the classifier's Retryable wins", attemptInput(with(status(422, false), keyed, func(in *input) { in.classifier = Retryable(0) })),
			attrs.DecisionRetry, attrs.ReasonClassifier, 40 * msec, false},
		{"unkeyed 422 stops as any status", attemptInput(status(422, false)), attrs.DecisionStop, attrs.ReasonStatus, 0, false},
		{"keyed 400 stops as any 400", attemptInput(with(status(400, false), keyed)), attrs.DecisionStop, attrs.ReasonStatus, 0, false},
		{"a keyed write's lost answer is resent", attemptInput(with(class(attrs.ErrorClassConnectionReset), keyed, func(in *input) { in.write, in.written = true, true })),
			attrs.DecisionRetry, attrs.ReasonRetryableError, 40 * msec, false},
		{"a keyed write's lost answer at the attempt limit is looked up, whatever the pause", attemptInput(with(class(attrs.ErrorClassConnectionReset), keyed, func(in *input) {
			in.write, in.written, in.stateCheck, in.attemptsLeft, in.remaining = true, true, true, 0, 40*msec
		})), attrs.DecisionCheckState, attrs.ReasonUnknownWrite, 0, true},
		{"a keyed write's lost answer at the attempt limit with no time left keeps the deadline", attemptInput(with(class(attrs.ErrorClassTimeout), keyed, func(in *input) {
			in.write, in.written, in.stateCheck, in.attemptsLeft, in.remaining = true, true, true, 0, 0
		})), attrs.DecisionDeadlineExceeded, attrs.ReasonDeadline, 0, true},
		{"a keyed write's lost answer whose pause does not fit keeps the deadline", attemptInput(with(class(attrs.ErrorClassConnectionReset), keyed, func(in *input) {
			in.write, in.written, in.stateCheck, in.remaining = true, true, true, 40*msec
		})), attrs.DecisionDeadlineExceeded, attrs.ReasonDeadline, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := decide(tc.in)
			if v.decision != tc.want || v.reason != tc.reason || v.pause != tc.pause || v.unknownWrite != tc.unkn {
				t.Fatalf("decide = %+v; want %s (%s) pause %v unknownWrite %v", v, tc.want, tc.reason, tc.pause, tc.unkn)
			}
			if want := reference(tc.in); want != v {
				t.Fatalf("decide = %+v, the decision table says %+v", v, want)
			}
		})
	}
}

func TestDecideAsksThePauseOnlyForARetryableAnswer(t *testing.T) {
	for _, status := range []int{200, 404, 500} {
		in := attemptInput(func(in *input) { in.status, in.pauseAsked = status, false })
		if v := decide(in); v.needPause {
			t.Errorf("status %d asks the Backoff: %+v", status, v)
		}
	}
	in := attemptInput(func(in *input) { in.status, in.retryableStatus, in.pauseAsked = 503, true, false })
	if v := decide(in); !v.needPause || v.needBudget {
		t.Fatalf("a retryable 503 with no pause yet: %+v, want needPause", v)
	}
}

func TestDecideAsksTheBudgetLast(t *testing.T) {
	in := attemptInput(func(in *input) { in.status, in.retryableStatus, in.budgetAsked = 503, true, false })
	if v := decide(in); v.decision != attrs.DecisionRetry || !v.needBudget {
		t.Fatalf("unasked budget: %+v, want retry needing the budget", v)
	}
	in.remaining = 10 * msec
	if v := decide(in); v.needBudget {
		t.Fatalf("a retry the deadline forbids asks the budget: %+v", v)
	}
}

func TestDecideBeforeCall(t *testing.T) {
	cases := []struct {
		in   input
		want attrs.Decision
	}{
		{input{remaining: time.Second}, ""},
		{input{remaining: 0}, attrs.DecisionDeadlineExceeded},
		{input{remaining: time.Second, callerCanceled: true}, attrs.DecisionCanceled},
		{input{remaining: time.Second, callerDeadline: true}, attrs.DecisionDeadlineExceeded},
	}
	for _, tc := range cases {
		tc.in.phase = phaseBeforeCall
		if v := decide(tc.in); v.decision != tc.want || v.pause != 0 {
			t.Errorf("decide(%+v) = %+v, want %q", tc.in, v, tc.want)
		}
	}
}

// A preparation that ends because time ran out (its PrepareAttemptFunc saw its
// context end, its GetBody failed) ends deadline_exceeded or canceled, not
// stop: the hook's failure was the clock's.
func TestDecidePreparedTimeComesFirst(t *testing.T) {
	cases := []struct {
		name   string
		in     input
		want   attrs.Decision
		reason attrs.Reason
	}{
		{"prepared in time", input{remaining: time.Second}, "", ""},
		{"the PrepareAttemptFunc failed", input{remaining: time.Second, prepareFailed: true}, attrs.DecisionStop, attrs.ReasonPrepareFailed},
		{"GetBody failed", input{remaining: time.Second, bodyUnavailable: true}, attrs.DecisionStop, attrs.ReasonNotReplayable},
		{"two different idempotency keys", input{remaining: time.Second, keyConflict: true}, attrs.DecisionStop, attrs.ReasonKeyConflict},
		{"the PrepareAttemptFunc failed, with two keys", input{remaining: time.Second, keyConflict: true, prepareFailed: true}, attrs.DecisionStop, attrs.ReasonPrepareFailed},
		{"two keys, and the caller canceled", input{remaining: time.Second, keyConflict: true, callerCanceled: true}, attrs.DecisionCanceled, attrs.ReasonCaller},
		{"the deadline passed while the PrepareAttemptFunc waited", input{remaining: -msec, prepareFailed: true}, attrs.DecisionDeadlineExceeded, attrs.ReasonDeadline},
		{"the caller's deadline passed while it waited", input{remaining: -msec, callerDeadline: true, prepareFailed: true}, attrs.DecisionDeadlineExceeded, attrs.ReasonCaller},
		{"the caller canceled while it waited", input{remaining: time.Second, callerCanceled: true, prepareFailed: true}, attrs.DecisionCanceled, attrs.ReasonCaller},
	}
	for _, tc := range cases {
		tc.in.phase = phasePrepared
		v := decide(tc.in)
		if v.decision != tc.want || v.reason != tc.reason {
			t.Errorf("%s: decide = %+v, want %q (%s)", tc.name, v, tc.want, tc.reason)
		}
		if want := reference(tc.in); want != v {
			t.Errorf("%s: decide = %+v, the decision table says %+v", tc.name, v, want)
		}
	}
}

func TestDecideAfterStateCheck(t *testing.T) {
	cases := []struct {
		result       attrs.StateCheckResult
		remaining    time.Duration
		attemptsLeft int
		replayable   bool
		want         attrs.Decision
	}{
		{attrs.StateApplied, time.Second, 1, true, attrs.DecisionReturn},
		{attrs.StateNotApplied, time.Second, 1, true, attrs.DecisionRetry},
		{attrs.StateNotApplied, time.Second, 0, true, attrs.DecisionMaxAttempts},
		{attrs.StateNotApplied, 0, 1, true, attrs.DecisionDeadlineExceeded},
		{attrs.StateNotApplied, time.Second, 1, false, attrs.DecisionStop},
		{attrs.StateUnknown, time.Second, 1, true, attrs.DecisionCheckState},
		{"garbage", time.Second, 1, true, attrs.DecisionCheckState},
	}
	for _, tc := range cases {
		in := input{phase: phaseStateCheck, state: tc.result, remaining: tc.remaining, attemptsLeft: tc.attemptsLeft,
			replayable: tc.replayable, budgetAsked: true}
		if v := decide(in); v.decision != tc.want || v.pause != 0 {
			t.Errorf("after %s (remaining %v, %d left, replayable %v): %+v, want %s", tc.result, tc.remaining, tc.attemptsLeft, tc.replayable, v, tc.want)
		}
		if want := reference(in); want != decide(in) {
			t.Errorf("after %s: decide = %+v, the decision table says %+v", tc.result, decide(in), want)
		}
	}
}

// FuzzDecide holds decide to the decision table (reference) on arbitrary
// inputs, hooks and intent included, and checks the invariants no input
// may break: a decision and a reason from the closed sets; a write that may
// have been applied is never retried; no pause reaches the deadline; return
// only for a success.
func FuzzDecide(f *testing.F) {
	f.Add(uint8(2), true, 503, uint8(0), true, int64(300), 2, int64(40), int64(0), true, uint8(0), uint8(0), false, uint8(0), false, false, true, false, false, uint8(0), uint8(0), uint8(0))
	f.Add(uint8(2), false, 0, uint8(0), false, int64(300), 2, int64(40), int64(0), true, uint8(0), uint8(0), false, uint8(0), false, false, true, false, false, uint8(0), uint8(0), uint8(0))
	f.Add(uint8(2), false, 0, uint8(6), false, int64(10), 0, int64(40), int64(5000), false, uint8(3), uint8(1), true, uint8(1), true, false, true, false, false, uint8(0), uint8(0), uint8(0))
	f.Add(uint8(3), false, 0, uint8(0), false, int64(10), 1, int64(0), int64(0), true, uint8(0), uint8(0), false, uint8(2), false, true, true, false, false, uint8(0), uint8(0), uint8(0))
	f.Add(uint8(1), false, 0, uint8(0), false, int64(-5), 2, int64(0), int64(0), true, uint8(0), uint8(0), false, uint8(0), false, false, false, false, false, uint8(4), uint8(0), uint8(0))
	f.Add(uint8(2), true, 0, uint8(0), false, int64(300), 0, int64(40), int64(0), true, uint8(0), uint8(0), false, uint8(0), false, false, true, true, false, uint8(3), uint8(0), uint8(0))
	// Hedging: a hedge decided (phaseHedge), an attempt superseded, a retry while a hedge is in flight.
	f.Add(uint8(4), true, 0, uint8(0), false, int64(300), 2, int64(40), int64(0), true, uint8(0), uint8(0), true, uint8(0), false, false, true, false, false, uint8(0), uint8(0b011100), uint8(0))
	f.Add(uint8(2), true, 200, uint8(0), false, int64(300), 2, int64(40), int64(0), true, uint8(0), uint8(0), false, uint8(0), false, false, true, false, false, uint8(0), uint8(0b01), uint8(0))
	f.Add(uint8(2), true, 503, uint8(0), true, int64(300), 0, int64(40), int64(0), true, uint8(0), uint8(0), false, uint8(0), false, false, false, false, false, uint8(0), uint8(0b10), uint8(0))
	// A retry after a race whose hint (310ms left of it) outlasts the backoff, and one it would take past the deadline.
	f.Add(uint8(2), true, 503, uint8(0), true, int64(1000), 2, int64(10), int64(0), true, uint8(0), uint8(0), true, uint8(0), false, false, true, false, false, uint8(0), uint8(0b11000000), uint8(0))
	f.Add(uint8(2), true, 503, uint8(0), true, int64(300), 2, int64(10), int64(0), true, uint8(0), uint8(0), true, uint8(0), false, false, true, false, false, uint8(0), uint8(0b11000000), uint8(0))
	// The idempotency-key draft's answers to a keyed request: 409, 422; two keys at the preparation.
	f.Add(uint8(2), true, 409, uint8(0), false, int64(300), 2, int64(40), int64(100), true, uint8(0), uint8(0), true, uint8(0), false, false, true, false, false, uint8(1), uint8(0), uint8(1))
	f.Add(uint8(2), true, 422, uint8(0), false, int64(300), 2, int64(40), int64(0), true, uint8(0), uint8(0), true, uint8(0), false, false, true, false, false, uint8(1), uint8(0), uint8(1))
	f.Add(uint8(1), false, 0, uint8(0), false, int64(300), 2, int64(0), int64(0), true, uint8(0), uint8(0), false, uint8(0), false, false, false, false, false, uint8(1), uint8(0), uint8(2))
	f.Fuzz(func(t *testing.T, phaseIdx uint8, repeatable bool, status int, classIdx uint8, retryableStatus bool,
		remainingMs int64, attemptsLeft int, backoffMs, retryAfterMs int64, replayable bool,
		classifierIdx, budgetIdx uint8, budgetAsked bool, stateIdx uint8, noRetry, caller bool, pauseAsked, written, callerDeadline bool,
		flags, race, keys uint8) {
		classes := attrs.ErrorClasses()
		classifiers := []Classification{{}, Retryable(time.Duration(backoffMs%97) * msec), NotRetryable(), NotProcessed(Evidence{Protocol: "h2"})}
		budgets := []attrs.Reason{"", attrs.ReasonBudget, attrs.ReasonPushback, attrs.ReasonHostLimit, attrs.ReasonThrottle}
		states := []attrs.StateCheckResult{attrs.StateApplied, attrs.StateNotApplied, attrs.StateUnknown, "garbage"}
		in := input{
			phase: phase(phaseIdx % 5), repeatable: repeatable, status: status, retryableStatus: retryableStatus,
			remaining: time.Duration(remainingMs) * msec, attemptsLeft: attemptsLeft,
			backoff: time.Duration(max(backoffMs, 0)) * msec, retryAfter: time.Duration(max(retryAfterMs, 0)) * msec,
			replayable: replayable, classifier: classifiers[int(classifierIdx)%len(classifiers)],
			budgetAsked: budgetAsked, budget: budgets[int(budgetIdx)%len(budgets)],
			state: states[int(stateIdx)%len(states)], noRetry: noRetry, callerCanceled: caller, pauseAsked: pauseAsked,
			written: written, callerDeadline: callerDeadline,
			write: flags&1 != 0, unresolvedWrite: flags&2 != 0, afterRetry: flags&4 != 0,
			bodyUnavailable: flags&8 != 0, prepareFailed: flags&16 != 0, prepareChanged: flags&32 != 0,
			verdict: serverVerdict(stateIdx / 4 % 3), verdictWrites: flags&128 != 0,
			superseded: race&1 != 0, othersInFlight: race&2 != 0, rateAsked: race&4 != 0, rateAllowed: race&8 != 0,
			hedgesLeft: int(race>>4) % 3,
			// A key makes a request repeatable: the policy never sees one
			// without the other.
			keyed: keys&1 != 0 && repeatable, keyConflict: keys&2 != 0, stateCheck: keys&4 != 0, noneWon: keys&8 != 0 && race&1 != 0,
			refused: keys&16 != 0, certificateRejected: keys&32 != 0,
		}
		if race>>6 == 3 {
			// What is left of a hint an earlier attempt of the race got.
			in.raceHint = time.Duration(uint64(backoffMs*31+retryAfterMs)%400) * msec
		}
		if flags&64 != 0 {
			in.drainFloor = 2 * msec
		}
		if pauseAsked && race&1 == 0 {
			// The hooks' time since the answer, part of the pause.
			in.sinceAnswer = time.Duration(uint64(remainingMs*13+backoffMs*7)%500) * msec
		}
		if status <= 0 {
			in.status = 0
			in.class = classes[int(classIdx)%len(classes)]
			in.notProcessed = in.class.NotProcessed()
			if in.classifier.kind == classNotProcessed {
				in.class, in.notProcessed = attrs.ErrorClassRefusedStream, true
			}
		}
		v := decide(in)
		if want := reference(in); v != want {
			t.Fatalf("decide(%+v) = %+v, the decision table says %+v", in, v, want)
		}
		if in.phase == phaseBeforeCall || in.phase == phasePrepared {
			if v.decision == attrs.DecisionRetry || (v.decision != "" && !v.decision.Terminal()) {
				t.Fatalf("before a call, the verdict is a go-ahead or terminal: %+v", v)
			}
			return
		}
		if in.phase == phaseHedge {
			sent := v == verdict{}
			if sent && (in.write || !in.repeatable || !in.replayable || in.noRetry || in.attemptsLeft <= 0 || in.hedgesLeft <= 0 ||
				in.remaining <= 0 || in.callerCanceled || in.callerDeadline || !in.budgetAsked || in.budget != "" || !in.rateAsked || !in.rateAllowed) {
				t.Fatalf("a hedge sent past a rule or a limit: %+v", in)
			}
			if v.needRate && (!in.budgetAsked || in.budget != "") {
				t.Fatalf("the hedge rate asked (a hedge taken) before the budget allowed one: %+v", in)
			}
			if v.decision == attrs.DecisionRetry || v.decision == attrs.DecisionSuperseded || v.pause != 0 || v.unknownWrite {
				t.Fatalf("a hedge's verdict is a go-ahead or a refusal, never a retry: %+v", v)
			}
			return
		}
		if in.phase == phaseAttempt && in.superseded != (v.decision == attrs.DecisionSuperseded) {
			t.Fatalf("superseded %v, decision %s: only an attempt another one beat is superseded, and it always is", in.superseded, v.decision)
		}
		if v.reason == attrs.ReasonInFlight && (!in.othersInFlight || in.remaining <= 0 || v.pause != 0 || v.needBudget || v.needPause) {
			t.Fatalf("a retry left to the attempt in flight with none in flight, or with a pause: %+v", v)
		}
		if v.unknownWrite && v.decision == attrs.DecisionRetry {
			t.Fatalf("a retry marked as ending with an unknown write: %+v", v)
		}
		if !v.decision.Valid() || !v.reason.Valid() {
			t.Fatalf("decision %q, reason %q: not in the closed sets", v.decision, v.reason)
		}
		if v.needPause {
			if in.pauseAsked || v.needBudget || v.decision != attrs.DecisionRetry {
				t.Fatalf("asks the Backoff again, or with the budget: %+v", v)
			}
			return
		}
		if v.decision == attrs.DecisionRetry && v.reason == attrs.ReasonInFlight {
			// The attempt in flight is the retry: no attempt is made, no
			// pause taken, no limit asked.
			if !in.repeatable && in.status == 0 && !in.notProcessed && !in.refused && !in.certificateRejected { // never sent
				t.Fatalf("a write that may have been applied (%s) was left to another attempt", in.class)
			}
		} else if v.decision == attrs.DecisionRetry {
			if max(v.pause-in.sinceAnswer, in.drainFloor) >= in.remaining || v.drain < v.pause {
				t.Fatalf("retry with a pause of %v and a drain of %v from an answer %v ago, and only %v left", v.pause, v.drain, in.sinceAnswer, in.remaining)
			}
			if in.attemptsLeft <= 0 || !in.replayable || (in.budgetAsked && in.budget != "") || in.noRetry {
				t.Fatalf("retry past a limit: %+v", in)
			}
			if in.phase == phaseAttempt {
				if v.pause < in.backoff || v.pause < in.retryAfter || v.pause < in.raceHint {
					t.Fatalf("pause %v shorter than backoff %v, Retry-After %v or the race's hint %v", v.pause, in.backoff, in.retryAfter, in.raceHint)
				}
				if !in.repeatable && in.status == 0 && !in.notProcessed {
					t.Fatalf("a write that may have been applied (%s, written %v) was retried", in.class, in.written)
				}
				if !in.repeatable && in.status != 0 && !(in.verdict == verdictRetry && in.verdictWrites) {
					t.Fatalf("a write was retried on status %d without the service's word", in.status)
				}
			}
		} else if v.pause != 0 || v.drain != 0 || v.needBudget || v.needPause {
			t.Fatalf("decision %s carries a pause %v or asks the budget", v.decision, v.pause)
		}
		if v.decision == attrs.DecisionReturn && in.phase == phaseAttempt && (in.status < 100 || in.status >= 400) {
			t.Fatalf("return for status %d", in.status)
		}
		// A lookup follows a write with no answer and no contract, or one
		// whose stopped resend left it unresolved, when there is a check.
		if v.decision == attrs.DecisionCheckState && in.phase == phaseAttempt &&
			!(!in.repeatable && in.status == 0 || (in.write || in.unresolvedWrite) && in.stateCheck) {
			t.Fatalf("check_state for write=%v repeatable=%v status=%d stateCheck=%v", in.write, in.repeatable, in.status, in.stateCheck)
		}
		if in.phase == phaseAttempt && in.keyed && in.status == 422 && v.decision == attrs.DecisionRetry && in.classifier.kind != classRetryable {
			t.Fatalf("a keyed request answered 422 (its key used with another payload) was resent: %+v", v)
		}
	})
}

// The pure rules beside decide, table by table.
func TestRulesBesideDecide(t *testing.T) {
	t.Run("planResends", func(t *testing.T) {
		for _, tc := range []struct {
			body, again, guarded, h2 bool
			want                     resendPlan
		}{
			{true, true, true, true, resendWithEvidence},
			{true, false, true, true, resendWithEvidence},
			{true, true, false, true, resendPrepared},
			{true, true, true, false, resendPrepared},
			{true, false, false, false, resendNever},
			{true, false, true, false, resendNever},
			{false, false, true, false, resendHiddenKeys},
			{false, false, true, true, resendHiddenKeys},
			{false, false, false, true, resendNone},
		} {
			if got := planResends(tc.body, tc.again, tc.guarded, tc.h2); got != tc.want {
				t.Errorf("planResends(body=%v, again=%v, guarded=%v, h2=%v) = %d, want %d", tc.body, tc.again, tc.guarded, tc.h2, got, tc.want)
			}
		}
	})
	t.Run("resendRefused", func(t *testing.T) {
		for _, tc := range []struct{ guarded, written, gotConn, connWriteFailed, want bool }{
			{false, true, true, false, false},
			{true, true, true, true, true},
			{true, false, true, false, true},
			{true, false, true, true, false}, // HTTP/1's resend of a request that never left
			{true, false, false, false, false},
		} {
			if got := resendRefused(tc.guarded, tc.written, tc.gotConn, tc.connWriteFailed); got != tc.want {
				t.Errorf("resendRefused(%+v) = %v", tc, got)
			}
		}
	})
	t.Run("recordedClass", func(t *testing.T) {
		h2 := Evidence{Class: attrs.ErrorClassRefusedStream, Protocol: "h2", Code: 7, Name: "REFUSED_STREAM"}
		goaway := Evidence{Class: attrs.ErrorClassRefusedStream, Protocol: "h2", Name: "GOAWAY"}
		for _, tc := range []struct {
			observed attrs.ErrorClass
			c        Classification
			wire     Evidence
			want     attrs.ErrorClass
			evidence Evidence
		}{
			{attrs.ErrorClassTimeout, NotProcessed(Evidence{}), Evidence{}, attrs.ErrorClassTimeout, Evidence{}},
			{attrs.ErrorClassTimeout, NotProcessed(h2), Evidence{}, attrs.ErrorClassRefusedStream, h2},
			{attrs.ErrorClassOther, Classification{}, goaway, attrs.ErrorClassRefusedStream, goaway},
			{attrs.ErrorClassOther, NotProcessed(h2), goaway, attrs.ErrorClassRefusedStream, h2},
			{"", NotProcessed(h2), goaway, "", Evidence{}}, // a response: no class
		} {
			got, ev := recordedClass(tc.observed, tc.c, tc.wire)
			if got != tc.want || ev != tc.evidence {
				t.Errorf("recordedClass(%s, %+v, %+v) = %s, %+v; want %s, %+v", tc.observed, tc.c, tc.wire, got, ev, tc.want, tc.evidence)
			}
		}
	})
	t.Run("recordedEvidence", func(t *testing.T) {
		h2 := Evidence{Class: attrs.ErrorClassRefusedStream, Protocol: "h2", Code: 7, Name: "REFUSED_STREAM"}
		for _, v := range []verdict{
			{decision: attrs.DecisionRetry, reason: attrs.ReasonNotProcessed},
			{decision: attrs.DecisionRetry, reason: attrs.ReasonServerRetry},
			{decision: attrs.DecisionStop, reason: attrs.ReasonIntent},
			{decision: attrs.DecisionStop, reason: attrs.ReasonNotReplayable},
			{decision: attrs.DecisionMaxAttempts, reason: attrs.ReasonAttemptLimit},
			{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonDeadline},
			{decision: attrs.DecisionBudgetExhausted, reason: attrs.ReasonBudget},
			{decision: attrs.DecisionCanceled, reason: attrs.ReasonCaller},
			{decision: attrs.DecisionSuperseded, reason: attrs.ReasonOtherAttempt},
		} {
			want := Evidence{}
			if v.decision == attrs.DecisionRetry {
				want = h2
			}
			if got := recordedEvidence(h2, v); got != want {
				t.Errorf("recordedEvidence on %s/%s = %+v, want %+v", v.decision, v.reason, got, want)
			}
		}
	})
	t.Run("whatCut", func(t *testing.T) {
		for _, tc := range []struct {
			timer       attemptCut
			callerErr   error
			callerBound bool
			want        attemptCut
		}{
			{cutByBase, nil, false, cutByBase},
			{cutByBase, nil, true, cutByBase},
			{cutByAttemptTimeout, nil, true, cutByAttemptTimeout},
			{cutByDeadline, nil, false, cutByDeadline},
			{cutByDeadline, nil, true, cutByCaller},                      // the deadline is the caller's
			{cutByDeadline, context.DeadlineExceeded, true, cutByCaller}, // both timers fired
			{cutByAttemptTimeout, context.Canceled, false, cutByCaller},  // the caller's cancellation first
			{cutByAttemptTimeout, context.DeadlineExceeded, false, cutByAttemptTimeout},
			{cutByBase, context.DeadlineExceeded, true, cutByCaller}, // its own context noticed first
			{cutByBase, context.Canceled, false, cutByCaller},
		} {
			if got := whatCut(tc.timer, tc.callerErr, tc.callerBound); got != tc.want {
				t.Errorf("whatCut(%d, %v, %v) = %d, want %d", tc.timer, tc.callerErr, tc.callerBound, got, tc.want)
			}
		}
	})
	t.Run("settleCut", func(t *testing.T) {
		base := errors.New("base")
		wrapped := fmt.Errorf("transport: %w", errAttemptTimeout)
		for _, tc := range []struct {
			name      string
			cut       attemptCut
			timedOut  bool
			callerErr error
			err       error
			drop      bool
			want      string // the error's text
			matches   []error
		}{
			{"an answer", cutByBase, false, nil, nil, false, "", nil},
			{"the base's failure", cutByBase, false, nil, base, false, "base", []error{base}},
			{"an answer by a hair after the timeout", cutByAttemptTimeout, true, nil, nil, true, errAttemptTimeout.Error(), []error{context.DeadlineExceeded}},
			{"an answer by a hair after the deadline", cutByDeadline, true, nil, nil, true, errDeadlineCut.Error(), []error{context.DeadlineExceeded}},
			{"the cause returned", cutByAttemptTimeout, true, nil, wrapped, false, wrapped.Error(), []error{errAttemptTimeout}},
			{"the context's end reported", cutByDeadline, true, nil, context.Canceled, false, errDeadlineCut.Error(), []error{errDeadlineCut}},
			{"another error beside the cause", cutByAttemptTimeout, true, nil, base, false, errAttemptTimeout.Error() + " (base)", []error{errAttemptTimeout, base}},
			{"the caller canceled", cutByCaller, false, context.Canceled, context.Canceled, false, callerCutError{context.Canceled}.Error(), []error{context.Canceled}},
			{"the caller's deadline", cutByCaller, false, context.DeadlineExceeded, base, false, callerCutError{context.DeadlineExceeded}.Error() + " (base)", []error{context.DeadlineExceeded, base}},
			{"an answer the caller gave up on", cutByCaller, false, context.Canceled, nil, false, "", nil},
		} {
			drop, err := settleCut(tc.cut, tc.timedOut, tc.callerErr, tc.err)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if drop != tc.drop || got != tc.want {
				t.Errorf("%s: settleCut = %v, %q; want %v, %q", tc.name, drop, got, tc.drop, tc.want)
			}
			for _, m := range tc.matches {
				if !errors.Is(err, m) {
					t.Errorf("%s: %v does not match %v", tc.name, err, m)
				}
			}
			if tc.cut != cutByCaller && errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v matches context.Canceled, though the caller did not cancel", tc.name, err)
			}
		}
	})
	t.Run("observedClass", func(t *testing.T) {
		if got := observedClass(attrs.ErrorClassOther, true, false, false, ""); got != attrs.ErrorClassTimeout {
			t.Errorf("timed out: %s", got)
		}
		if got := observedClass(attrs.ErrorClassTimeout, true, true, false, attrs.ErrorClassRaceLost); got != attrs.ErrorClassCanceled {
			t.Errorf("the caller canceled: %s", got)
		}
		if got := observedClass(attrs.ErrorClassConnectionReset, false, false, false, attrs.ErrorClassRaceLost); got != attrs.ErrorClassConnectionReset {
			t.Errorf("classified: %s", got)
		}
		if got := observedClass(attrs.ErrorClassCanceled, false, false, false, attrs.ErrorClassRaceLost); got != attrs.ErrorClassRaceLost {
			t.Errorf("canceled once another attempt won: %s", got)
		}
		if got := observedClass(attrs.ErrorClassCanceled, false, false, false, ""); got != attrs.ErrorClassOther {
			t.Errorf("canceled by nobody otelretry knows (the base's own), no race: %s, want other", got)
		}
	})
	t.Run("budgetCharge: a keyed 409's hint is its key's, not the host's", func(t *testing.T) {
		keyed := budgetCharge(&input{status: 409, keyed: true, repeatable: true}, time.Second, true)
		if !keyed.failure || keyed.pushback != 0 || keyed.hinted {
			t.Errorf("a keyed 409 with Retry-After: %+v, want a failure that holds back no other retry", keyed)
		}
		for _, in := range []input{{status: 503, retryableStatus: true, repeatable: true}, {status: 409, repeatable: true}, {status: 422, keyed: true, repeatable: true}} {
			if o := budgetCharge(&in, time.Second, true); o.pushback != time.Second || !o.hinted {
				t.Errorf("status %d (keyed %v) with Retry-After: %+v, want the host held back", in.status, in.keyed, o)
			}
		}
	})
	t.Run("budgetCharge", func(t *testing.T) {
		for _, tc := range []struct {
			name             string
			in               input
			failure, success bool
		}{
			{"a retryable status", input{status: 503, retryableStatus: true}, true, false},
			{"a retryable status of a write", input{status: 503, retryableStatus: true, write: true}, true, false},
			{"a status a classifier retries", input{status: 500, classifier: Retryable(0)}, true, false},
			{"a status a service's true verdict makes retryable", input{status: 500, repeatable: true, verdict: verdictRetry}, true, false},
			{"a write's status a true verdict makes retryable (WithShouldRetryWrites)", input{status: 409, write: true, verdict: verdictRetry, verdictWrites: true}, true, false},
			{"a write's true verdict, not opted in", input{status: 409, write: true, verdict: verdictRetry}, false, false},
			{"NotProcessed on a response (it does not apply)", input{status: 404, classifier: NotProcessed(Evidence{Protocol: "h2"})}, false, false},
			{"a status nobody retries", input{status: 500}, false, false},
			{"a keyed request's 409 (its key in progress), retried", input{status: 409, keyed: true, repeatable: true}, true, false},
			{"a keyed request's 422 (its key reused), never resent", input{status: 422, keyed: true, repeatable: true}, false, false},
			{"an unkeyed request's 409", input{status: 409, repeatable: true}, false, false},
			{"a success", input{status: 200}, false, true},
			{"a success with a true verdict", input{status: 200, repeatable: true, verdict: verdictRetry}, false, true},
			{"a transport error", input{class: attrs.ErrorClassTimeout}, true, false},
			{"the caller's cancellation", input{class: attrs.ErrorClassCanceled}, false, false},
		} {
			if o := budgetCharge(&tc.in, 0, false); o.failure != tc.failure || o.success != tc.success {
				t.Errorf("%s: %+v", tc.name, o)
			}
		}
	})
}

// A protocol's proof is of the last stream: after a layer below wrote the
// request more than once (net/http's own resends of a bodyless POST after
// a stream error), a REFUSED_STREAM on the last proved the whole attempt
// unprocessed, and otelretry resent a write the server had applied.
func TestProvedUnprocessed(t *testing.T) {
	for _, tc := range []struct {
		neverSent, written bool
		writes             int32
		trusted            bool
		c                  Classification
		wire, want         bool
	}{
		{true, false, 0, false, Classification{}, false, true},
		{true, true, 1, false, Classification{}, false, false}, // reported written, then a dial error: may have been applied
		{false, true, 1, false, NotProcessed(Evidence{}), false, true},
		{false, true, 1, false, Classification{}, true, true},
		{false, true, 0, false, NotProcessed(Evidence{}), false, true}, // a base that reports no writes
		{false, true, 9, false, NotProcessed(Evidence{}), false, false},
		{false, true, 2, false, Classification{}, true, false},
		{false, true, 2, true, NotProcessed(Evidence{}), false, true}, // a trusted base resends only on proof (quic-go)
		{false, false, 0, false, Classification{}, false, false},
	} {
		if got := provedUnprocessed(tc.neverSent, tc.written, tc.writes, tc.trusted, tc.c, tc.wire); got != tc.want {
			t.Errorf("provedUnprocessed(%+v) = %v", tc, got)
		}
	}
}

// The decision table, row by row: the one source of the table that
// FuzzDecide holds decide to (reference), and of the table in doc.go and
// docs/decisions.md, which TestDecisionTableIsGenerated holds to it. The
// first row that matches decides.
type decisionRow struct {
	phases []phase
	// The table's columns: what came back, the request, the decision and
	// the reason, as the docs show them.
	what, request, decision, reason string
	match                           func(in input) bool
	verdict                         func(in input) verdict
}

var (
	hedging      = []phase{phaseHedge}
	before       = []phase{phaseBeforeCall, phasePrepared}
	beforeFirst  = []phase{phaseBeforeCall}
	prepared     = []phase{phasePrepared}
	afterAttempt = []phase{phaseAttempt}
	afterCheck   = []phase{phaseStateCheck}
)

func always(input) bool { return true }

func is(d attrs.Decision, r attrs.Reason) func(input) verdict {
	return func(input) verdict { return verdict{decision: d, reason: r} }
}

// unknown is a verdict that ends the operation while a write may have
// been applied.
func unknown(d attrs.Decision, r attrs.Reason) func(input) verdict {
	return func(input) verdict { return verdict{decision: d, reason: r, unknownWrite: true} }
}

// retryRow is a retry, within the limits (refLimits), unless the intent
// forbids it; why is its reason.
func retryRow(why attrs.Reason) func(input) verdict {
	return func(in input) verdict {
		if in.noRetry {
			return refLookUp(in, verdict{decision: attrs.DecisionStop, reason: attrs.ReasonIntent})
		}
		if in.othersInFlight && in.remaining > 0 {
			return verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonInFlight}
		}
		if !in.pauseAsked && in.remaining > in.drainFloor { // no pause fits: the Backoff is not asked
			return verdict{decision: attrs.DecisionRetry, reason: why, needPause: true}
		}
		return refLookUp(in, refLimits(in, max(in.backoff, in.retryAfter, in.raceHint, in.classifier.pause), why))
	}
}

// refLookUp is footnote ²'s last rule: a write with no answer whose
// outcome is unresolved (lost or cut now, or unresolved before), whose
// resend the attempt limit, its body (known unsendable, or its GetBody
// failing as the resend is prepared), its preparation or the intent stops (whatever the
// pause the deadline checked first), is looked up when there is a state
// check.
func refLookUp(in input, v verdict) verdict {
	lost := !in.notProcessed &&
		(in.written || in.cutBelow || in.class == attrs.ErrorClassTimeout || in.class == attrs.ErrorClassConnectionReset)
	unresolved := noResponse(in) && (in.unresolvedWrite || in.phase == phaseAttempt && in.write && lost)
	stopped := v.reason == attrs.ReasonAttemptLimit || v.reason == attrs.ReasonNotReplayable || v.reason == attrs.ReasonIntent || v.reason == attrs.ReasonPrepareFailed ||
		v.reason == attrs.ReasonDeadline && in.remaining > 0 && (in.attemptsLeft <= 0 || !in.replayable)
	if in.stateCheck && unresolved && stopped {
		return verdict{decision: attrs.DecisionCheckState, reason: attrs.ReasonUnknownWrite, unknownWrite: true}
	}
	return v
}

// refLimits are the limits of a retry, in the table's order (footnote ²).
func refLimits(in input, pause time.Duration, why attrs.Reason) verdict {
	drain := max(pause, in.drainFloor)
	switch {
	case in.remaining <= max(pause-in.sinceAnswer, in.drainFloor): // counted from the answer
		return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonDeadline}
	case in.attemptsLeft <= 0:
		return verdict{decision: attrs.DecisionMaxAttempts, reason: attrs.ReasonAttemptLimit}
	case !in.replayable:
		return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonNotReplayable}
	case !in.budgetAsked:
		return verdict{decision: attrs.DecisionRetry, pause: pause, drain: drain, reason: why, needBudget: true}
	case in.budget == attrs.ReasonThrottle:
		return verdict{decision: attrs.DecisionThrottled, reason: in.budget}
	case in.budget != "":
		return verdict{decision: attrs.DecisionBudgetExhausted, reason: in.budget}
	}
	return verdict{decision: attrs.DecisionRetry, pause: pause, drain: drain, reason: why}
}

func answered(in input) bool { return in.status != 0 }

func noResponse(in input) bool { return in.status == 0 }

var decisionRows = []decisionRow{
	// Before a call, and once the attempt is prepared.
	{before, "the caller canceled", "any", "`canceled`, no call made", "`caller`",
		func(in input) bool { return in.callerCanceled }, is(attrs.DecisionCanceled, attrs.ReasonCaller)},
	{before, "the caller's deadline passed", "any", "`deadline_exceeded`, no call made", "`caller`",
		func(in input) bool { return in.callerDeadline }, is(attrs.DecisionDeadlineExceeded, attrs.ReasonCaller)},
	{before, "no time left for the call a retry planned (work after the decision took it); an `attempt_abandoned` event on the operation span", "any",
		"`deadline_exceeded`, no call made", "`overrun`",
		func(in input) bool { return in.remaining <= 0 && in.afterRetry }, is(attrs.DecisionDeadlineExceeded, attrs.ReasonOverrun)},
	{before, "no time left", "any", "`deadline_exceeded`, no call made", "`deadline`",
		func(in input) bool { return in.remaining <= 0 }, is(attrs.DecisionDeadlineExceeded, attrs.ReasonDeadline)},
	{beforeFirst, "the client-side throttle (`WithThrottle`) refused the operation's first attempt (the admission asks nothing else of a first attempt)", "any",
		"`throttled`, no call made", "`throttle`",
		func(in input) bool { return in.budget != "" },
		func(in input) verdict {
			if in.budget != attrs.ReasonThrottle {
				return verdict{decision: attrs.DecisionBudgetExhausted, reason: in.budget}
			}
			return verdict{decision: attrs.DecisionThrottled, reason: in.budget}
		}},
	{prepared, "`GetBody` failed (an error, or no body and no error)", "any", "`stop`, no call made (a repeatable write whose outcome is unresolved: `check_state`, reason `unknown_write`²)", "`not_replayable`",
		func(in input) bool { return in.bodyUnavailable },
		func(in input) verdict {
			return refLookUp(in, verdict{decision: attrs.DecisionStop, reason: attrs.ReasonNotReplayable})
		}},
	{prepared, "the `PrepareAttemptFunc` failed, or changed the method, the host or (after the first attempt) the idempotency-key contract's headers, or made a header or trailer net/http's `Transport` refuses (checked with net/http's `Transport` as the base, over http or https, where the fields were sendable before the hook, or for a hedge), or made a hedge that asks to switch protocols (an `Upgrade` the `Connection` field names)", "any",
		"`stop`, no call made (a repeatable write whose outcome is unresolved: `check_state`, reason `unknown_write`²)", "`prepare_failed`",
		func(in input) bool { return in.prepareFailed || in.prepareChanged },
		func(in input) verdict {
			return refLookUp(in, verdict{decision: attrs.DecisionStop, reason: attrs.ReasonPrepareFailed})
		}},
	{prepared, "two different idempotency keys in the contract's headers (the caller's, or one a `PrepareAttemptFunc` added beside the generated key)", "any",
		"`stop`, no call made", "`key_conflict`",
		func(in input) bool { return in.keyConflict }, is(attrs.DecisionStop, attrs.ReasonKeyConflict)},

	// After an attempt.
	{afterAttempt, "anything, after another attempt of the operation (a hedge, or the attempt it hedged) won, or ended it with no answer (the caller gone or no time left: `operation_ended`, no attempt won): it was canceled", "any",
		"`superseded`: its answer discarded; it ends nothing", "`other_attempt` / `operation_ended`",
		func(in input) bool { return in.superseded },
		func(in input) verdict {
			if in.noneWon {
				return verdict{decision: attrs.DecisionSuperseded, reason: attrs.ReasonOperationEnded}
			}
			return verdict{decision: attrs.DecisionSuperseded, reason: attrs.ReasonOtherAttempt}
		}},
	{afterAttempt, "no response, and the caller canceled", "repeatable¹ / not", "`canceled`; a write in flight matches `ErrOutcomeUnknown`", "`caller`",
		func(in input) bool {
			return noResponse(in) && in.callerCanceled
		},
		func(in input) verdict {
			return verdict{decision: attrs.DecisionCanceled, reason: attrs.ReasonCaller, unknownWrite: in.write && !in.notProcessed}
		}},
	{afterAttempt, "no response, and the caller's deadline passed", "repeatable¹ / not",
		"`deadline_exceeded`, no state check; a write in flight matches `ErrOutcomeUnknown`", "`caller`",
		func(in input) bool { return noResponse(in) && in.callerDeadline },
		func(in input) verdict {
			return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonCaller, unknownWrite: in.write && !in.notProcessed}
		}},
	{afterAttempt, "2xx, 3xx, 101", "any", "`return`", "`response`",
		func(in input) bool { return answered(in) && success(in.status) }, is(attrs.DecisionReturn, attrs.ReasonResponse)},
	{afterAttempt, "a failed answer after the caller canceled", "any", "`canceled` (the answer is returned)", "`caller`",
		func(in input) bool { return answered(in) && in.callerCanceled }, is(attrs.DecisionCanceled, attrs.ReasonCaller)},
	{afterAttempt, "a failed answer after the caller's deadline passed", "any", "`deadline_exceeded` (the answer is returned)", "`caller`",
		func(in input) bool { return answered(in) && in.callerDeadline }, is(attrs.DecisionDeadlineExceeded, attrs.ReasonCaller)},
	{afterAttempt, "no response, and nothing proves it unsent (neither the error nor a Classifier's `NotProcessed`, row 17): a timeout, a broken connection, a cut by a layer below (its own cancellation), any failure after the headers reached the wire (httptrace), or any failure before a base other than net/http's `Transport` reported anything through httptrace (a custom one; any below a layer); nothing proves a write unsent whose own body, or a copy a layer below took with `GetBody`, broke as it was read, whatever its error or a Classifier says (a protocol's code in it may be the body's)", "write, not repeatable¹",
		"`check_state`: **not resent**", "`unknown_write`",
		func(in input) bool {
			return noResponse(in) && !in.repeatable && !in.notProcessed &&
				(in.written || in.cutBelow || in.class == attrs.ErrorClassTimeout || in.class == attrs.ErrorClassConnectionReset)
		}, unknown(attrs.DecisionCheckState, attrs.ReasonUnknownWrite)},
	{afterAttempt, "the classifier says `NotRetryable`", "any", "`stop`", "`classifier`",
		func(in input) bool { return in.classifier.kind == classNotRetryable }, is(attrs.DecisionStop, attrs.ReasonClassifier)},
	{afterAttempt, "the classifier says `NotProcessed` (no response)", "any", "`retry`²", "`classifier`",
		func(in input) bool { return in.classifier.kind == classNotProcessed && noResponse(in) }, retryRow(attrs.ReasonClassifier)},
	{afterAttempt, "the classifier says `Retryable`", "repeatable¹, or proved unsent", "`retry`²", "`classifier`",
		func(in input) bool {
			return in.classifier.kind == classRetryable && (in.repeatable || (noResponse(in) && in.notProcessed))
		}, retryRow(attrs.ReasonClassifier)},
	{afterAttempt, "the classifier says `Retryable`", "not repeatable", "`stop`", "`not_idempotent`",
		func(in input) bool { return in.classifier.kind == classRetryable }, is(attrs.DecisionStop, attrs.ReasonNotIdempotent)},
	{afterAttempt, "the service says its answer must not be retried: a should-retry header (`Stripe-Should-Retry`, `X-Should-Retry`, or those `WithShouldRetryHeaders` names in their place; the first that says `true` or `false`) is `false`", "any",
		"`stop` (the answer is returned)", "`server_no_retry`",
		func(in input) bool { return answered(in) && in.verdict == verdictNoRetry }, is(attrs.DecisionStop, attrs.ReasonServerNoRetry)},
	{afterAttempt, "409 Conflict: a request with the same key is still being processed (the idempotency-key draft)", "carries an idempotency key³",
		"`retry`², after `Retry-After` where given", "`key_in_progress`",
		func(in input) bool { return answered(in) && in.keyed && in.status == 409 }, retryRow(attrs.ReasonKeyInProgress)},
	{afterAttempt, "422 Unprocessable Content: the key was used before with another payload (the draft)", "carries an idempotency key³",
		"`stop` (the answer is returned): **never resent**", "`key_reused`",
		func(in input) bool { return answered(in) && in.keyed && in.status == 422 }, is(attrs.DecisionStop, attrs.ReasonKeyReused)},
	{afterAttempt, "the service says the request may be repeated: a should-retry header is `true`", "repeatable¹, or any with `WithShouldRetryWrites` (recorded as evidence)",
		"`retry`²", "`server_retry`",
		func(in input) bool {
			return answered(in) && in.verdict == verdictRetry && (in.repeatable || in.verdictWrites)
		},
		retryRow(attrs.ReasonServerRetry)},
	{afterAttempt, "net/http's `Transport` (the base, or below a layer that wraps it, such as otelhttp's under `WithoutClientSpans`) refused the request itself, before asking for a connection: a header or trailer, the method (when no HTTP/2 connection to the host is pooled: the request then goes, and is answered) or the host it does not accept (below a wrapper, which a base of one's own may be, not a missing host), or a scheme no protocol is registered for; or, on a connection known to speak HTTP/2, before writing the headers, a field HTTP/2 forbids and HTTP/1 sends (a `Connection` other than one `close` or `keep-alive`, an `Upgrade` other than `chunked`, a `Transfer-Encoding` other than one `chunked`, as net/http reads them; a `Transfer-Encoding`, `Trailer` or `Content-Length` trailer), a `Host` it does not accept, a `:path` it cannot make (with an ASCII host; a non-ASCII host's `:path` is retried) or a header list over the peer's advertised limit (the caller's request: sent again, it is refused again; or an otelretry `Transport` below that `NewTransport` did not make)",
		"any", "`stop`, not charged to the retry budget (the host saw nothing); with another attempt in flight (a hedge its `PrepareAttemptFunc` made unsendable in a way its preparation does not check: another scheme), `retry` (`in_flight`): the race goes on", "`invalid_request`",
		func(in input) bool { return noResponse(in) && in.refused },
		func(in input) verdict {
			if in.othersInFlight && in.remaining > 0 {
				return verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonInFlight}
			}
			return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonInvalidRequest}
		}},
	{afterAttempt, "the client could not verify the server's TLS certificate (crypto/tls's `CertificateVerificationError`, or an error of crypto/x509's: an unknown authority, another host's name, expired or otherwise invalid; a `Classifier` may still retry it) (the same certificate fails again)",
		"any", "`stop` (nothing was sent); with another attempt in flight (a hedge's new connection met it), `retry` (`in_flight`): the race goes on", "`certificate`",
		func(in input) bool { return noResponse(in) && in.certificateRejected },
		func(in input) verdict {
			if in.othersInFlight && in.remaining > 0 {
				return verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonInFlight}
			}
			return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonCertificate}
		}},
	{afterAttempt, "an error that proves the request never left: connection refused, DNS, TLS handshake, dial (a proxy's refusal of its CONNECT too, which each retry meets again); a cut before the base reported a connection; a failed first write on a reused HTTP/1 connection (httptrace); net/http's \"server closed idle connection\" on a connection the trace saw it take (its text alone, from a base of one's own, proves nothing)",
		"any", "`retry`²", "`not_processed`",
		func(in input) bool { return noResponse(in) && in.notProcessed }, retryRow(attrs.ReasonNotProcessed)},
	{afterAttempt, "any other transport error", "repeatable¹", "`retry`²", "`retryable_error`",
		func(in input) bool { return noResponse(in) && in.repeatable }, retryRow(attrs.ReasonRetryableError)},
	{afterAttempt, "any other transport error", "not repeatable", "`stop`", "`not_idempotent`",
		noResponse, is(attrs.DecisionStop, attrs.ReasonNotIdempotent)},
	{afterAttempt, "408, 429, 502, 503, 504 (`WithRetryableStatuses`)", "repeatable¹", "`retry`² (a 429 without `Retry-After` holds its host's retries for the budget's `Pushback`, 1 s by default: a shorter pause ends `budget_exhausted`, reason `pushback`)", "`retryable_status`",
		func(in input) bool { return in.retryableStatus && in.repeatable }, retryRow(attrs.ReasonRetryableStatus)},
	{afterAttempt, "408, 429, 502, 503, 504 (`WithRetryableStatuses`)", "not repeatable", "`stop` (the answer is returned)", "`not_idempotent`",
		func(in input) bool { return in.retryableStatus }, is(attrs.DecisionStop, attrs.ReasonNotIdempotent)},
	{afterAttempt, "any other status", "any", "`stop` (the answer is returned)", "`status`", always, is(attrs.DecisionStop, attrs.ReasonStatus)},

	// After a state check of an unknown write.
	{afterCheck, "the state check says `applied`", "any", "`return` (the stored response)", "`state_applied`",
		func(in input) bool { return in.state == attrs.StateApplied }, is(attrs.DecisionReturn, attrs.ReasonStateApplied)},
	{afterCheck, "the caller gave up during the check (or its delay); the operation's own deadline passing there is not this row: the check's answer decides (row 34; or row 36, whose resend ² ends `deadline_exceeded`, the write known not applied)", "any", "`canceled` / `deadline_exceeded`; unknown unless `not_applied`", "`caller`",
		func(in input) bool { return in.callerCanceled || in.callerDeadline },
		func(in input) verdict {
			d := attrs.DecisionDeadlineExceeded
			if in.callerCanceled {
				d = attrs.DecisionCanceled
			}
			return verdict{decision: d, reason: attrs.ReasonCaller, unknownWrite: in.state != attrs.StateNotApplied}
		}},
	{afterCheck, "`unknown`, an answer outside the set, or an error", "any", "`check_state`", "`state_unknown`",
		func(in input) bool { return in.state != attrs.StateNotApplied }, unknown(attrs.DecisionCheckState, attrs.ReasonStateUnknown)},
	{afterCheck, "`not_applied`, and the intent forbids retries", "any", "`stop`", "`intent`",
		func(in input) bool { return in.noRetry }, is(attrs.DecisionStop, attrs.ReasonIntent)},
	{afterCheck, "`not_applied`", "any", "`retry`², with no pause", "`state_not_applied`", always,
		func(in input) verdict { return refLimits(in, 0, attrs.ReasonStateNotApplied) }},
}

// hedgeRows decide whether a hedge is sent once an attempt's hedge delay
// passed with no answer (phaseHedge): the first row that matches refuses
// it, recorded as a hedge_refused event with the reason, and the attempt
// in flight goes on; when none matches, the hedge is sent.
var hedgeRows = []decisionRow{
	{hedging, "the caller canceled", "any", "no hedge", "`caller`",
		func(in input) bool { return in.callerCanceled }, is(attrs.DecisionCanceled, attrs.ReasonCaller)},
	{hedging, "the caller's deadline passed", "any", "no hedge", "`caller`",
		func(in input) bool { return in.callerDeadline }, is(attrs.DecisionDeadlineExceeded, attrs.ReasonCaller)},
	{hedging, "an attempt in flight past the hedge delay", "a write, even under an idempotency-key contract (only safe methods and `Intent{Repeatable: true}` are hedged; writes do not race at all, and record nothing: the rule stands should one reach `decide`)",
		"no hedge", "`not_idempotent`",
		func(in input) bool { return in.write || !in.repeatable }, is(attrs.DecisionStop, attrs.ReasonNotIdempotent)},
	{hedging, "an attempt in flight past the hedge delay", "a body that cannot be replayed", "no hedge", "`not_replayable`",
		func(in input) bool { return !in.replayable }, is(attrs.DecisionStop, attrs.ReasonNotReplayable)},
	{hedging, "an attempt in flight past the hedge delay", "`Intent{NoRetry: true}` (which does not race either, and records nothing: the rule stands should one reach `decide`)", "no hedge", "`intent`",
		func(in input) bool { return in.noRetry }, is(attrs.DecisionStop, attrs.ReasonIntent)},
	{hedging, "no attempt left (hedges count as attempts); not reached: no hedge delay is armed then, and nothing is recorded", "any", "no hedge", "`attempt_limit`",
		func(in input) bool { return in.attemptsLeft <= 0 }, is(attrs.DecisionMaxAttempts, attrs.ReasonAttemptLimit)},
	{hedging, "the operation was admitted `MaxHedges` hedges; not reached: no hedge delay is armed then, and nothing is recorded", "any", "no hedge", "`hedge_limit`",
		func(in input) bool { return in.hedgesLeft <= 0 }, is(attrs.DecisionStop, attrs.ReasonHedgeLimit)},
	{hedging, "no time left", "any", "no hedge", "`deadline`",
		func(in input) bool { return in.remaining <= 0 }, is(attrs.DecisionDeadlineExceeded, attrs.ReasonDeadline)},
	{hedging, "the retry budget refuses: a hold, a full host table, or too few tokens for the host to keep more than half once the hedge takes one (the hedge the rate lent is given back)", "any", "no hedge", "`budget`, `pushback` or `host_limit`",
		func(in input) bool { return in.budgetAsked && in.budget != "" && in.budget != attrs.ReasonThrottle },
		func(in input) verdict { return verdict{decision: attrs.DecisionBudgetExhausted, reason: in.budget} }},
	{hedging, "the client-side throttle (`WithThrottle`) refuses it (its budget token and its hedge are given back)", "any", "no hedge", "`throttle`",
		func(in input) bool { return in.budgetAsked && in.budget == attrs.ReasonThrottle },
		is(attrs.DecisionThrottled, attrs.ReasonThrottle)},
	{hedging, "the dependency's hedge rate (`MaxShare`) has no hedge left (asked before the budget, which is then not asked: a hedge it refuses takes no token the hedges admitted with it would count)", "any", "no hedge", "`hedge_limit`",
		func(in input) bool { return in.budgetAsked && in.rateAsked && !in.rateAllowed }, is(attrs.DecisionStop, attrs.ReasonHedgeLimit)},
}

// refHedge is the hedge rows applied: a refusal, else the budget asked,
// then the rate, then the hedge sent (the zero verdict).
func refHedge(in input) verdict {
	for _, r := range hedgeRows {
		if r.match(in) {
			return r.verdict(in)
		}
	}
	switch {
	case !in.budgetAsked:
		return verdict{needBudget: true}
	case !in.rateAsked:
		return verdict{needRate: true}
	}
	return verdict{}
}

// reference is the decision table applied: the first row that matches,
// or a go-ahead before a call. A write whose outcome is unknown (no
// answer, or a 409 under its key) stays unknown to the end, unless a
// state check says it was not applied.
func reference(in input) verdict {
	if in.phase == phaseHedge {
		v := refHedge(in)
		v.unresolvedWrite = in.unresolvedWrite
		return v
	}
	var v verdict
	for _, r := range decisionRows {
		if slices.Contains(r.phases, in.phase) && r.match(in) {
			v = r.verdict(in)
			break
		}
	}
	unknownNow := in.phase == phaseAttempt && in.write && in.status == 0 && !in.notProcessed &&
		(in.written || in.cutBelow || in.class == attrs.ErrorClassTimeout || in.class == attrs.ErrorClassConnectionReset)
	// A write under a key (relied on or recorded) answered 409 (row 21):
	// its key's first request is in progress and may apply it, whatever
	// this operation hears next.
	unknownNow = unknownNow || in.phase == phaseAttempt && in.write && (in.keyed || in.recordedKey) && in.status == http.StatusConflict
	v.unresolvedWrite = (in.unresolvedWrite || unknownNow) && !(in.phase == phaseStateCheck && in.state == attrs.StateNotApplied)
	v.unresolves = unknownNow                              // bookkeeping, no column of the table
	v.unsent = in.phase == phaseAttempt && in.notProcessed // bookkeeping, no column of the table
	switch v.decision {
	case "", attrs.DecisionRetry, attrs.DecisionSuperseded, attrs.DecisionReturn:
	default:
		v.unknownWrite = v.unknownWrite || v.unresolvedWrite
	}
	return v
}

// tableRows are the rows the docs show: the decisions, then the hedges'.
func tableRows() []decisionRow { return slices.Concat(decisionRows, hedgeRows) }

// whenOf names a row's phases as the table does.
func whenOf(ps []phase) string {
	switch {
	case slices.Equal(ps, before):
		return "before a call"
	case slices.Equal(ps, beforeFirst):
		return "before the first call"
	case slices.Equal(ps, prepared):
		return "once prepared"
	case slices.Equal(ps, afterAttempt):
		return "after an attempt"
	case slices.Equal(ps, hedging):
		return "at the hedge delay"
	}
	return "after a state check"
}

// decisionTableMarkdown renders the table for docs/decisions.md.
func decisionTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| # | when | what came back | request | decision | reason |\n|---|---|---|---|---|---|\n")
	for i, r := range tableRows() {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i+1, whenOf(r.phases), r.what, r.request, r.decision, r.reason)
	}
	return b.String()
}

// decisionTableDoc renders the table for doc.go: a list, one row a line.
func decisionTableDoc() string {
	var b strings.Builder
	for i, r := range tableRows() {
		line := fmt.Sprintf("%d. %s, %s (%s): %s, reason %s", i+1, whenOf(r.phases), strings.ReplaceAll(r.what, "`", ""),
			strings.ReplaceAll(r.request, "`", ""), strings.ReplaceAll(r.decision, "`", ""), strings.ReplaceAll(r.reason, "`", ""))
		line = strings.NewReplacer("**", "", "¹", " [1]", "²", " [2]", "³", " [3]").Replace(line)
		b.WriteString(wrapDoc(line))
	}
	return b.String()
}

// wrapDoc wraps a list item of a doc comment at 76 columns, with its
// continuation lines indented under it.
func wrapDoc(s string) string {
	var b strings.Builder
	line := "//   - "
	for _, w := range strings.Fields(s) {
		if len(line)+len(w) > 76 && !strings.HasSuffix(line, "- ") && !strings.HasSuffix(line, "    ") {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = "//     "
		}
		line += w + " "
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}

var update = flag.Bool("update", false, "rewrite the generated decision tables")

// generated replaces what stands between the lines begin and end of file
// with body, and reports whether it changed; with -update it writes it.
func generated(t *testing.T, file, begin, end, body string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s: the generated table's markers %q and %q are missing", file, begin, end)
	}
	i += len(begin)
	if text[i:j] == body {
		return
	}
	if !*update {
		t.Errorf("%s: the decision table is not the one decisionRows gives; run go test -run TestDecisionTableIsGenerated -update", file)
		return
	}
	if err := os.WriteFile(file, []byte(text[:i]+body+text[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The decision table of doc.go and of docs/decisions.md is the one
// FuzzDecide holds decide to (decisionRows): generated from it, and held
// to it here.
func TestDecisionTableIsGenerated(t *testing.T) {
	generated(t, "../docs/decisions.md", "<!-- decision table: generated by TestDecisionTableIsGenerated; do not edit -->\n",
		"<!-- end of decision table -->", decisionTableMarkdown())
	generated(t, "doc.go", "// The rows, in order (generated from the decision table; see docs/decisions.md):\n//\n",
		"//\n// [1] Repeatable:", decisionTableDoc())
}

// Every reason and every decision of the closed sets is the verdict of
// some row, so that the table documents them all.
func TestDecisionTableCoversTheVocabulary(t *testing.T) {
	var text strings.Builder
	for _, r := range tableRows() {
		text.WriteString(r.decision + " " + r.reason + " ")
	}
	doc, err := os.ReadFile("../docs/decisions.md")
	if err != nil {
		t.Fatal(err)
	}
	footnote := string(doc[bytes.Index(doc, []byte("² Within the limits")):])
	for _, d := range attrs.Decisions() {
		if d == attrs.DecisionMaxAttempts || d == attrs.DecisionBudgetExhausted {
			// The limits of a retry, in footnote 2.
			if !strings.Contains(footnote, "`"+string(d)+"`") {
				t.Errorf("decision %s is in neither a row nor footnote 2", d)
			}
			continue
		}
		if !strings.Contains(text.String(), "`"+string(d)+"`") {
			t.Errorf("decision %s is in no row", d)
		}
	}
	for _, r := range attrs.Reasons() {
		switch r {
		case attrs.ReasonBudget, attrs.ReasonPushback, attrs.ReasonHostLimit, attrs.ReasonAttemptLimit, attrs.ReasonInFlight:
			// The limits of a retry, and a retry left to a hedge in flight,
			// in footnote 2.
			if !strings.Contains(footnote, "`"+string(r)+"`") {
				t.Errorf("reason %s is in neither a row nor footnote 2", r)
			}
			continue
		}
		if !strings.Contains(text.String(), "`"+string(r)+"`") {
			t.Errorf("reason %s is in no row", r)
		}
	}
}

// The second stage judges the key the prepared request carries: where it
// came from, its value, and two different keys in the contract's headers.
func TestJudgePreparedKeys(t *testing.T) {
	write := requestPlan{method: http.MethodPost, write: true}
	generated := write
	generated.generateKey = true
	contract := []string{"Idempotency-Key", "X-Idempotency-Key"}
	for _, tc := range []struct {
		name     string
		h        http.Header
		p        requestPlan
		names    []string
		recorded []string
		want     keyJudgment
	}{
		{"no key", http.Header{}, write, contract, nil, keyJudgment{judged: true, headers: `""""`}},
		{"generated", http.Header{"Idempotency-Key": {`"k1"`}}, generated, contract, nil,
			keyJudgment{judged: true, keyed: true, headers: `"\"k1\""""`, source: attrs.KeySourceGenerated, value: `"k1"`,
				conflictHeaders: []string{"Idempotency-Key"}}},
		{"the caller's", http.Header{"X-Idempotency-Key": {"k2"}}, write, contract, nil,
			keyJudgment{judged: true, keyed: true, headers: `"""k2"`, source: attrs.KeySourceCaller, value: "k2",
				conflictHeaders: []string{"X-Idempotency-Key"}}},
		{"recorded only", http.Header{"Idempotency-Key": {"k3"}}, write, nil, contract,
			keyJudgment{judged: true, recorded: true, source: attrs.KeySourceCaller, value: "k3"}},
		{"two keys", http.Header{"Idempotency-Key": {"a"}, "X-Idempotency-Key": {"b"}}, write, contract, nil,
			keyJudgment{judged: true, keyed: true, headers: `"a""b"`, source: attrs.KeySourceCaller, value: "a", conflict: true,
				conflictHeaders: []string{"Idempotency-Key", "X-Idempotency-Key"}}},
		{"a GET's key is no contract", http.Header{"Idempotency-Key": {"a"}}, requestPlan{method: http.MethodGet, safe: true}, contract, nil,
			keyJudgment{judged: true}},
	} {
		got := judgePrepared(tc.h, tc.p, tc.names, tc.recorded)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: judgePrepared = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// A header that may hold a key, in any spelling and with any value, is the
// caller's: no key is generated then.
func TestCarriesKey(t *testing.T) {
	names := []string{"Idempotency-Key", "X-Idempotency-Key"}
	for _, tc := range []struct {
		h    http.Header
		want bool
	}{
		{http.Header{}, false},
		{http.Header{"Authorization": {"x"}}, false},
		{http.Header{"Idempotency-Key": {""}}, true},
		{http.Header{"x-idempotency-key": {"k"}}, true},
	} {
		if got := carriesKey(tc.h, names); got != tc.want {
			t.Errorf("carriesKey(%v) = %v", tc.h, got)
		}
	}
}

// A PrepareAttemptFunc that changes, adds to or removes the generated key changed
// what the policy judged, on the first attempt as on later ones.
func TestPrepareChangedTheGeneratedKey(t *testing.T) {
	caller, _ := http.NewRequest(http.MethodPost, "http://api.test/orders", nil)
	p := requestPlan{method: http.MethodPost, write: true, generateKey: true}
	key := headerValue{"Idempotency-Key", `"k1"`}
	for _, tc := range []struct {
		h    http.Header
		want error
	}{
		{http.Header{"Idempotency-Key": {`"k1"`}}, nil},
		{http.Header{"Idempotency-Key": {`"k2"`}}, errPrepareKey},
		{http.Header{"Idempotency-Key": {`"k1"`, `"k2"`}}, errPrepareKey},
		{http.Header{}, errPrepareKey},
	} {
		prepared := caller.Clone(context.Background())
		prepared.Header = tc.h
		if got := prepareChanged(prepared, caller.URL, caller.Host, p, keyJudgment{}, nil, key); got != tc.want {
			t.Errorf("%v: prepareChanged = %v, want %v", tc.h, got, tc.want)
		}
	}
	prepared := caller.Clone(context.Background())
	if got := prepareChanged(prepared, caller.URL, caller.Host, p, keyJudgment{}, nil, headerValue{}); got != nil {
		t.Errorf("no generated key: %v", got)
	}
}

// Whether a phase re-arms the attempt timer depends on the phase and the
// request alone, never on the time left: the timer reads the clock only
// for a phase that re-arms (attemptTimer.entered).
func TestAttemptBoundRearmIgnoresTimeLeft(t *testing.T) {
	phases := []wirePhase{phaseSent, phaseGettingConn, phaseGotConn, phaseHeadersOut, phaseWritten, phaseGettingConnAgain}
	for _, ph := range phases {
		for _, cutRetryable := range []bool{false, true} {
			for _, hasBody := range []bool{false, true} {
				_, want := attemptBound(ph, cutRetryable, hasBody, time.Second, 0)
				for _, left := range []time.Duration{-time.Second, time.Millisecond, time.Second, time.Hour} {
					if _, got := attemptBound(ph, cutRetryable, hasBody, time.Second, left); got != want {
						t.Errorf("phase %d, cutRetryable %v, body %v: rearm %v with %v left, %v with none", ph, cutRetryable, hasBody, got, left, want)
					}
				}
			}
		}
	}
}

// The contract's headers are read in any spelling, as net/http sends them
// and servers read them: a key under a lower-case name is a key, and two
// spellings of one header carrying different keys are a conflict. The
// reading is the same each time, whatever the map's order.
func TestKeyHeadersAreReadInAnySpelling(t *testing.T) {
	names := []string{"Idempotency-Key"}
	lower := http.Header{"idempotency-key": {"k1"}}
	if keys, headers := keysIn(lower, names); len(keys) != 1 || keys[0] != "k1" || len(headers) != 1 {
		t.Errorf("keysIn of a lower-case name = %q, %q; want the key", keys, headers)
	}
	if _, keyed := contractHeaders(lower, names); !keyed {
		t.Error("contractHeaders of a lower-case name: no key")
	}
	both := http.Header{"Idempotency-Key": {"k1"}, "idempotency-key": {"k2"}, "IDEMPOTENCY-KEY": {"k3"}}
	if keys, _ := keysIn(both, names); !slices.Equal(keys, []string{"k1", "k3", "k2"}) {
		t.Errorf("keysIn of three spellings = %q; want the canonical one's first, then by spelling", keys)
	}
	first, _ := contractHeaders(both, names)
	for range 20 {
		if again, _ := contractHeaders(both, names); again != first {
			t.Fatalf("contractHeaders read %q, then %q", first, again)
		}
	}
}
