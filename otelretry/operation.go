// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// operation is one RoundTrip: what it was judged (plan, key), who it is
// (ident), its time (clock), its record (tel) and what its attempts share
// (setup). It is allocated once per RoundTrip and holds the first attempt
// and the buffers its telemetry needs, so that the hot path allocates
// little else of its own. Where it stands between attempts (progress) is
// a value its loop owns, not a field.
type operation struct {
	t     *shared
	req   *http.Request // the caller's request: only read and copied
	ident identity
	clock clock
	// plan is the first stage of the request's judgment, set once by begin;
	// key is the second, set once after the first attempt's preparation.
	plan  requestPlan
	key   keyJudgment
	tel   opRecord
	setup attemptSetup
	// body wraps the returned response's body (see handOver).
	body  responseBody
	first attempt
	// results is where the caller asked the operation's end to be
	// reported (WithResults): the last of the slots, nil when it did not.
	results *resultsSlot
	// keys are the request's admission keys: its budget's and its
	// dependency's.
	keys admissionKeys
	// race is what the request's races share, nil when it is not hedged.
	race *race
}

// shared is what every operation of a Transport shares, set once in
// NewTransport.
type shared struct {
	cfg config
	// policy is what the request's judgment reads of cfg (judgeRequest).
	policy policyConfig
	// retryable is cfg.retryableStatuses, as a set.
	retryable statusSet
	// sender is how attempts are sent and recorded.
	sender sender
	budget *Budget
	// gate admits every request beyond an operation's first.
	gate    admission
	repeats repeatCounter
	// bodies is the memory for request bodies buffered for retries.
	bodies bodyPool
	// hedger knows each dependency's latency and hedge allowance.
	hedger *hedger
}

// holdings is what an operation holds that a panic must let go of: what
// abandonOnPanic releases when the operation did not return.
type holdings struct {
	// returned: run returned; until then, a panic leaves the operation to
	// abandonOnPanic, however far it went (its end included).
	returned bool
	// callerBody: the caller's body was not handed to an attempt yet, so
	// the operation must close it if it ends before the first call.
	callerBody bool
	current    *attempt // the attempt in progress
	// sending: an attempt was launched and its result is not in progress
	// yet, so a copy of the request may have reached the server.
	sending bool
	// progress is where the operation stands (run's).
	progress progress
	// stored is the response of no attempt (the state check's) being
	// handed over.
	stored *http.Response
}

// runOperation runs one RoundTrip.
func runOperation(t *shared, req *http.Request) (*http.Response, error) {
	op := &operation{t: t, req: req}
	held := holdings{callerBody: req.Body != nil}
	defer op.abandonOnPanic(&held) // the user's formatters and labelers run in begin
	op.begin(&held)
	resp, err, v := op.run(&held)
	held.returned = true
	if v.decision == attrs.DecisionDeadlineExceeded && v.reason == attrs.ReasonCaller {
		op.awaitCaller()
	}
	return resp, err
}

// begin opens the operation: the first stage of its judgment, its
// identity and deadline (a redirect hop's from the hop it follows), its
// span and its race; its body's buffer waits for the first attempt's
// admission (admitFirst).
func (op *operation) begin(held *holdings) {
	t, req := op.t, op.req
	start := time.Now()
	ctx := req.Context()
	sc := scopeOf(ctx)
	if sc.at != nil {
		sc.at.operations.Add(1)
	}
	op.results = sc.results
	hasBody := req.Body != nil && req.Body != http.NoBody
	op.plan = judgeRequest(requestFacts{method: methodOf(req), hasBody: hasBody, hasGetBody: req.GetBody != nil,
		contentLength: req.ContentLength, intent: sc.intent,
		callerKey: t.policy.generateKeys && carriesKey(req.Header, t.policy.keyHeaders), named: sc.oc != nil}, t.policy)
	prev := chainOf(req, sc.at)
	op.ident = newIdentity(sc, prev)
	var chainDeadline time.Time
	if prev != nil {
		chainDeadline = prev.deadline
	}
	op.clock = newClock(start, op.plan.limit, ctx, chainDeadline)
	t.sender.rec.startOperation(&op.tel, ctx, req, op.plan.method, &op.ident, &op.clock, sc.own())
	if op.ident.oc == nil && prev == nil && !sc.nested() && op.tel.recording {
		if k, n, ok := t.repeats.repeatOf(ctx, req, t.sender.prop); ok {
			op.ident.countRepeats(k, n)
		}
	}
	keyed := req
	if t.budget != nil && t.budget.Key != nil {
		keyed = op.tel.userRequest()
	}
	op.keys = keysOf(t.budget, keyed)
	op.setup = attemptSetup{owner: op, sender: &t.sender, ctx: op.tel.ctx, caller: req, stop: callerSignalsOf(req), clock: &op.clock,
		bodies: bodySource{body: req.Body, getBody: req.GetBody, hasBody: hasBody}, maxAttempts: op.plan.attemptLimit(),
		own: sc.own()}
	op.beginRace(hedgingOf(sc.intent, t.cfg.hedging))
}

// admitFirst asks the client-side throttle for the first attempt, before
// anything about it starts: the caller's body is not read, no key is
// taken. It returns ReasonThrottle when the throttle refuses it, "" when
// it admits it, and "" without asking when there is no throttle or the
// first decision ends the operation anyway. Then, admitted, the body is
// buffered and the headers made.
func (op *operation) admitFirst(held *holdings, p *progress) attrs.Reason {
	if op.t.gate.throttle != nil {
		now := op.clock.since()
		if decide(op.inputAt(phaseBeforeCall, now, p)).goAhead() {
			if reason := op.t.gate.first(op.keys.dep, op.clock.at(now)); reason != "" {
				return reason
			}
		}
	}
	op.beginBuffer(held)
	op.setup.sendHeaders(op.wireHeaders()) // after the buffer, which tells a repeat's body
	return ""
}

// beginRace gives a read that may be hedged (h on, more than one attempt)
// its race.
func (op *operation) beginRace(h *Hedging) {
	if !h.on() || op.plan.write || op.plan.noRetry || op.plan.maxAttempts <= 1 || fillsTrailers(op.req) || switchesProtocols(op.req.Header) {
		return
	}
	t := op.t
	hedging := h.forOperation(op.plan.maxAttempts)
	op.race = newRace(op, &op.setup, &op.ident, &t.gate, t.hedger, hedging, op.keys, op.plan.maxAttempts)
	op.tel.recordConcurrently()
}

// beginBuffer buffers the caller's body when the plan asks for it, and
// records why it is not buffered.
func (op *operation) beginBuffer(held *holdings) {
	t, req := op.t, op.req
	if op.plan.notBuffered != "" {
		t.sender.rec.recordNotBuffered(&op.tel, op.plan.notBuffered)
	}
	if !op.plan.buffer || op.clock.left() <= 0 || !t.bodies.enabled() {
		return
	}
	b, notBuffered := bufferBody(op.tel.ctx, req, &t.bodies, req.ContentLength, op.clock.left())
	if !op.plan.toTell { // a body buffered only to tell a repeat is replayable, or never resent
		t.sender.rec.recordNotBuffered(&op.tel, notBuffered)
	}
	if b != nil {
		// The operation holds the buffer first, so that its cleanup frees it
		// should the caller's body's Close panic; the body is closed once,
		// here, whatever its Close does.
		op.setup.bodies.useBuffer(b)
		held.callerBody = false
		req.Body.Close()
	}
}

// wireHeaders are the headers the operation adds to every attempt when
// asked: its idempotency key, for a write that carries none
// (WithIdempotencyKeys), and its id (WithOperationIDHeader) when it may be
// a field value: net/http would refuse the request, before sending it.
func (op *operation) wireHeaders() (key, id headerValue) {
	if op.plan.generateKey {
		body, told := op.setup.bodies.bytes()
		key = headerValue{op.t.cfg.keys.Name, op.t.cfg.wireKey(op.ident.takeKey(op.plan.method, op.req.URL, op.req.Host, body, told))}
	}
	if name := op.t.cfg.opIDHeader; name != "" {
		if v := op.ident.opID(); validHeaderValue(v) {
			id = headerValue{name, v}
		}
	}
	return key, id
}

// fillsTrailers reports whether req's body may fill the caller's Trailer
// map as it is read (net/http lets it, until EOF): every attempt sends that
// map, so a hedge would have net/http read it while the first attempt's
// body writes it. Such a request is not hedged.
func fillsTrailers(req *http.Request) bool { return len(req.Trailer) > 0 && hasBody(req) }

// switchesProtocols reports whether a request with header h asks to switch
// protocols (RFC 9110, section 7.8: an Upgrade field, and "upgrade" among
// its Connection options, as a websocket handshake sends them): its 101
// answer is a connection of its own, which a hedge would open a second
// time at the server. Such a request is not hedged, nor is a hedge sent
// that its PrepareAttemptFunc made one.
// Its fields count under any spelling of their names: net/http sends
// every key of the map as the map spells it.
func switchesProtocols(h http.Header) bool {
	upgrade, upgradeOption := false, false
	for name, values := range h {
		switch {
		case asciiEqualFold(name, "Upgrade"):
			upgrade = upgrade || slices.ContainsFunc(values, func(v string) bool { return v != "" })
		case asciiEqualFold(name, "Connection"):
			upgradeOption = upgradeOption || slices.ContainsFunc(values, namesUpgrade)
		}
	}
	return upgrade && upgradeOption
}

// namesUpgrade reports whether a Connection field's value names the
// "upgrade" option.
func namesUpgrade(connection string) bool {
	for option := range strings.SplitSeq(connection, ",") {
		if asciiEqualFold(strings.Trim(option, " \t"), "upgrade") {
			return true
		}
	}
	return false
}

// hedgingOf is the request's Hedging: its Intent's, else the Transport's.
func hedgingOf(in Intent, transport *Hedging) *Hedging {
	if in.Hedging != nil {
		return in.Hedging
	}
	return transport
}

// policy is what decide is told of the request: both stages of its
// judgment.
func (op *operation) policy() requestPolicy { return policyOf(op.plan, op.key) }

// run is the operation's loop: before each call, an attempt prepared,
// sent and judged, and the verdict carried out. It returns the response
// or the error, and the verdict that ended the operation.
func (op *operation) run(held *holdings) (*http.Response, error, verdict) {
	p := &held.progress
	refused := op.admitFirst(held, p)
	var target lookUpTarget
	planned := 0      // the number of a call planned and not made, which the resend a check allows takes
	var lastErr error // the last attempt's error, nil when it failed with none (an answer) or none was made
	for n := 1; ; n++ {
		now := op.clock.since()
		if v := op.beforeCall(n, now, refused, p); !v.goAhead() {
			number := planned
			if number == 0 && p.afterRetry {
				number = op.ident.plannedNumber(n, p.lastNumber())
			}
			*p = p.abandon(op.abandonPlanned(p, number, v))
			return nil, op.fail(v, op.stoppedBeforeCall(lastErr), nil, now, p, held), v
		}
		a, number, v, err := op.prepareAttempt(attemptID{n: n, number: planned}, p, held)
		planned = 0
		if a == nil {
			resp, err, v, resend := op.notPrepared(v, number, err, lastErr, target, p, held)
			if resend {
				// The call planned was not made: the resend is it, under
				// its number (another operation under the same id may
				// have taken the next).
				target, planned = lookUpTarget{}, number
				n--
				continue
			}
			return resp, err, v
		}
		var res result
		if op.race != nil {
			a, res, n = op.runRace(a, p, held)
		} else {
			res = a.send()
		}
		*p = p.after(a.id.n, &a.ev)
		held.sending = false
		lastErr = res.err
		switch res.v.decision {
		case attrs.DecisionRetry:
			target.retried(a, res)
			a.discard(res.resp, res.v.drain)
			op.pause(a.end+res.v.pause, res.v.pause)
			continue
		case attrs.DecisionCheckState:
			resp, err, sv, resend := op.lookUpAfter(a, res, target, p, held)
			if resend {
				target = lookUpTarget{}
				continue
			}
			return resp, err, sv
		}
		if res.resp != nil {
			return op.succeed(res.resp, a, res.v, p), nil, res.v
		}
		a.release()
		return nil, op.fail(res.v, res.err, nil, op.clock.since(), p, held), res.v
	}
}

// stoppedBeforeCall is the cause of an operation that a call planned did
// not start: the last attempt's error, when one failed so (the caller gave
// up during the pause, the deadline passed), as any operation that ends
// after a failed attempt tells it; else the caller's reason; with what the
// buffering of the body met. The caller's end is the outcome's
// (Error.Unwrap).
func (op *operation) stoppedBeforeCall(lastErr error) error {
	body := op.sanitize(op.setup.bodies.err(), nil)
	if lastErr != nil {
		return joinCauses(lastErr, body)
	}
	return errors.Join(op.callerErr(), body)
}

// joinCauses joins the causes of an operation's end that are not nil: the
// one itself when it is alone (Error.Err is then the attempt's error, or
// the hook's, as where nothing else joins it), else errors.Join's.
func joinCauses(causes ...error) error {
	var only error
	n := 0
	for _, c := range causes {
		if c != nil {
			only, n = c, n+1
		}
	}
	if n == 1 {
		return only
	}
	return errors.Join(causes...)
}

// beforeCall is the verdict before call n, at now: whether it may be
// made (go ahead) or what ends the operation. refused is the client-side
// throttle's answer to the first call (admitFirst).
func (op *operation) beforeCall(n int, now time.Duration, refused attrs.Reason, p *progress) verdict {
	in := op.inputAt(phaseBeforeCall, now, p)
	v := decide(in)
	switch {
	case !v.goAhead():
	case n == 1 && refused != "":
		// The client-side throttle refused the first attempt before it
		// started (admitFirst).
		v = decide(in.withBudget(refused))
	case n > 1:
		// A retry was admitted when it was decided; a hold that came
		// during its pause still holds it.
		v = decide(in.withBudget(op.t.gate.resume(op.keys, op.clock.at(now))))
	}
	return v
}

// prepareAttempt prepares attempt id (see prepare; its number taken now
// when it has none yet) and starts its clock:
// the attempt, ready to send, or the verdict that ends the operation, with
// its cause; the attempt's number either way.
func (op *operation) prepareAttempt(id attemptID, p *progress, held *holdings) (*attempt, int, verdict, error) {
	if id.number == 0 {
		id = attemptID{n: id.n, number: op.ident.attemptNumber(id.n)}
	}
	a := newAttempt(&op.first, &op.setup, id, *p)
	held.current = a
	a.copyOut()
	if v, err := op.prepare(a, p, held); !v.goAhead() {
		return nil, a.id.number, v, err
	}
	a.launch(op.policy())
	held.sending = true
	return a, a.id.number, verdict{}, nil
}

// prepare prepares attempt a: its body, its copy of the request, the
// PrepareAttemptFunc, the second stage of the judgment after the first
// preparation, and what decide says of the prepared request. When it may
// not be sent, a is let go of, and prepare returns the verdict, with its
// cause. held is nil for a hedge, prepared on a goroutine of its own.
func (op *operation) prepare(a *attempt, p *progress, held *holdings) (verdict, error) {
	bodyErr := a.takeBody() // a.out was made on the operation's goroutine (copyOut)
	if held != nil {
		held.callerBody = false // the attempt holds it now, and closes it if it is not sent
	}
	var prepErr, changed error
	if bodyErr == nil {
		guarded := a.fieldsGuarded(held == nil) // held: the operation's own attempt; nil: a hedge
		prepErr = a.prepare()
		if prepErr == nil && guarded && !fieldsSendable(a.out) {
			changed = errPrepareUnsendable // net/http would refuse it: sent, a hedge would cost a token the host never saw
		}
		if prepErr == nil && held == nil && switchesProtocols(a.out.Header) {
			changed = errPrepareSwitchesProtocols // a hedge would open a second connection of its own at the server
		}
	}
	if bodyErr == nil && prepErr == nil && changed == nil {
		names := op.t.policy.contractHeaders
		changed = prepareChanged(a.out, &a.copy.url, a.copy.host, op.plan, op.key, names, op.setup.key)
		if !op.key.judged && changed == nil { // a key the hook changed is never sent: nothing to record
			op.key = judgePrepared(a.out.Header, op.plan, names, op.t.policy.recordedHeaders)
			op.t.sender.rec.recordKey(&op.tel, op.key.source, op.key.value)
		}
	}
	in := op.inputAt(phasePrepared, op.clock.since(), p).prepared(bodyErr != nil, prepErr != nil, changed != nil, op.key.conflict)
	if v := decide(in); !v.goAhead() {
		a.unsent()
		return v, op.prepareCause(a, bodyErr, prepErr, changed)
	}
	return verdict{}, nil
}

// prepareCause is the cause of an attempt that was not sent, sanitized.
func (op *operation) prepareCause(a *attempt, bodyErr, prepErr, changed error) error {
	var readErr *bufferReadError
	switch {
	case errors.As(bodyErr, &readErr):
		return op.sanitize(bodyErr, a)
	case bodyErr != nil:
		return op.sanitize(getBodyError{bodyErr}, a)
	case prepErr != nil:
		return op.sanitize(prepareError{prepErr}, a)
	case changed != nil:
		return op.sanitize(prepareError{changed}, a)
	case op.key.conflict:
		return keyConflictError{op.key.conflictHeaders}
	}
	return nil
}

// heard tells the race, if the operation races, that attempt a was
// answered (resp, or err) at a.end, whether with a success, and whether in
// time: before the deadline and the caller's end.
func (op *operation) heard(a *attempt, resp *http.Response, err error) {
	if op.race != nil {
		inTime := a.end < op.clock.limit && op.callerErr() == nil
		op.race.heard(a, resp != nil && err == nil && success(resp.StatusCode), inTime, a.end)
	}
}

// conclude turns what attempt a's exchange returned into its result: it
// reads what the attempt observed, asks the classifier, gathers the
// decision's input (with its race's part, when it races), decides, and
// records the attempt event once. It returns the response or the
// sanitized error (never both) with the verdict.
func (op *operation) conclude(a *attempt, resp *http.Response, err error) result {
	o := a.observe(resp, err)
	at := a.at.started(a.id) // this attempt counts as made
	var class attrs.ErrorClass
	if o.err != nil {
		c := op.callerAt(o.end)
		class = observedClass(o.class, o.timedOut, c.canceled, c.deadline, a.lost())
	}
	answer := a.answer(&o, class, op.t.cfg.hooksJudge())
	defer a.endShown()
	count := answerCount{o: &o, at: &at, from: a.end}
	defer op.countIfHooksPanicked(a, &count, class)
	c := op.t.cfg.classify(answer)
	in, class, evidence := op.inputAfter(&o, class, c, &at)
	var view raceView
	made := a.id.n // the retry that may follow is retry made (Backoff's n)
	if r := op.race; r != nil {
		in, view = r.judge(a, in, o.end)
		made = view.made
		o = o.racing(view.link)
		took, cut := latencySample(o, view)
		op.t.hedger.observe(op.keys.dep, took, cut)
	}
	var cost budgetObservation
	switch {
	case !view.superseded:
		cost = budgetCharge(&in, o.retryAfter, o.hasRetryAfter)
	case in.noneWon:
		// No hedge won: the operation's end cut this request too, which
		// the throttle counts as any (a dependency that holds requests
		// is seen as it is); the token its hedge took paid for its failure.
		cost = budgetCharge(&in, o.retryAfter, o.hasRetryAfter).retriedInFlight()
	}
	count.cost, count.judged = cost, true
	v := op.settle(&in, made, &answer, cost, a.end)
	count.counted = true
	a.concluded(&o, class, evidence, v)
	op.t.sender.rec.recordAttempt(&op.tel, a.span, &a.ev)
	if err != nil {
		known := op.requestText(a)
		known = known.withProxyPhrases(a.proxyPhrases(err))
		if op.setup.stop.causeIn(err) {
			err = causeOfOwn{err} // the caller's cause, which the base returned: not about this write
		}
		return result{err: decidedError(err, class, known, v), v: v}
	}
	return result{resp: resp, v: v}
}

// answerCount is what the gate is to count of an attempt's answer while
// the hooks that judge it run (see countIfHooksPanicked).
type answerCount struct {
	o       *observation
	at      *progress
	from    time.Duration // the answer's end
	cost    budgetObservation
	judged  bool // cost is the judged answer's
	counted bool // settle had the gate count it
}

// countIfHooksPanicked has the gate count an answer whose Classifier or
// Backoff panicked before settle did: the throttle and the budget see
// every answer the dependency gave, as the rules alone judge it when the
// Classifier did not. In a race the Classifier's panic comes before the
// race judged the answer (superseded, or retried by another attempt in
// flight): the race loop judges and counts it, in the order the answers
// came (raceLoop.ended). The panic goes on.
//
// observed is the answer's class as observed: passed apart, as a value,
// so that what the race keeps of it does not move c's observation and
// progress to the heap on every answer.
func (op *operation) countIfHooksPanicked(a *attempt, c *answerCount, observed attrs.ErrorClass) {
	if c.counted {
		return
	}
	if c.judged {
		op.t.gate.observe(op.keys, op.clock.at(c.from), op.clock.at(op.clock.since()), c.cost)
		return
	}
	in, _, _ := op.inputAfter(c.o, observed, Classification{}, c.at)
	if op.race != nil {
		a.leaveUncounted(uncountedAnswer{in: in, retryAfter: c.o.retryAfter, hinted: c.o.hasRetryAfter})
		return
	}
	op.t.gate.observe(op.keys, op.clock.at(c.from), op.clock.at(op.clock.since()), budgetCharge(&in, c.o.retryAfter, c.o.hasRetryAfter))
}

// inputAfter builds the decision's input from an attempt's observation
// (o, the class it was observed as) and the classifier's verdict, at the
// time left after the classifier ran, and returns the class and evidence
// the attempt records (recordedClass).
func (op *operation) inputAfter(o *observation, observed attrs.ErrorClass, c Classification, p *progress) (input, attrs.ErrorClass, Evidence) {
	in := op.inputAt(phaseAttempt, op.clock.since(), p)
	left := op.plan.maxAttempts - p.attempts
	if o.err != nil {
		var wireEvidence Evidence
		if o.wireProved {
			wireEvidence = o.wireEvidence
		}
		if o.landedBelow {
			// What a classifier reads in a Transport's error below (its
			// last attempt's REFUSED_STREAM) proves nothing of the
			// earlier attempts the write may have landed in.
			c = c.withoutProof()
		}
		class, evidence := recordedClass(observed, c, wireEvidence)
		cutBelow := o.class == attrs.ErrorClassCanceled && observed == attrs.ErrorClassOther // see observedClass
		// A base that reported nothing proves nothing of where its
		// request got: its write may have left (unless its error, or
		// net/http's refusal, proves otherwise).
		mayHaveLeft := o.written || o.silent && !o.refusal.byTransport
		in = in.failed(class, mayHaveLeft, provedUnprocessed(o.unsent, o.written, o.writes, op.t.sender.trustResends, c, o.wireProved), o.refusal, cutBelow, c, left)
		return in.withNeverLeft(o.unsent && !o.written), class, evidence
	}
	in = in.answered(o.status, op.t.retryable.has(o.status), o.retryAfter, drainFloor(o.contentLength), o.verdict, c, left)
	return in, "", verdictEvidence(&in, o.verdictHeader)
}

// lateWrites records writes on the wire the base reported after attempt
// a's event was recorded.
func (op *operation) lateWrites(a *attempt, writes int32) {
	op.t.sender.rec.recordLateWrites(&op.tel, a.span, &a.ev, writes)
}

// answerBroke keeps the operation's key for a repeat when the body of the
// answer it returned broke as the caller read it (see
// identity.answerBroke). It runs on the caller's goroutine, after
// RoundTrip returned: it reads only what was settled before.
func (op *operation) answerBroke() { op.ident.answerBroke() }

// callerErr is the caller's reason to stop (see callerSignals).
func (op *operation) callerErr() error { return op.setup.stop.err(&op.clock) }

// inputAt gathers the part of a decision's input that the operation knows
// at now (since its start), where it stands at p; attempt results are
// added by the caller.
func (op *operation) inputAt(ph phase, now time.Duration, p *progress) input {
	pol := op.policy()
	return inputAt(ph, op.clock.limit-now, pol, pol.replayable || op.setup.bodies.replayable(), p.standing(), op.callerAt(now))
}

// callerAt is what the caller says at now (since the operation's start).
// The caller's deadline is reached on the monotonic clock, even if its
// context has not noticed yet: the decision must not depend on which
// timer fired first.
func (op *operation) callerAt(now time.Duration) callerState {
	err := op.callerErr()
	canceled := errors.Is(err, context.Canceled)
	return callerState{
		canceled: canceled,
		deadline: (err != nil && !canceled) || (op.clock.callerBound && now >= op.clock.limit),
	}
}

// settle decides on in, asking the Backoff (retry n, after answer) and
// the gate only when decide needs their answers. The Backoff is the last
// hook before the decision, so the clock and the caller are read again
// after it: the decision is taken on the time left then, against what is
// left of the pause counted from the answer, and on whether the caller
// gave up meanwhile. cost is what the answer costs its budget:
// the gate charges it with the admission of the retry it asks for, in one
// step, or counts it alone when no retry is asked (an unknown write a
// state check will resolve too, as it ends: the resend its check may ask
// for takes a token of its own, resendCost). in gets the Backoff's
// pause when it is asked. from is when the answer came (an attempt's
// end): the budget charges it then, a Retry-After holds its host from
// then, and the retry's pause counts from then, as op.pause waits; the
// gate is asked about the time the retry starts (at once when the hooks
// took longer than the pause), not about the pause counted from the
// decision, which a slow hook would move past a host's hold.
func (op *operation) settle(in *input, n int, answer *Answer, cost budgetObservation, from time.Duration) verdict {
	v := decide(*in)
	if v.leftToAttemptInFlight() {
		// Each request beyond the first costs one token, as without
		// hedging: the hedge in flight paid for this failure's retry.
		cost = cost.retriedInFlight()
	}
	if v.needPause {
		backoff := op.t.cfg.backoffFor(n, *answer)
		left := op.clock.left()
		now := op.clock.limit - left
		*in = in.withPause(backoff, left, now-from, op.callerAt(now))
		v = decide(*in)
	}
	now := op.clock.limit - in.remaining
	switch {
	case v.needBudget:
		start := max(from+v.pause, now)
		return decide(in.withBudget(op.t.gate.retry(op.keys, op.clock.at(from), op.clock.at(now), op.clock.at(start), cost)))
	}
	op.t.gate.observe(op.keys, op.clock.at(from), op.clock.at(now), cost)
	return v
}

// pause waits until the next attempt may start (until, since the start:
// the answer's end plus the pause d), or until the caller gives up: the
// next decision sees which. It records the pause taken: d, or as much of
// it as passed before the caller gave up.
func (op *operation) pause(until, d time.Duration) {
	if wait := until - op.clock.since(); wait > 0 && !op.waitFor(wait) {
		d = min(d, max(op.clock.since()-(until-d), 0))
	}
	op.t.sender.rec.recordBackoff(&op.tel, d)
}

// waitFor waits wait, and reports whether it did: false when the caller
// gave up first.
func (op *operation) waitFor(wait time.Duration) bool {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-op.tel.ctx.Done():
	case <-op.setup.stop.cancel:
	}
	return false
}

// notPrepared ends the operation whose attempt number could not be
// prepared (verdict v, cause err, joined to lastErr, the last attempt's
// error, when it ends there), unless v looks up the write the
// attempt was to resend (see decidePrepared): then the state check on
// target decides, and when it finds the write not applied and admits
// its resend, resend reports that the attempt is to be made again. The
// call planned is recorded abandoned otherwise.
func (op *operation) notPrepared(v verdict, number int, err, lastErr error, target lookUpTarget, p *progress, held *holdings) (*http.Response, error, verdict, bool) {
	if v.decision != attrs.DecisionCheckState || target.a == nil {
		*p = p.abandon(op.abandonPlanned(p, number, v))
		return nil, op.fail(v, joinCauses(lastErr, err), nil, op.clock.since(), p, held), v, false
	}
	sv, stored, checkErr := op.checkState(target.a, v, target.err, p)
	if sv.decision == attrs.DecisionRetry {
		*p = p.resolved()
		return nil, nil, sv, true
	}
	*p = p.abandon(op.abandonPlanned(p, number, sv))
	resp, end := op.endLookUp(sv, stored, joinCauses(target.err, err), checkErr, p, held)
	return resp, end, sv, false
}

// lookUpAfter resolves with the state check the unknown outcome of the
// write attempt a leaves (its result res: check_state), the check told
// of the attempt that left it unknown (target, or a): the operation's
// response or error and the verdict that ended it, or resend when the
// check found the write not applied and admitted its resend.
func (op *operation) lookUpAfter(a *attempt, res result, target lookUpTarget, p *progress, held *holdings) (*http.Response, error, verdict, bool) {
	a.release()
	target.retried(a, res)
	if target.a == nil { // a write without a contract, looked up at once
		target = lookUpTarget{a: a, err: res.err}
	}
	sv, stored, checkErr := op.checkState(target.a, a.ev.verdict, target.err, p)
	if sv.decision == attrs.DecisionRetry {
		*p = p.resolved()
		return nil, nil, sv, true
	}
	cause := res.err
	if target.a != a { // what left the write unknown, and what stopped its resend
		cause = errors.Join(target.err, res.err)
	}
	resp, err := op.endLookUp(sv, stored, cause, checkErr, p, held)
	return resp, err, sv, false
}

// lookUpTarget is the attempt a state check on the operation's write
// resolves, with its error: the latest retried one that lost its answer
// (lost), else the latest whose answer left the write unresolved (a 409
// under its key).
type lookUpTarget struct {
	a    *attempt
	err  error
	lost bool
}

// retried notes attempt a, whose result res a retry (or a lookup)
// follows.
func (t *lookUpTarget) retried(a *attempt, res result) {
	if lost := res.resp == nil; res.v.unresolves && (lost || !t.lost) {
		*t = lookUpTarget{a, res.err, lost}
	}
}

// endLookUp ends the operation with what the state check came to (sv):
// the stored response, or the error, cause (what left the write unknown,
// and what stopped its resend) with the check's own error.
func (op *operation) endLookUp(sv verdict, stored *http.Response, cause, checkErr error, p *progress, held *holdings) (*http.Response, error) {
	if sv.decision == attrs.DecisionReturn {
		held.stored = stored
		return op.succeed(stored, nil, sv, p), nil
	}
	return nil, op.fail(sv, cause, checkErr, op.clock.since(), p, held)
}

// checkState resolves the unknown outcome of attempt a with the user's
// hook, if any (see runStateCheck), no sooner than WithStateCheckDelay
// after a's cut, and asks the gate to admit the resend when the check asks
// for one (a's answer was charged as it ended: the resend takes a token of
// its own, resendCost).
// It returns the verdict that follows (retry: resend; return: with the
// stored response; else terminal: unchecked when no check is made), the stored
// response, and the hook's error, sanitized.
func (op *operation) checkState(a *attempt, unchecked verdict, cause error, p *progress) (verdict, *http.Response, error) {
	hook := op.t.cfg.stateCheck
	if hook == nil {
		return unchecked, nil, nil
	}
	// The server got what it got of the write before the client gave up
	// on it (not a.start: a slow dial or pool sent it later).
	checkAt := a.gaveUp() + op.t.cfg.stateCheckDelay // see WithStateCheckDelay
	if now := op.clock.since(); now >= op.clock.limit || checkAt >= op.clock.limit {
		// No time left for the hook (the operation's deadline cut the
		// write, or it comes before the server's work on the write may
		// have ended): the outcome stays unknown.
		return unchecked, nil, nil
	}
	if wait := checkAt - op.clock.since(); wait > 0 && !op.waitFor(wait) {
		// The caller gave up before the check could run: as during one.
		in := op.inputAt(phaseStateCheck, op.clock.since(), p).checked(attrs.StateUnknown)
		return op.settle(&in, a.id.n, &Answer{}, budgetObservation{}, a.end), nil, nil
	}
	sanitize := func(err error) error { return op.sanitize(err, a) }
	check := runStateCheck(op.tel.ctx, op.clock.deadline, hook, op.t.sender.rec, op.ident.opID(), a, cause, sanitize)
	judged := false
	defer func() {
		if !judged { // a panic of the Backoff or the telemetry: the stored response is nobody's
			closeResponse(check.stored)
		}
	}()
	in := op.inputAt(phaseStateCheck, op.clock.since(), p).checked(check.state)
	v := op.settle(&in, a.id.n, &Answer{}, resendCost, a.end) // the write's answer was charged as it ended
	op.t.sender.rec.endStateCheck(&op.tel, check.span, a.id.number, check.state, v, check.problem, check.err)
	judged = true
	if v.decision != attrs.DecisionReturn {
		closeResponse(check.stored)
		return v, nil, check.err
	}
	stored := check.stored
	if stored.Body == nil {
		stored.Body = http.NoBody
	}
	return v, stored, nil // its Request: see succeed
}

// succeed ends the operation with a response for the caller. The
// attempt's context (a, nil for a state check's stored response) stays
// alive until the body is closed, so the body can be read. A redirect, a
// stored one too (a write's 303 See Other), starts the chain its next hop
// continues.
func (op *operation) succeed(resp *http.Response, a *attempt, v verdict, p *progress) *http.Response {
	if a != nil {
		handOver(resp, &op.body, a)
	}
	if a != nil || resp.Request == nil { // a stored response keeps the Request its hook gave it
		resp.Request = op.req
	}
	if redirect(resp.StatusCode) {
		resp.Request = withChain(op.req, newChain(&op.ident, op.clock.deadline, p.lastNumber()))
	}
	op.end(v, op.clock.since(), p, resp.StatusCode)
	op.report(v, resp.StatusCode, nil, p)
	return resp
}

// sanitize returns err, from a hook or GetBody, with a message from which
// what the request is known by (see requestText: of a, when there is one)
// is taken out.
func (op *operation) sanitize(err error, a *attempt) error {
	if err == nil {
		return nil
	}
	// A hook's error or the caller's cause may hold a typed nil as a
	// base's may (safeError).
	return newAttemptError(safeError(err), attrs.ErrorClassOther, op.requestText(a))
}

// requestText is what an error of attempt a (nil: of none) may repeat of
// the request (see attempt.requestText).
func (op *operation) requestText(a *attempt) requestText {
	if a == nil {
		return requestText{caller: op.req.URL, headers: [2]http.Header{op.req.Header}, keyHeaders: op.t.sender.keyHeaders}
	}
	return a.requestText()
}

// abandonPlanned records a call that a retry planned and that was not
// made, with the verdict that stopped it, so that no retry is left without
// its next attempt and no explanation; it returns the call's number, 0
// when no retry planned one.
func (op *operation) abandonPlanned(p *progress, number int, v verdict) int {
	if !p.afterRetry {
		return 0
	}
	op.t.sender.rec.recordAbandoned(&op.tel, number, v)
	return number
}

// resentBy says what let otelretry resend the operation's write while an
// earlier copy may have been applied (two copies landed: see
// progress.landed; a 503 from a proxy says nothing of the app behind it),
// or "" when it did not: its idempotency contract (a key it relies on, or
// a method declared idempotent; a key only recorded is none), else the
// only other word that repeats a write, the service's (a should-retry
// header under WithShouldRetryWrites). A resend of a copy proven not
// processed, or found not applied, is not one.
func (op *operation) resentBy(p *progress) string {
	switch {
	case p.landed <= 1:
		return ""
	case op.policy().repeatable:
		return "under its idempotency contract"
	}
	return "on the service's word"
}

// fail ends the operation at now with an error: cause, and the state
// check's error, if any.
func (op *operation) fail(v verdict, cause, checkErr error, now time.Duration, p *progress, held *holdings) error {
	if held.callerBody {
		held.callerBody = false
		closeBody(op.req)
	}
	op.end(v, now, p, 0)
	err := &Error{Outcome: v.decision.Outcome(), Reason: v.reason, OperationID: op.ident.opID(), Attempts: p.attempts,
		Err: cause, unknownWrite: v.unknownWrite, resentBy: op.resentBy(p), stateCheckErr: checkErr,
		callerCause:  op.callerCause(v, cause, checkErr),
		noGetBody:    v.reason == attrs.ReasonNotReplayable && op.req.GetBody == nil && op.setup.bodies.err() == nil,
		lastTimedOut: p.last != nil && p.last.class == attrs.ErrorClassTimeout}
	op.report(v, 0, err, p)
	return err
}

// callerCause is the cause the caller gave its context when it ended the
// operation (verdict v), sanitized, unless cause or the state check's
// error tells it already (a lookup made with the hook's context returns
// it): nil for a context without one. The caller's deadline may pass on the
// operation's monotonic clock before its context's timer sets that cause,
// so the error waits for the context first, as RoundTrip's return does.
func (op *operation) callerCause(v verdict, cause, checkErr error) error {
	if v.reason != attrs.ReasonCaller {
		return nil
	}
	if v.decision == attrs.DecisionDeadlineExceeded {
		op.awaitCaller()
	}
	c := op.setup.stop.givenCause()
	if c == nil {
		return nil
	}
	s := op.sanitize(c, nil)
	if tells(cause, c, s) || tells(checkErr, c, s) {
		return nil
	}
	return s
}

// report tells the caller's result slots, if any, what the operation came
// to.
func (op *operation) report(v verdict, status int, err error, p *progress) {
	if op.results == nil {
		return
	}
	op.results.report(OperationResult{OperationID: op.ident.opID(), Outcome: v.decision.Outcome(), Reason: v.reason,
		Attempts: p.attempts, StatusCode: status, OutcomeUnknown: v.unknownWrite, Err: err})
}

// awaitCaller holds the operation's return until the caller's context is
// done, when the operation ended because the caller's deadline passed: a
// loop above that stops only on ctx.Err() (stripe-go's, many others) then
// cannot start another call in the same context, whose error would replace
// this one. The context's own timer fires at the same instant as the
// operation's, so the wait is that timer's latency; maxCallerLag bounds it
// for a context that reports a deadline it does not keep.
func (op *operation) awaitCaller() {
	ctx := op.setup.stop.ctx
	if ctx.Err() != nil {
		return
	}
	lag := time.NewTimer(maxCallerLag)
	defer lag.Stop()
	select {
	case <-ctx.Done():
	case <-lag.C:
	}
}

// maxCallerLag bounds awaitCaller.
const maxCallerLag = time.Second

// end records the operation's end (its span, its log event, its metrics)
// and lets go of its body's buffer and its attribute buffer. status is
// the answer returned, 0 for none.
func (op *operation) end(v verdict, now time.Duration, p *progress, status int) {
	op.t.sender.rec.endOperation(&op.tel, operationEnd{verdict: v, attempts: p.attempts, last: p.last,
		contract: op.policy().contract, abandoned: p.abandoned, duration: now})
	op.ident.settleKey(v.decision == attrs.DecisionReturn && !sendAgain(status), v.decision == attrs.DecisionReturn && answerToRead(status), p.landed > 0)
	op.ident.endRepeat(&op.t.repeats)
	op.setup.bodies.release()
	op.tel.release()
}

// abandonOnPanic is deferred by runOperation. When a base RoundTripper, a
// hook or the telemetry (a span processor, a log exporter, a metric view,
// a slog handler) panics, or calls runtime.Goexit, before RoundTrip
// returns, it releases what the operation holds, the response being
// handed over included, ends the operation's spans with an event naming
// the panic, and lets the panic go on: a retry layer must not hide a
// crash, but must not leave spans open, timers running, connections held
// or memory reserved either. It runs whenever run did not return, however
// far the operation went: each step is safe after what end released.
func (op *operation) abandonOnPanic(held *holdings) {
	if held.returned {
		return
	}
	r := recover()
	// What holds memory, connections and goroutines first: ending the
	// spans runs telemetry, which may panic again, and so may a body's
	// Close (see afterPanic).
	a := held.current
	if a != nil {
		a.abandon()
	}
	if held.callerBody {
		held.callerBody = false
		afterPanic(func() { closeBody(op.req) })
	}
	op.setup.bodies.release()
	op.tel.release()
	// A write that may have been applied keeps its key for a repeat; one
	// no server saw (the panic came before its first call, or every call
	// was proven unprocessed) keeps none, as end says.
	op.ident.settleKey(false, false, held.sending || held.progress.landed > 0)
	op.ident.endRepeat(&op.t.repeats)
	if resp := held.stored; resp != nil {
		held.stored = nil
		afterPanic(func() { closeResponse(resp) })
	}
	if a != nil {
		afterPanic(func() { op.t.sender.rec.endAttemptAfterPanic(&op.tel, a.span, &a.ev, a.id.number, r) })
	}
	if op.tel.span != nil { // nil: the panic came before the span started
		afterPanic(func() { endWithPanic(op.tel.span, r) })
	}
	if r != nil {
		panic(r)
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// runRace runs attempt a's race (see race.run), on the operation's
// goroutine, and records its hedge events once it is over. It returns the
// attempt whose result the loop acts on, that result, and the n of the
// last attempt made. A panic that ended a goroutine of the race goes on
// here, once the result the race ended on, which the caller will not get,
// was let go of (runtime.Goexit for a nil value).
func (op *operation) runRace(a *attempt, p *progress, held *holdings) (*attempt, result, int) {
	*p = p.started(a.id)
	end := op.race.run(a, *p)
	*p = p.started(end.made)
	if end.panicked {
		// What the race's attempts hold first; then its events, whose
		// telemetry may panic again: the race's first panic goes on.
		if end.a != nil {
			letGo(end.a, end.res)
		}
		for _, m := range end.later {
			m.a.abandon()
			afterPanic(func() { op.t.sender.rec.endAttemptAfterPanic(&op.tel, m.a.span, &m.a.ev, m.a.id.number, m.value) })
		}
		held.current = end.failed
		afterPanic(func() { op.race.record(op.t.sender.rec, &op.tel, &end) })
		if end.value == nil {
			runtime.Goexit()
		}
		panic(end.value)
	}
	held.current = end.a // should the telemetry below panic, its response is let go of
	op.race.record(op.t.sender.rec, &op.tel, &end)
	return end.a, end.res, end.made.n
}

// prepareHedge prepares a hedge (see prepare), on a goroutine of its own:
// the verdict, empty when it may be sent.
func (op *operation) prepareHedge(hedge *attempt) verdict {
	at := hedge.at
	v, _ := op.prepare(hedge, &at, nil)
	return v
}
