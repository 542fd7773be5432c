// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// phase is the point of an operation at which decide is asked.
type phase uint8

const (
	// phaseBeforeCall: before each network call (the first, and each one
	// after a pause). The verdict is empty when the call may go ahead.
	phaseBeforeCall phase = iota
	// phasePrepared: the attempt's request was prepared (its body taken,
	// the PrepareAttemptFunc run) and is about to be sent. The verdict is empty
	// when it may be sent.
	phasePrepared
	// phaseAttempt: after an attempt got a response's headers or failed.
	phaseAttempt
	// phaseStateCheck: after a state check answered for an unknown write.
	phaseStateCheck
	// phaseHedge: an attempt's hedge delay passed with no answer. The
	// verdict is empty when a hedge may be sent; otherwise it names the
	// limit that refuses it (the operation goes on).
	phaseHedge
)

// input is everything a decision depends on. The transport gathers it and
// carries out the verdict; decide reads nothing else: no clock, no I/O, no
// configuration, no hook.
type input struct {
	phase phase

	// callerCanceled, callerDeadline: the caller's context was canceled,
	// or its deadline passed.
	callerCanceled, callerDeadline bool

	// remaining is the operation's time left: before the call in
	// phaseBeforeCall and phasePrepared, after the attempt (or state
	// check) otherwise.
	remaining time.Duration
	// attemptsLeft is how many more calls the attempt limit allows.
	attemptsLeft int

	// repeatable: the request is safe to repeat: a safe method, a method
	// declared with WithIdempotentMethods, an idempotency key under
	// WithIdempotencyKeyContract, or Intent.Repeatable.
	repeatable bool
	// keyed: the request carries an idempotency key the policy relies on
	// (generated, or under WithIdempotencyKeyContract), which makes it
	// repeatable; the draft's answers (409, 422) then say what they mean.
	keyed bool
	// recordedKey: it carries a key the server honours that otelretry only
	// records (WithRecordedIdempotencyKey): a layer above resends under it.
	recordedKey bool
	// noRetry: the request's Intent forbids retries.
	noRetry bool
	// replayable: the body can be sent again (none, or GetBody set).
	replayable bool
	// write: the method is not safe (RFC 9110): the request may change
	// state on the server.
	write bool
	// unresolvedWrite: an earlier attempt of this operation was a write
	// whose outcome is unknown, and nothing resolved it since.
	unresolvedWrite bool
	// afterRetry: a retry was decided, and this is the call it planned:
	// whatever stops it now ran after the decision (see ReasonOverrun).
	afterRetry bool

	// phasePrepared: the attempt's body could not be had (GetBody failed);
	// the PrepareAttemptFunc failed; it changed what the policy judged (the
	// method, the host, or the idempotency-key contract's headers).
	bodyUnavailable, prepareFailed, prepareChanged bool
	// keyConflict: the prepared request carries two different idempotency
	// keys in the contract's headers (phasePrepared).
	keyConflict bool

	// The answer: a status, or an error class (never both).
	status int
	// retryableStatus: status is one the policy retries.
	retryableStatus bool
	class           attrs.ErrorClass
	// notProcessed: the error proves the server did not act on the
	// request (it never left, or the protocol says it was refused).
	notProcessed bool
	// refused: net/http's Transport refused the request itself, before
	// asking for a connection (attempt.refusedByTransport): the same
	// request is refused again, and its host saw nothing.
	refused bool
	// neverLeft: the attempt's failure proves its request never left the
	// client (a cut before the call, its trace, its error), and nothing
	// says it was written: its host saw nothing of it.
	neverLeft bool
	// certificateRejected: the client could not verify the server's
	// certificate: the same certificate fails again.
	certificateRejected bool
	// written: the base reported the request's headers written on the
	// wire (httptrace), so the server may have begun to act on it, or it
	// reported nothing at all (a custom base: nothing says it did not): a
	// failure after that, whatever its class, leaves a write's outcome
	// unknown, unless the error itself proves it never left.
	written bool
	// cutBelow: a layer below canceled the attempt in flight with its own
	// context (its context.Canceled, the caller's context alive; recorded
	// as other): a cut, which, as a timeout, says nothing of what the
	// server did.
	cutBelow bool

	// classifier is the user's classification, zero when none decided.
	classifier Classification
	// verdict is what the service said of retrying its answer (a
	// should-retry header); verdictWrites: its "true" may make a write
	// retryable.
	verdict       serverVerdict
	verdictWrites bool
	// stateCheck: WithStateCheck is set, so an unresolved write that a
	// limit keeps from being resent under its key is looked up (see
	// lookUpWhenStopped).
	stateCheck bool

	// backoff is the Backoff's pause once pauseAsked, retryAfter the
	// server's hint. The Backoff is asked only for an answer that may be
	// retried (see needPause).
	pauseAsked          bool
	backoff, retryAfter time.Duration
	// sinceAnswer is how long after the answer the Backoff's pause was
	// asked (the Classifier's, the Backoff's and the telemetry's time):
	// the pause counts from the answer (operation.pause), so that much of
	// it has passed when the decision is taken.
	sinceAnswer time.Duration
	// raceHint is what is left, at this attempt's end, of the hints
	// (Retry-After, a classifier's pause) that attempts of its race got
	// while they left the retry to an attempt still in flight.
	raceHint time.Duration
	// drainFloor is the least time the failed answer's small body may
	// take to drain before the next attempt (see drainFloor in body.go),
	// so that its connection is kept whatever the pause; 0 for any other
	// answer.
	drainFloor time.Duration

	// budget is the admission's answer once budgetAsked (the retry budget,
	// or the client-side throttle: see admission): "" when allowed, else
	// the refusal's reason. Before a call the throttle is asked of the
	// first attempt, and the budget's hold of a retry's call once its pause
	// is over.
	budgetAsked bool
	budget      attrs.Reason

	// state is the state check's answer (phaseStateCheck).
	state attrs.StateCheckResult

	// Hedging. superseded: another attempt of the operation answered
	// first, or ended it; othersInFlight: another attempt is in flight (a
	// hedge). noneWon: the attempt that ended the race had no answer (the
	// caller canceled, a deadline passed): no attempt won it.
	superseded, othersInFlight, noneWon bool
	// hedgesLeft is how many more hedges the operation may send
	// (phaseHedge); rateAsked, rateAllowed: the dependency's hedge rate
	// was asked, and allowed one.
	hedgesLeft             int
	rateAsked, rateAllowed bool
}

// The transport gathers a decision's input through the functions below,
// each of which returns a new value: what the operation knows at a point
// (inputAt), then what the attempt, the hooks or the state check added.

// callerState is what the caller's context says: canceled, or its
// deadline passed.
type callerState struct{ canceled, deadline bool }

// standing is where the operation stands: the calls it made, whether a
// write of it has an unknown outcome, and whether a retry was decided and
// its call not made yet.
type standing struct {
	attempts                    int
	unresolvedWrite, afterRetry bool
}

// inputAt is the input the operation knows at phase ph, with remaining
// time left: its policy p (replayable: its body can be had again), where
// it stands, and what the caller says.
func inputAt(ph phase, remaining time.Duration, p requestPolicy, replayable bool, s standing, c callerState) input {
	return input{
		phase:           ph,
		remaining:       remaining,
		attemptsLeft:    p.maxAttempts - s.attempts,
		repeatable:      p.repeatable,
		keyed:           p.keyed,
		recordedKey:     p.recordedKey,
		noRetry:         p.noRetry,
		replayable:      replayable,
		write:           p.write,
		unresolvedWrite: s.unresolvedWrite,
		afterRetry:      s.afterRetry,
		callerCanceled:  c.canceled,
		callerDeadline:  c.deadline,
		verdictWrites:   p.verdictWrites,
		stateCheck:      p.stateCheck,
	}
}

// prepared adds what the preparation came to (phasePrepared).
func (in input) prepared(bodyUnavailable, prepareFailed, prepareChanged, keyConflict bool) input {
	in.bodyUnavailable, in.prepareFailed, in.prepareChanged = bodyUnavailable, prepareFailed, prepareChanged
	in.keyConflict = keyConflict
	return in
}

// answered adds an attempt's answer: its status (retryable: one the
// policy retries), its retry hint, the drain floor of its body, the
// service's verdict, the classifier's, and the attempts left after it.
func (in input) answered(status int, retryable bool, retryAfter, drainFloor time.Duration, v serverVerdict, c Classification, attemptsLeft int) input {
	in.status, in.retryableStatus, in.retryAfter, in.drainFloor, in.verdict = status, retryable, retryAfter, drainFloor, v
	in.classifier, in.attemptsLeft = c, attemptsLeft
	return in
}

// failed adds an attempt's failure: its class as recorded, whether the
// request reached the wire, whether it proves it was not processed, what
// refused it (f), and whether a layer below cut it (cutBelow), the
// classifier's verdict, and the attempts left after it.
func (in input) failed(class attrs.ErrorClass, written, notProcessed bool, f refusal, cutBelow bool, c Classification, attemptsLeft int) input {
	in.class, in.written, in.notProcessed, in.cutBelow = class, written, notProcessed, cutBelow
	in.refused, in.certificateRejected = f.byTransport, f.certificate
	in.classifier, in.attemptsLeft = c, attemptsLeft
	return in
}

// withPause adds the Backoff's pause, asked at remaining time left, since
// after the answer, and what the caller came to by then (c: it may give
// up while the Backoff runs).
func (in input) withPause(backoff, remaining, since time.Duration, c callerState) input {
	in.pauseAsked, in.backoff, in.remaining, in.sinceAnswer = true, backoff, remaining, max(since, 0)
	in.callerCanceled, in.callerDeadline = c.canceled, c.deadline
	return in
}

// withBudget adds the retry budget's answer ("": allowed).
func (in input) withBudget(reason attrs.Reason) input {
	in.budgetAsked, in.budget = true, reason
	return in
}

// racing adds what the operation's other attempts came to: one answered
// first (superseded), or one is in flight; what is left of the hints its
// earlier attempts got (raceHint); and the attempts left once the race
// made its attempts.
func (in input) racing(superseded, noneWon, othersInFlight bool, hint time.Duration, attemptsLeft int) input {
	in.superseded, in.noneWon, in.othersInFlight, in.raceHint, in.attemptsLeft = superseded, superseded && noneWon, othersInFlight, max(hint, 0), attemptsLeft
	return in
}

// asItStoodAt is the input as it stood when the operation had remaining
// left and its caller still waited: a race judges an answer that came
// before a success as it stood when that success came, in time, so that
// the time its Classifier took, or the caller's end since, cannot turn
// the success away.
func (in input) asItStoodAt(remaining time.Duration) input {
	in.remaining, in.callerCanceled, in.callerDeadline = remaining, false, false
	return in
}

// hedging adds how many more hedges the operation may send (phaseHedge).
func (in input) hedging(hedgesLeft int) input {
	in.hedgesLeft = hedgesLeft
	return in
}

// withRate adds the dependency's hedge rate's answer.
func (in input) withRate(allowed bool) input {
	in.rateAsked, in.rateAllowed = true, allowed
	return in
}

// checked adds a state check's answer (phaseStateCheck).
func (in input) checked(state attrs.StateCheckResult) input {
	in.state = state
	return in
}

// verdict is what decide returns: the decision, the pause before the next
// attempt (decision retry), and the reason.
type verdict struct {
	decision attrs.Decision
	pause    time.Duration
	// drain bounds the drain of the discarded answer's body before the
	// next attempt: the pause, or the drain floor of a small body when the
	// pause is shorter (the drain usually ends at once; the next attempt
	// then starts when the pause has passed).
	drain  time.Duration
	reason attrs.Reason
	// unknownWrite: the operation ends while a write may have been applied
	// and its answer was lost (check_state, a cancellation while it was in
	// flight, or any other end after such an attempt).
	unknownWrite bool
	// unresolvedWrite: a write of this operation has an unknown outcome so
	// far; the operation carries it to its next decisions.
	unresolvedWrite bool
	// unsent: the attempt judged was proven not processed, so it never
	// reached the server as a copy of the request (see progress.landed).
	unsent bool
	// unresolves: the attempt judged itself left the write unresolved
	// (its answer lost, or a 409 under its key): the one a lookup of the
	// write is told of (see lookUpTarget).
	unresolves bool
	// needPause, needBudget: the answer may be retried, but the Backoff
	// (or the retry budget) was not asked yet; ask it and decide again
	// with its answer. Asking only then keeps a Backoff or a budget from
	// being consulted for an answer that ends the operation anyway.
	needPause, needBudget bool
	// needRate: a hedge may be sent, but the dependency's hedge rate was
	// not asked yet (it is asked last: asking takes a hedge).
	needRate bool
}

// goAhead reports whether a phaseBeforeCall verdict lets the call go ahead.
func (v verdict) goAhead() bool { return v.decision == "" }

// decide applies the decision rules. It is pure, and it is where the rules
// live, with the pure functions beside it in this file (the error class an
// attempt records, what the budget is charged, whether a layer below may
// resend): the transport gathers the input and carries out the verdict
// (docs/decisions.md).
func decide(in input) verdict {
	var v verdict
	switch in.phase {
	case phaseBeforeCall:
		v = decideBeforeCall(&in)
	case phasePrepared:
		v = decidePrepared(&in)
	case phaseStateCheck:
		v = decideAfterStateCheck(&in)
	case phaseHedge:
		v = decideHedge(&in)
	default:
		v = decideAfterAttempt(&in)
	}
	v.unsent = in.unsentAttempt()
	v.unresolves = in.phase == phaseAttempt && in.write && (outcomeUnknown(&in) || keyInProgress(&in))
	v.unresolvedWrite = unresolvedAfter(&in)
	// A refused hedge ends nothing: the attempt in flight goes on.
	if v.unresolvedWrite && in.phase != phaseHedge && !v.goAhead() && v.decision.Terminal() && v.decision != attrs.DecisionReturn {
		v.unknownWrite = true
	}
	return v
}

func decideBeforeCall(in *input) verdict {
	switch {
	case in.callerCanceled:
		return verdict{decision: attrs.DecisionCanceled, reason: attrs.ReasonCaller}
	case in.callerDeadline:
		return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonCaller}
	case in.remaining <= 0:
		return verdict{decision: attrs.DecisionDeadlineExceeded, reason: deadlineReason(in)}
	case in.phase == phaseBeforeCall && in.budget != "":
		return refused(in.budget)
	}
	return verdict{}
}

// refused is the verdict of a request the admission refused: throttled
// when the client-side throttle did, budget_exhausted when the retry
// budget did.
func refused(reason attrs.Reason) verdict {
	if reason == attrs.ReasonThrottle {
		return verdict{decision: attrs.DecisionThrottled, reason: reason}
	}
	return verdict{decision: attrs.DecisionBudgetExhausted, reason: reason}
}

// decidePrepared decides whether a prepared attempt may be sent: its body
// could be had, its PrepareAttemptFunc succeeded without changing what the
// policy judged, and time is left after the preparation.
func decidePrepared(in *input) verdict {
	// The caller giving up, or the deadline passing, during the preparation
	// ends it as such, whatever the PrepareAttemptFunc or GetBody made of it: a
	// hook that watched its context failed because time ran out.
	if v := decideBeforeCall(in); !v.goAhead() {
		return v
	}
	switch {
	case in.bodyUnavailable:
		// The resend's body could not be had, or the resend could not be
		// prepared: a repeatable write whose outcome is unresolved is
		// looked up, as one whose body is known unsendable is.
		return lookUpWhenStopped(in, verdict{decision: attrs.DecisionStop, reason: attrs.ReasonNotReplayable})
	case in.prepareFailed, in.prepareChanged:
		return lookUpWhenStopped(in, verdict{decision: attrs.DecisionStop, reason: attrs.ReasonPrepareFailed})
	case in.keyConflict:
		// No server can tell under which key such a request is repeated.
		return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonKeyConflict}
	}
	return verdict{}
}

// deadlineReason is the reason when no time is left for a call: the
// deadline, or, for the call a retry planned (whose pause was checked
// against the deadline), overrun: what ran after the decision took it.
func deadlineReason(in *input) attrs.Reason {
	if in.afterRetry {
		return attrs.ReasonOverrun
	}
	return attrs.ReasonDeadline
}

// unsentAttempt reports whether the input is an attempt's, proven not
// processed (see verdict.unsent).
func (in *input) unsentAttempt() bool { return in.phase == phaseAttempt && in.notProcessed }

// outcomeUnknown reports whether an attempt that got no answer may have
// been applied: nothing proves it was not processed, and it was written,
// timed out, was cut by a layer below, or lost its connection.
func outcomeUnknown(in *input) bool {
	return in.status == 0 && !in.notProcessed &&
		(in.written || in.cutBelow || in.class == attrs.ErrorClassTimeout || in.class == attrs.ErrorClassConnectionReset)
}

// unresolvedAfter reports whether the operation's write is unresolved
// after in: a write whose outcome is unknown (no answer, or a 409 under
// its key) stays unknown until a state check says otherwise, whatever
// ends the operation later.
func unresolvedAfter(in *input) bool {
	if in.phase == phaseStateCheck && in.state == attrs.StateNotApplied {
		return false // the check resolved it
	}
	return in.unresolvedWrite || (in.phase == phaseAttempt && in.write && (outcomeUnknown(in) || keyInProgress(in)))
}

// keyInProgress reports whether a write under a key, one the policy relies
// on or one it only records (an SDK's, which the SDK resends under), was
// answered 409: a request under its key is still being processed
// (decisions.md, row 21), which may apply the write whatever this
// operation hears next, so the answer settles nothing, and says nothing
// of the host's load.
func keyInProgress(in *input) bool {
	return (in.keyed || in.recordedKey) && in.status == http.StatusConflict
}

// settled is the verdict on an attempt that no retry rule may change,
// when there is one: another attempt answered first, the caller gave up or
// ran out of time, a success, or a write whose outcome is unknown.
func settled(in *input) (verdict, bool) {
	if in.superseded {
		// Another attempt answered first, or ended the operation: whatever
		// this one got is discarded.
		return verdict{decision: attrs.DecisionSuperseded, reason: supersededReason(in)}, true
	}
	if v, ok := callerEnded(in); ok {
		return v, true
	}
	if in.status != 0 && success(in.status) {
		return verdict{decision: attrs.DecisionReturn, reason: attrs.ReasonResponse}, true
	}
	// A write that may have been applied lost its answer. No rule and no
	// hook turns that into a resend; only the caller's word that the
	// request is repeatable does.
	if !in.repeatable && outcomeUnknown(in) {
		return verdict{decision: attrs.DecisionCheckState, reason: attrs.ReasonUnknownWrite, unknownWrite: true}, true
	}
	return verdict{}, false
}

// callerEnded is the verdict on an attempt whose caller gave up or ran out
// of time, unless it got a success: nothing follows, not even a state
// check.
func callerEnded(in *input) (verdict, bool) {
	answered := in.status != 0
	switch {
	case !answered && in.callerCanceled:
		// The caller gave up. A write in flight may still be applied, a
		// keyed one too: its key makes a resend safe, not its outcome
		// known.
		return verdict{decision: attrs.DecisionCanceled, reason: attrs.ReasonCaller,
			unknownWrite: in.write && !in.notProcessed}, true
	case !answered && in.callerDeadline:
		// The caller's deadline passed with no answer, and a write in
		// flight may still be applied (decide keeps it unknown).
		return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonCaller,
			unknownWrite: in.write && !in.notProcessed}, true
	case answered && !success(in.status) && (in.callerCanceled || in.callerDeadline):
		// A failed answer: no retry will follow, so none is recorded. The
		// answer is returned.
		return callerGone(in, false), true
	}
	return verdict{}, false
}

// endsWithoutAnswer reports whether an attempt that ends its race ends it
// with no answer, by the operation's end: the caller gave up, or no time
// is left (a retry decided then is the deadline's end, see applyLimits).
func endsWithoutAnswer(in *input) bool {
	return in.status == 0 && (in.callerCanceled || in.callerDeadline || in.remaining <= 0)
}

// cutClass is the error class of the attempts a race cancels once the
// attempt with input in ended it: race_lost when that attempt answered;
// when it ended the race with no answer, the class of the operation's end
// that cut them all, whichever timer told first (canceled for the
// caller's cancel, timeout for a deadline).
func cutClass(in *input) attrs.ErrorClass {
	switch {
	case !endsWithoutAnswer(in):
		return attrs.ErrorClassRaceLost
	case in.callerCanceled:
		return attrs.ErrorClassCanceled
	}
	return attrs.ErrorClassTimeout
}

// supersededReason tells why a superseded attempt ends nothing: another
// attempt answered first, or the race ended with no answer (the caller's
// cancel, a deadline), which another attempt's decision records: a race
// no attempt won is no hedge's discarded work, whatever this attempt got
// after its end.
func supersededReason(in *input) attrs.Reason {
	if in.noneWon {
		return attrs.ReasonOperationEnded
	}
	return attrs.ReasonOtherAttempt
}

// decideAfterAttempt decides what follows an attempt: its settled verdict
// when it has one, else whether the answer may be retried, and then the
// pause and the limits.
func decideAfterAttempt(in *input) verdict {
	if v, ok := settled(in); ok {
		return v
	}
	retryable, why := retryable(in)
	if !retryable {
		if (why == attrs.ReasonInvalidRequest || why == attrs.ReasonCertificate) && in.othersInFlight && in.remaining > 0 {
			// A hedge net/http refused (its PrepareAttemptFunc gave it
			// another scheme, which its preparation does not check), or
			// whose new connection met a certificate the client could
			// not verify: the attempt in flight, which carries the
			// caller's request (on a connection of its own), goes on.
			return verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonInFlight}
		}
		return verdict{decision: attrs.DecisionStop, reason: why}
	}
	if in.noRetry {
		return lookUpWhenStopped(in, verdict{decision: attrs.DecisionStop, reason: attrs.ReasonIntent})
	}
	if in.othersInFlight && in.remaining > 0 {
		// A hedge already in flight is the retry: no pause, and nothing
		// more to ask. At the deadline, the limits below end the race.
		return verdict{decision: attrs.DecisionRetry, reason: attrs.ReasonInFlight}
	}
	if !in.pauseAsked && in.remaining > in.drainFloor {
		// With no time left for even the drain, no pause could fit:
		// the Backoff is not asked (its own calls would find the
		// operation's deadline passed).
		return verdict{decision: attrs.DecisionRetry, reason: why, needPause: true}
	}
	pause := max(in.backoff, in.retryAfter, in.raceHint, in.classifier.pause)
	return lookUpWhenStopped(in, applyLimits(in, pause, why))
}

// lookUpWhenStopped turns what stops the resend of a repeatable write
// whose answer was lost (its key or its method made it repeatable, not
// its outcome known) into a state check, when the user gave one, as a
// write without a contract is looked up at once (check_state): the
// attempt limit, a body that cannot be sent again, the Intent's NoRetry
// (also where a pause that would not fit came first), a resend whose
// body or preparation failed. An answer keeps the operation's end (it is returned, the write still
// unknown), and so do the admission's refusals (the dependency is
// overloaded; they are recorded as such) and no time left.
func lookUpWhenStopped(in *input, v verdict) verdict {
	if !in.stateCheck || in.status != 0 || !unresolvedAfter(in) {
		return v
	}
	switch {
	case v.reason == attrs.ReasonAttemptLimit, v.reason == attrs.ReasonNotReplayable, v.reason == attrs.ReasonIntent,
		v.reason == attrs.ReasonPrepareFailed,
		// The pause is checked first, but the attempt limit or the body
		// stops the resend whatever it is, and the check needs none (with
		// no time left at all, the deadline's end stands).
		v.reason == attrs.ReasonDeadline && in.remaining > 0 && (in.attemptsLeft <= 0 || !in.replayable):
		return verdict{decision: attrs.DecisionCheckState, reason: attrs.ReasonUnknownWrite, unknownWrite: true}
	}
	return v
}

// retryable reports whether an answer that is neither a success nor an
// unknown write may be tried again before any limit applies, and why (or
// why not): the user's classifier has the first word, then the service's
// verdict on its answer, then the defaults.
func retryable(in *input) (bool, attrs.Reason) {
	if ok, why, said := classifierSays(in); said {
		return ok, why
	}
	if ok, why, said := serviceSays(in); said {
		return ok, why
	}
	return retryableByDefault(in)
}

// classifierSays is the user's classifier's word on an answer, when it
// has one (said). A classifier widens what is retried; it never makes a
// write repeatable, and never narrows what the defaults retry: an error
// that proves the request was not processed stays retryable.
func classifierSays(in *input) (retry bool, why attrs.Reason, said bool) {
	answered := in.status != 0
	switch in.classifier.kind {
	case classNotRetryable:
		return false, attrs.ReasonClassifier, true
	case classNotProcessed:
		if !answered {
			return true, attrs.ReasonClassifier, true
		}
	case classRetryable:
		if in.repeatable || (!answered && in.notProcessed) {
			return true, attrs.ReasonClassifier, true
		}
		return false, attrs.ReasonNotIdempotent, true
	}
	return false, "", false
}

// serviceSays is a service's word on its answer, when it has one (said):
// "false" stops its retry, "true" makes it retryable for a request that
// may be repeated, or a write when the user opted in. Between them, the
// idempotency-key draft's answers to a request that carries a key: 409,
// the key's first request is still being processed (retried, after
// Retry-After where given); 422, the key was used with another payload
// (never resent, whatever "true" says).
func serviceSays(in *input) (retry bool, why attrs.Reason, said bool) {
	if in.status == 0 {
		return false, "", false
	}
	switch {
	case in.verdict == verdictNoRetry:
		return false, attrs.ReasonServerNoRetry, true
	case in.keyed && keyInProgress(in):
		return true, attrs.ReasonKeyInProgress, true
	case in.keyed && in.status == http.StatusUnprocessableEntity:
		return false, attrs.ReasonKeyReused, true
	case in.verdict == verdictRetry && (in.repeatable || in.verdictWrites):
		return true, attrs.ReasonServerRetry, true
	}
	return false, "", false
}

// retryableByDefault is the defaults' word: an error that proves the
// request was not processed, or any error or retryable status of a
// request that may be repeated.
func retryableByDefault(in *input) (bool, attrs.Reason) {
	answered := in.status != 0
	switch {
	case !answered && in.refused:
		return false, attrs.ReasonInvalidRequest
	case !answered && in.certificateRejected:
		return false, attrs.ReasonCertificate
	case !answered && in.notProcessed:
		return true, attrs.ReasonNotProcessed
	case !answered && in.repeatable:
		return true, attrs.ReasonRetryableError
	case !answered:
		return false, attrs.ReasonNotIdempotent
	case !in.retryableStatus:
		return false, attrs.ReasonStatus
	case !in.repeatable:
		return false, attrs.ReasonNotIdempotent
	default:
		return true, attrs.ReasonRetryableStatus
	}
}

// applyLimits applies the limits to a retryable answer, in order: the
// deadline (never start a pause, or a drain, it would cut), the attempt
// limit, whether the body can be sent again, and last the retry budget, so
// that the budget is asked only for a retry that would otherwise happen.
func applyLimits(in *input, pause time.Duration, why attrs.Reason) verdict {
	// The pause and the drain's bound count from the answer (see
	// attempt.drainLeft); what is left of them at the decision, and at
	// least the drain's floor, must end before the deadline.
	drain := max(pause, in.drainFloor)
	switch {
	case in.remaining <= max(pause-in.sinceAnswer, in.drainFloor):
		return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonDeadline}
	case in.attemptsLeft <= 0:
		return verdict{decision: attrs.DecisionMaxAttempts, reason: attrs.ReasonAttemptLimit}
	case !in.replayable:
		return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonNotReplayable}
	case !in.budgetAsked:
		return verdict{decision: attrs.DecisionRetry, pause: pause, drain: drain, reason: why, needBudget: true}
	case in.budget != "":
		return refused(in.budget)
	default:
		return verdict{decision: attrs.DecisionRetry, pause: pause, drain: drain, reason: why}
	}
}

// decideHedge decides whether a hedge of a request whose attempt has no
// answer after the hedge delay may be sent: never for a write (even under
// an idempotency-key contract: concurrent copies of one key are what
// servers handle worst) or a body that cannot be replayed; within the
// attempt limit, the hedges an operation may send, the deadline (none
// with no time left: remaining 0 is past it) and the retry budget; last,
// the dependency's hedge rate, whose asking takes a hedge.
func decideHedge(in *input) verdict {
	switch {
	case in.callerCanceled:
		return verdict{decision: attrs.DecisionCanceled, reason: attrs.ReasonCaller}
	case in.callerDeadline:
		return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonCaller}
	case in.write || !in.repeatable:
		return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonNotIdempotent}
	case !in.replayable:
		return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonNotReplayable}
	case in.noRetry:
		return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonIntent}
	case in.attemptsLeft <= 0:
		return verdict{decision: attrs.DecisionMaxAttempts, reason: attrs.ReasonAttemptLimit}
	case in.hedgesLeft <= 0:
		return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonHedgeLimit}
	case in.remaining <= 0:
		return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonDeadline}
	case !in.budgetAsked:
		return verdict{needBudget: true}
	case in.budget != "":
		return refused(in.budget)
	case !in.rateAsked:
		return verdict{needRate: true}
	case !in.rateAllowed:
		return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonHedgeLimit}
	}
	return verdict{}
}

// decideAfterStateCheck decides what follows a state check of an unknown
// write. Applied returns the stored result; unknown keeps the outcome
// unknown; not-applied lets the write be sent again within the same limits
// as a retry, with no pause: the server has just said the write is not
// there.
func decideAfterStateCheck(in *input) verdict {
	switch in.state {
	case attrs.StateApplied:
		return verdict{decision: attrs.DecisionReturn, reason: attrs.ReasonStateApplied}
	case attrs.StateNotApplied:
		if in.callerCanceled || in.callerDeadline {
			return callerGone(in, false) // known not applied: nothing unknown
		}
		if in.noRetry {
			return verdict{decision: attrs.DecisionStop, reason: attrs.ReasonIntent}
		}
		// A limit that stops the resend leaves the write not applied, which
		// is known: the operation ends with that limit, not unknown.
		return applyLimits(in, 0, attrs.ReasonStateNotApplied)
	default:
		if in.callerCanceled || in.callerDeadline {
			return callerGone(in, true)
		}
		return verdict{decision: attrs.DecisionCheckState, reason: attrs.ReasonStateUnknown, unknownWrite: true}
	}
}

// callerGone is the verdict when the caller's context is done: canceled,
// or deadline_exceeded, reason caller.
func callerGone(in *input, unknownWrite bool) verdict {
	if in.callerCanceled {
		return verdict{decision: attrs.DecisionCanceled, reason: attrs.ReasonCaller, unknownWrite: unknownWrite}
	}
	return verdict{decision: attrs.DecisionDeadlineExceeded, reason: attrs.ReasonCaller, unknownWrite: unknownWrite}
}

// success reports whether a status ends an operation with return: 2xx,
// 3xx, or 101 Switching Protocols (the connection now speaks another
// protocol, which is what the caller asked for).
func success(status int) bool {
	return status == 101 || (status >= 200 && status < 400)
}

// observedClass is the error class an attempt that got no response
// records: the classified class, unless the caller canceled (canceled),
// the attempt timer or the caller's deadline ended it (timeout), whatever
// error the base reported for that, or it was canceled once another
// attempt of its race won (race_lost); a cancellation that was neither is
// other.
func observedClass(classified attrs.ErrorClass, timedOut, callerCanceled, callerDeadline bool, lostAs attrs.ErrorClass) attrs.ErrorClass {
	switch {
	case callerCanceled:
		return attrs.ErrorClassCanceled
	case timedOut || callerDeadline:
		return attrs.ErrorClassTimeout
	case lostAs != "" && classified == attrs.ErrorClassCanceled:
		// The cancellation was otelretry's race's: once another attempt
		// won (race_lost), or at the operation's end (see cutClass).
		return lostAs
	case classified == attrs.ErrorClassCanceled:
		// A cancellation neither the caller's nor otelretry's: the base's
		// own (a pool shutting down, a layer with a context of its own). It
		// is a failure like any other, never the caller giving up.
		return attrs.ErrorClassOther
	}
	return classified
}

// recordedClass is the error class an attempt records once the classifier
// answered: NotProcessed with protocol evidence records the evidence's
// class (and the evidence); without evidence it is the user's word, and
// the observed class stays. Evidence the transport read from the wire
// itself (wire, see h2Unprocessed) is recorded the same way, unless the
// classifier gave its own.
func recordedClass(observed attrs.ErrorClass, c Classification, fromWire Evidence) (attrs.ErrorClass, Evidence) {
	switch {
	case observed == "":
		return observed, Evidence{}
	case c.kind == classNotProcessed && c.evidence.present():
		return c.evidence.Class, c.evidence
	case fromWire.present():
		return fromWire.Class, fromWire
	}
	return observed, Evidence{}
}

// recordedEvidence is the evidence an attempt records: the proof behind
// its class (recordedClass) or the service's word (verdictEvidence), only
// on the attempt whose decision rests on it, a retry: the resend it
// allowed. An attempt that is not resent (its Intent forbids retries, its
// body cannot be sent again, a limit or the caller stops it) keeps its
// class but records no proof: nothing was done on it.
func recordedEvidence(e Evidence, v verdict) Evidence {
	if v.decision != attrs.DecisionRetry {
		return Evidence{}
	}
	return e
}

// leftToAttemptInFlight reports whether v leaves the retry to an attempt
// already in flight (ReasonInFlight): the race's hedge, or the attempt it
// hedged.
func (v verdict) leftToAttemptInFlight() bool {
	return v.decision == attrs.DecisionRetry && v.reason == attrs.ReasonInFlight
}

// unsent reports whether the base refused the request itself, with no
// answer (attempt.refusedByTransport): its host saw nothing of it.
func (in *input) unsent() bool { return in.refused && in.status == 0 }

// withNeverLeft is in for an attempt whose failure proves, or not, that
// its request never left (see neverLeft).
func (in input) withNeverLeft(never bool) input {
	in.neverLeft = never
	return in
}

// leftNothingBehind reports whether the attempt got no answer and its
// request never left the client (a hedge's budget token is then given
// back).
func (in *input) leftNothingBehind() bool { return in.status == 0 && in.neverLeft }

// budgetCharge is what an attempt's answer costs the retry budget: a
// failure whenever any rule makes it retryable (a transport error, a
// status of WithRetryableStatuses, a classifier's word, a service's "true"
// verdict), whether or not a limit then stops the retry; a refund for a
// success; a hold for its hint. The caller's cancellation tells it nothing
// (the zero observation). A hedge's failure is charged as any other: a
// failure another attempt in flight retries costs nothing (see
// operation.settle). A 409 to a request with a key the server honours
// (keyed, or only recorded) holds back no other retry: its hint paces the
// resends of its key, whose first request is still being processed, and
// says nothing of the host's load.
func budgetCharge(in *input, retryAfter time.Duration, hinted bool) budgetObservation {
	if in.class == attrs.ErrorClassCanceled || in.unsent() {
		return budgetObservation{} // the host saw nothing
	}
	if keyInProgress(in) {
		retryAfter, hinted = 0, false
	}
	answeredOK := in.status != 0 && success(in.status)
	// NotProcessed applies only without a response, where the class already
	// makes the attempt a failure; Retryable is the classifier's word that
	// an answer is a failure worth retrying, even where it cannot make it
	// retried (a write); the rules retryable applies add the verdicts.
	byRule, _ := retryable(in)
	failed := in.class != "" || in.retryableStatus || in.classifier.kind == classRetryable || byRule
	return budgetObservation{
		success:  answeredOK,
		failure:  !answeredOK && failed,
		timeout:  in.class == attrs.ErrorClassTimeout,
		status:   in.status,
		pushback: retryAfter,
		hinted:   hinted,
		errored:  in.class != "",
	}
}

// throttleCount is what an attempt's answer tells the client-side
// throttle (see Throttle): counted, a request that was answered or failed
// (not the caller's cancellation, nor an attempt superseded by its hedge
// that won:
// the zero observation); accepted, an answer other than 429 and 503.
func throttleCount(o budgetObservation) (counted, accepted bool) {
	switch {
	case o.status != 0:
		return true, o.status != http.StatusTooManyRequests && o.status != http.StatusServiceUnavailable
	case o.errored:
		return true, false
	}
	return false, false
}

// hedgeMayFollow reports whether an operation may still send a hedge, with
// hedgesLeft of its MaxHedges and attemptsLeft of its attempt limit: when
// it may not, no hedge delay is armed, and nothing is asked or recorded
// (the rows of decideHedge that refuse on these limits are not reached).
func hedgeMayFollow(hedgesLeft, attemptsLeft int) bool { return hedgesLeft > 0 && attemptsLeft > 0 }

// provedUnprocessed reports whether an attempt that got no response is
// proven not processed: its error says it never left (neverSent) and the
// base did not report it written (a failover base whose first host took
// the request and whose second refused it reports both: the safe reading
// is that it may have been applied), or the classifier says NotProcessed
// or the transport read the protocol's proof itself, and the base reported
// at most one write, or resends only on such proof (trusted,
// WithTrustedBaseResends). A protocol's proof is of the last stream alone:
// when a layer below wrote the request more than once (net/http's own
// resend of a bodyless request after a stream error), an earlier copy may
// have been processed.
func provedUnprocessed(neverSent, written bool, writes int32, trusted bool, c Classification, wireProof bool) bool {
	return (neverSent && !written) || (c.kind == classNotProcessed || wireProof) && (writes <= 1 || trusted)
}

// resendPlan is how a prepared request lets a layer below resend it.
type resendPlan uint8

const (
	// resendNone: nothing to set up (a bodyless request that is not
	// guarded: a layer below may resend it as it is).
	resendNone resendPlan = iota
	// resendPrepared: GetBody makes the prepared body again, unless the
	// guard refuses (wire.getBody).
	resendPrepared
	// resendNever: no GetBody: nothing can make the prepared body again.
	resendNever
	// resendWithEvidence: no GetBody, so that net/http's HTTP/2 client
	// names the cause of a stream it would resend in its error
	// (h2Unprocessed) rather than have a refusal hide it. Over HTTP/1,
	// net/http then does not resend a request it proved unwritten, and the
	// failure comes back with that proof in httptrace (wire.unsentByTrace).
	resendWithEvidence
	// resendHiddenKeys: a guarded bodyless request carries its
	// idempotency keys in lower case, so that net/http's HTTP/1 client,
	// which looks them up by canonical name, does not resend it after it
	// was written (hideIdempotencyKeys).
	resendHiddenKeys
)

// planResends decides how a prepared request lets a layer below resend it:
// from whether it has a body, whether that body can be made again, whether
// the policy guards it (guardsResends) and whether it may go over an
// HTTP/2 client (mayHTTP2: the first request to an https host may, before
// its protocol is known).
func planResends(body, bodyAgain, guarded, mayHTTP2 bool) resendPlan {
	switch {
	case body && guarded && mayHTTP2:
		return resendWithEvidence
	case body && bodyAgain:
		return resendPrepared
	case body:
		return resendNever
	case guarded:
		return resendHiddenKeys
	}
	return resendNone
}

// guardsResends reports whether a layer below the transport must be kept
// from resending the attempt once it may have reached the server: the
// policy does not treat it as repeatable, and the user did not declare
// that the base resends only with proof (WithTrustedBaseResends).
func guardsResends(repeatable, trustedBase bool) bool { return !repeatable && !trustedBase }

// resendRefused reports whether a guarded attempt's fresh body must be
// refused to a layer below that asks for it: a write completed, or a
// connection was taken and writing to it did not fail. It reads what the
// base reported before it asked, never after: HTTP/2 and HTTP/3 clients
// can ask before they report the headers they wrote. A request refused
// that had not left after all (a connection found unusable) ends
// check_state: the safe side.
func resendRefused(guarded, written, gotConn, connWriteFailed bool) bool {
	return guarded && (written || (gotConn && !connWriteFailed))
}

// The request's judgment, in two frozen stages. Each is a value built once
// by a pure function and never written again.

// requestFacts is what the first stage reads of the caller's request.
type requestFacts struct {
	method        string
	hasBody       bool // a body that is not nil or http.NoBody
	hasGetBody    bool
	contentLength int64
	intent        Intent
	// callerKey: the request carries a header that holds an idempotency
	// key (policyConfig.keyHeaders), whatever its value: the caller chose
	// its key, and none is generated.
	callerKey bool
	// named: the operation has an id of the caller's (WithOperationID),
	// under which a generated key is kept for a repeat (see repeatOf).
	named bool
}

// policyConfig is the part of the Transport's configuration the judgment
// reads.
type policyConfig struct {
	maxAttempts       int
	deadline          time.Duration
	attemptTimeout    time.Duration
	idempotentMethods map[string]bool
	// bufferPerRequest is WithBodyBuffer's per-request limit, 0 when
	// buffering is off.
	bufferPerRequest int64
	// stateCheck: WithStateCheck is set, so an unknown write is resolved,
	// stateCheckDelay after the cut.
	stateCheck      bool
	stateCheckDelay time.Duration
	// contractHeaders are WithIdempotencyKeyContract's header names, and
	// WithIdempotencyKeys' header; recordedHeaders
	// WithRecordedIdempotencyKey's.
	contractHeaders, recordedHeaders []string
	// generateKeys: WithIdempotencyKeys generates a key for a write that
	// carries none in keyHeaders, every header known to hold one.
	generateKeys bool
	keyHeaders   []string
	// verdictWrites: a service's "true" may make a write retryable
	// (WithShouldRetryWrites).
	verdictWrites bool
}

// requestPlan is the first stage: what the caller's request, its intent
// and the configuration decide before any preparation (a signer reads the
// body, so whether to buffer it must be known before the first
// PrepareAttemptFunc runs).
type requestPlan struct {
	method         string
	maxAttempts    int
	limit          time.Duration // the Transport's or the intent's deadline, from the start
	attemptTimeout time.Duration
	// safe: RFC 9110's safe methods, repeatable without any word.
	safe bool
	// contract: repeatable by the user's word (WithIdempotentMethods,
	// Intent.Repeatable), not by the method.
	contract bool
	// write: the request may change state on the server, so an answer it
	// lost leaves an outcome to resolve: a method that is not safe, unless
	// the caller declared the request repeatable (Intent.Repeatable, which
	// marks reads sent as POST).
	write   bool
	noRetry bool
	hasBody bool
	// replayable: the caller's body can be had again without a buffer (no
	// body, or a GetBody).
	replayable bool
	// buffer: read the body into memory for retries (see bufferBody), or
	// only to tell a repeat's body (toTell: a body that needs no buffer
	// for retries, whose not being buffered is not recorded); notBuffered
	// says why a body that is not replayable is not, when the plan alone
	// decides it.
	buffer, toTell bool
	notBuffered    string
	// stateCheck: an unknown write will be resolved by a state check,
	// stateCheckDelay after the cut (WithStateCheckDelay).
	stateCheck      bool
	stateCheckDelay time.Duration
	// verdictWrites: a service's "true" may make a write retryable.
	verdictWrites bool
	// generateKey: the operation gets an idempotency key of its own
	// (WithIdempotencyKeys): a write that carries none.
	generateKey bool
}

// judgeRequest is the first stage of the judgment: the limits (an
// Intent's own replace the Transport's), whether the request is safe,
// declared repeatable or a write, and whether its body can be replayed or
// must be buffered to be.
func judgeRequest(f requestFacts, c policyConfig) requestPlan {
	p := requestPlan{
		method:          f.method,
		maxAttempts:     c.maxAttempts,
		limit:           c.deadline,
		attemptTimeout:  c.attemptTimeout,
		safe:            safeMethod(f.method),
		noRetry:         f.intent.NoRetry,
		hasBody:         f.hasBody,
		replayable:      !f.hasBody || f.hasGetBody,
		stateCheck:      c.stateCheck,
		stateCheckDelay: c.stateCheckDelay,
		verdictWrites:   c.verdictWrites,
	}
	if f.intent.MaxAttempts > 0 {
		p.maxAttempts = f.intent.MaxAttempts
	}
	if f.intent.Deadline > 0 {
		p.limit = f.intent.Deadline
	}
	if f.intent.AttemptTimeout > 0 {
		p.attemptTimeout = f.intent.AttemptTimeout
	}
	// A contract is the user's word that repeating is safe where the method
	// alone does not say so (WithIdempotentMethods, Intent.Repeatable, or an
	// idempotency key, judged on the prepared request: see judgePrepared).
	// It is recorded so that readers can tell a legitimate resend of a write
	// from a blind one.
	p.contract = !p.safe && (f.intent.Repeatable || c.idempotentMethods[f.method])
	p.write = !p.safe && !f.intent.Repeatable
	p.generateKey = c.generateKeys && p.write && !f.callerKey
	p.planBuffer(f.contentLength, c.bufferPerRequest, p.generateKey && f.named && f.hasBody)
	return p
}

// planBuffer decides whether the request's body is buffered, with a body
// of contentLength bytes and a per-request limit of perRequest (0: no
// buffering). Buffering is worth it for a body that cannot be had again,
// of a request that may make another attempt, and for a write whose
// generated key a repeat may take (toTellRepeats): its body is told by
// the buffer's bytes, read before the first attempt as the attempt would
// read them (see repeatOf).
func (p *requestPlan) planBuffer(contentLength, perRequest int64, toTellRepeats bool) {
	forRetries := !p.replayable && !p.noRetry && p.maxAttempts >= 2
	if perRequest <= 0 || !(forRetries || toTellRepeats) {
		return
	}
	switch {
	case contentLength > 0 && contentLength <= perRequest:
		p.buffer, p.toTell = true, !forRetries
	case !forRetries: // a key of its own, and nothing to record
	case contentLength <= 0:
		p.notBuffered = attrs.BodyBufferUnknownLength
	default:
		p.notBuffered = attrs.BodyBufferTooLarge
	}
}

// attemptLimit is the operation's real attempt limit, which the attempt
// header tells the server: 1 under an Intent's NoRetry, else maxAttempts.
func (p requestPlan) attemptLimit() int {
	if p.noRetry {
		return 1
	}
	return p.maxAttempts
}

// keyJudgment is the second stage: what the first attempt's prepared
// request says under WithIdempotencyKeyContract (and WithIdempotencyKeys,
// whose header joins the contract's). Later attempts are held to it
// (prepareChanged).
type keyJudgment struct {
	judged bool // the first preparation succeeded and was judged
	// keyed: the prepared request carries an idempotency key, a contract
	// that makes it repeatable; recorded: one that is only recorded
	// (WithRecordedIdempotencyKey).
	keyed, recorded bool
	// headers is the contract headers' values, in one comparable string.
	headers string
	// source is where the key the request carries came from, "" when it
	// carries none in a header the user declared; value is the key as the
	// first such header carries it.
	source attrs.KeySource
	value  string
	// conflict: the contract's headers carry two different keys, in
	// conflictHeaders.
	conflict        bool
	conflictHeaders []string
}

// judgePrepared is the second stage of the judgment: on the first
// attempt's prepared request, whether it carries an idempotency key under
// the contract (names), or one only recorded, and where it came from (the
// generated key, when the plan generates one), the contract headers'
// values, and whether they carry two different keys.
func judgePrepared(prepared http.Header, p requestPlan, names, recorded []string) keyJudgment {
	k := keyJudgment{judged: true}
	if p.safe {
		return k
	}
	if len(names) > 0 {
		k.headers, k.keyed = contractHeaders(prepared, names)
		var keys []string
		keys, k.conflictHeaders = keysIn(prepared, names)
		k.conflict = len(keys) > 1
		if len(keys) > 0 {
			k.value = keys[0]
		}
	}
	if len(recorded) > 0 {
		var keys []string
		_, k.recorded = contractHeaders(prepared, recorded)
		if keys, _ = keysIn(prepared, recorded); k.value == "" && len(keys) > 0 {
			k.value = keys[0]
		}
	}
	switch {
	case p.generateKey:
		k.source = attrs.KeySourceGenerated
	case k.keyed || k.recorded:
		k.source = attrs.KeySourceCaller
	}
	return k
}

// requestPolicy is the judgment of both stages together: what decide is
// told of the request.
type requestPolicy struct {
	requestPlan
	// repeatable: safe to repeat (see input.repeatable).
	repeatable bool
	// keyed: it carries an idempotency key under the contract (see
	// input.keyed); recordedKey: one only recorded (input.recordedKey).
	keyed, recordedKey bool
	// contract: repeatable by the user's word (requestPlan.contract, or an
	// idempotency key), or a key the user declared the server honours
	// without otelretry resending on it (recorded).
	contract bool
	// cutRetryable: the attempt timeout may cut the attempt once it was
	// written (see attemptBound); checkDelay, for a write only a state
	// check resolves, how long the check waits after the cut (see
	// attemptTimer.cuts).
	cutRetryable bool
	checkDelay   time.Duration
}

// policyOf joins the two stages.
func policyOf(p requestPlan, k keyJudgment) requestPolicy {
	repeatable := p.safe || p.contract || k.keyed
	pol := requestPolicy{requestPlan: p, contract: p.contract || k.keyed || k.recorded, repeatable: repeatable, keyed: k.keyed,
		recordedKey: k.recorded, cutRetryable: repeatable || p.stateCheck}
	if !repeatable && p.stateCheck {
		pol.checkDelay = p.stateCheckDelay
	}
	return pol
}

// verdictEvidence is what an answer's verdict header proves, recorded as
// evidence when it made a write retryable (WithShouldRetryWrites): the
// service's word, on the HTTP answer, in that header.
func verdictEvidence(in *input, header string) Evidence {
	if _, _, classifierSaid := classifierSays(in); in.verdict != verdictRetry || in.repeatable || !in.verdictWrites || classifierSaid {
		return Evidence{}
	}
	return Evidence{Protocol: "http", Name: header, noCode: true} // a header has no code
}

// prepareChanged reports whether a prepared request changed what the
// policy judged, with the cause: the method or the host (retarget: the
// URL's, Host, or a request target other than a path, where the server
// may read a host), the generated key (key: the header and the value it
// was set to before the PrepareAttemptFunc ran, zero when none was), or,
// after the first attempt, the idempotency-key contract's headers.
func prepareChanged(prepared *http.Request, callerURL *url.URL, callerHost string, p requestPlan, k keyJudgment, names []string, key headerValue) error {
	if methodOf(prepared) != p.method || prepared.URL == nil || prepared.URL.Host != callerURL.Host ||
		prepared.Host != callerHost || targetMayRetarget(prepared.URL, callerURL) {
		return errPrepareRetarget
	}
	if key.name != "" {
		if v := valuesIn(prepared.Header, key.name); len(v) != 1 || v[0] != key.value {
			return errPrepareKey
		}
	}
	if k.judged && len(names) > 0 && !p.safe {
		if values, _ := contractHeaders(prepared.Header, names); values != k.headers {
			return errPrepareContract
		}
	}
	return nil
}

// targetMayRetarget reports whether prepared's request target, as
// net/http writes it (url.URL.RequestURI: the path and query, or an
// Opaque), differs from the caller's in a form that may name a host to the
// server ("http://host/p", "//host/p", in the Path or the Opaque, in
// spellings a check would miss: a case, a port, a blank, an escape
// url.Parse refuses). Only a target that is a path ("/...") is taken as
// one.
func targetMayRetarget(prepared, caller *url.URL) bool {
	if prepared.Opaque == caller.Opaque && prepared.Path == caller.Path && prepared.RawPath == caller.RawPath {
		return false // the caller's target, its query changed at most: no allocation
	}
	t := prepared.RequestURI()
	return t != caller.RequestURI() && (!strings.HasPrefix(t, "/") || strings.HasPrefix(t, "//"))
}

// contractHeaders returns the values of the named headers (in any
// spelling), in one string that compares them all, and whether any carries
// a key.
func contractHeaders(h http.Header, names []string) (string, bool) {
	var b strings.Builder
	keyed := false
	for _, name := range names {
		v := valuesIn(h, name)
		keyed = keyed || (len(v) > 0 && isKey(v[0]))
		b.WriteString(strconv.Quote(strings.Join(v, "\x00")))
	}
	return b.String(), keyed
}

// keysIn returns the different keys (see isKey) the named headers carry
// (in any spelling), as written, in order, and the headers that carry
// one.
func keysIn(h http.Header, names []string) (keys, headers []string) {
	for _, name := range names {
		vs := valuesIn(h, name)
		for _, v := range vs {
			if isKey(v) && !slices.Contains(keys, v) {
				keys = append(keys, v)
			}
		}
		if slices.ContainsFunc(vs, isKey) {
			headers = append(headers, http.CanonicalHeaderKey(name))
		}
	}
	return keys, headers
}

// isKey reports whether a header's value v is a key: one of blanks is
// not. net/http's HTTP/1 writer trims the spaces and tabs around a value,
// so it reaches the server empty; over HTTP/2 it goes as written, a field
// RFC 9113 calls malformed (a server may refuse or trim it). No server
// deduplicates by it. A key is otherwise kept as written (over HTTP/2,
// "k1 " and "k1" are two keys).
func isKey(v string) bool { return textproto.TrimString(v) != "" }

// carriesKey reports whether h holds any of the headers names, in any
// spelling and with any value, even an empty one: the caller chose what
// it holds.
func carriesKey(h http.Header, names []string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return present(h, n) })
}

// wirePhase is where a sent attempt stands, as its base reports it
// through httptrace.
type wirePhase uint8

const (
	phaseSent        wirePhase = iota // handed to the base
	phaseGettingConn                  // GetConn: getting a connection
	phaseGotConn                      // GotConn: a connection was got; over HTTP/2 a stream may still be awaited
	phaseHeadersOut                   // WroteHeaders: the headers are written; a body may follow
	phaseWritten                      // WroteRequest: the request is written
	// phaseGettingConnAgain: GetConn once the base showed it will resend
	// the request by itself (a keep-alive connection that turned out dead:
	// a failed write, a fresh body asked for): no upload is in progress.
	phaseGettingConnAgain
)

// attemptBound is the bound of a sent attempt from the phase it entered
// (rearm false: the bound set before stays). A cut proves only what it
// proves: a cut before the request got a connection proves it was not
// sent and can be retried, but a cut after that proves nothing, and leaves
// a write's outcome unknown. So the attempt timeout bounds the whole wait
// only where a cut can be followed up (cutRetryable: the policy may repeat
// the request, or a state check resolves it); otherwise it bounds only
// getting a connection, from the moment the base reports it is getting
// one, and the deadline bounds the rest: a cut there would buy nothing
// but a write made unknown. Over HTTP/1 the headers follow the connection
// at once; over HTTP/2 the request may then wait for a stream (the
// server's MaxConcurrentStreams), and nothing proves a stream that never
// opened unsent: net/http's HTTP/2 client reports the connection before
// it waits, and may still write the headers after a canceled RoundTrip
// returned. A base that reports nothing through httptrace gets the
// deadline alone for such a request: nothing would tell what its cut
// proved. Writing a request body is bounded by the deadline alone, so
// that an upload making progress is never cut; once written, the wait for
// the answer gets the attempt timeout afresh, as http.Transport's
// ResponseHeaderTimeout does; a connection got again to resend the request
// (phaseGettingConnAgain) gets it afresh too, so that a dial that hangs
// is cut as the first would have been.
func attemptBound(ph wirePhase, cutRetryable, hasBody bool, attemptTimeout, left time.Duration) (d time.Duration, rearm bool) {
	timeout := min(attemptTimeout, left)
	switch ph {
	case phaseSent:
		if cutRetryable {
			return timeout, true
		}
		return left, true
	case phaseGettingConn:
		return timeout, !cutRetryable
	case phaseGotConn:
		return left, !cutRetryable
	case phaseHeadersOut:
		return left, hasBody || !cutRetryable
	case phaseGettingConnAgain:
		return timeout, true
	default: // phaseWritten
		return timeout, cutRetryable
	}
}

// attemptCut is what ended an attempt that got no answer in time, as its
// error names it.
type attemptCut uint8

const (
	cutByBase           attemptCut = iota // nothing of otelretry's: the base's own failure
	cutByAttemptTimeout                   // the attempt timer, bound by the attempt timeout
	cutByDeadline                         // the attempt timer, at the operation's deadline
	cutByCaller                           // the caller's context: canceled, or its deadline passed
)

// whatCut names what ended an attempt: timer is what the attempt timer
// says (cutByBase when the answer came first), callerErr the caller's
// reason to stop (nil, context.Canceled or context.DeadlineExceeded), and
// callerBound whether the operation's deadline is the caller's. The
// caller's cancellation comes first, as it does in the error class
// (observedClass); a deadline that is the caller's is the caller's; then
// the timer; then the caller's deadline noticed by its own context first;
// else the base.
func whatCut(timer attemptCut, callerErr error, callerBound bool) attemptCut {
	switch {
	case errors.Is(callerErr, context.Canceled):
		return cutByCaller
	case timer == cutByDeadline && callerBound:
		return cutByCaller
	case timer != cutByBase:
		return timer
	case callerErr != nil:
		return cutByCaller
	}
	return cutByBase
}

// cutCause is the error that names cut c (nil for the base, whose own
// error names it): callerErr is the caller's reason to stop.
func cutCause(c attemptCut, callerErr error) error {
	switch c {
	case cutByAttemptTimeout:
		return errAttemptTimeout
	case cutByDeadline:
		return errDeadlineCut
	case cutByCaller:
		if callerErr == nil {
			callerErr = context.DeadlineExceeded // the caller's deadline, reached on the monotonic clock
		}
		return callerCutError{callerErr}
	}
	return nil
}

// settleCut settles what an attempt's exchange came to, once the attempt
// timer was stopped: when the timer fired first (timedOut), a response
// that came by a hair cannot be read (its context is canceled), and is
// dropped for the cut's error. A failure is named by its cut (cutCause):
// a base that reported only its context's end, which the cut made, gets
// the cause in its place; one that returned the cause (net/http returns
// its context's cause) keeps its error; any other error is kept beside the
// cause, for errors.Is and errors.As. A failure of the base's own is its
// error as it is.
func settleCut(c attemptCut, timedOut bool, callerErr, err error) (dropResponse bool, _ error) {
	cause := cutCause(c, callerErr)
	switch {
	case timedOut && err == nil:
		return true, cause
	case err == nil || cause == nil:
		return false, err
	case err == context.Canceled || err == context.DeadlineExceeded:
		return false, cause
	case errors.Is(err, cause):
		return false, err
	}
	return false, fmt.Errorf("%w (%w)", cause, err)
}

// stateOf is the state a check's answer stands for, and what was wrong
// with it: an error or an answer outside the set is unknown, and an
// applied write with no stored result cannot be returned (a response is
// never invented), so it is unknown too.
func stateOf(result StateResult, err error) (attrs.StateCheckResult, string) {
	switch {
	case err != nil:
		return attrs.StateUnknown, ""
	case result.State == attrs.StateApplied && result.Response == nil:
		return attrs.StateUnknown, "state check reported applied without a response"
	case result.State != attrs.StateApplied && result.State != attrs.StateNotApplied:
		return attrs.StateUnknown, ""
	}
	return result.State, ""
}

// drainFloor is the least time the drain of a discarded body of length n
// (its ContentLength, below 0 when unknown, as for a chunked body) may
// take: drainPause, or 0 for an empty body, which needs no drain, and for
// one known to be longer than maxDrain, which is closed unread.
func drainFloor(n int64) time.Duration {
	if n == 0 || n > maxDrain {
		return 0
	}
	return drainPause
}

// maxDrain bounds how much of a discarded response body is read so that its
// connection can be reused; a longer body is closed unread.
const maxDrain = 4 << 10

// drainPause is the least time the drain of an answer's body may take
// before a retry, whatever the pause (see drainFloor), so that even with no
// backoff (ConstantBackoff(0), a full jitter near 0) the connection is kept
// rather than closed with the body unread. The drain usually ends at once,
// and the next attempt starts when the pause has passed: the pause
// recorded (retry.backoff_ms) is the one waited for. The decision reserves
// the bound against the deadline, as it does a pause.
const drainPause = 2 * time.Millisecond
