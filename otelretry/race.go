// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"slices"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// race is what a hedged operation's races share: what the loop is given,
// and how the attempts of the race in progress reach it. A race is one
// attempt of the operation's loop and its hedges, each sent after the
// hedge delay while the attempt before it has no answer.
//
// A race has one owner, its loop (run), which runs on the operation's
// goroutine and keeps the race's state in its locals: the attempts in
// flight, which verdict ended the race, the attempt numbers, budget tokens
// and hedge-rate tokens its hedges took. The attempts run on goroutines
// of their own: each hands the loop its observation (judge) and gets its
// verdict from it, then records itself and tells the loop it ended. A
// hedge is admitted by the loop, then prepared on a goroutine of its own,
// so that a slow hook never holds back an answer that came. The loop runs
// no user code and no telemetry, and holds no lock: the hooks (the
// PrepareAttemptFunc, GetBody, the Classifier, the Backoff) and the recording run
// on the attempts' goroutines, and the race's hedge events are recorded
// once the race is over (record).
type race struct {
	owner  raceOwner
	setup  *attemptSetup
	ident  *identity
	gate   *admission
	hedger *hedger
	// hedging is the operation's Hedging (withDefaults, forOperation);
	// keys are the operation's admission keys.
	hedging     Hedging
	keys        admissionKeys
	maxAttempts int
	// tried counts the hedges the operation was admitted, over all its
	// races, sent or not (MaxHedges bounds them); only the loop writes it.
	tried int
	// earned: the operation earned its dependency its share of a hedge,
	// at its first call. An operation refused before any call (by the
	// throttle, its preparation, its deadline) sends no load, and earns
	// none: else a throttle shedding most operations would let hedges
	// take MaxShare of the operations asked for, not of those sent.
	earned bool
	// inbox and over are the race in progress's: the loop receives every
	// message sent to inbox until each attempt it sent ended, and closes
	// over when it returns, so that a preparation still running lets go of
	// its hedge rather than wait. A new race has new ones: what a
	// preparation of an earlier race says never reaches it.
	inbox chan raceMsg
	over  chan struct{}
}

// raceOwner is the operation, as the race asks it: the input of a
// decision, the preparation of a hedge, and the judgment of the request.
type raceOwner interface {
	inputAt(ph phase, now time.Duration, p *progress) input
	prepareHedge(hedge *attempt) verdict
	policy() requestPolicy
}

// newRace is the race of an operation hedged as h (withDefaults,
// forOperation), of at most maxAttempts attempts: nothing in it is sized
// by a limit.
func newRace(owner raceOwner, setup *attemptSetup, ident *identity, gate *admission, hedger *hedger,
	h Hedging, keys admissionKeys, maxAttempts int) *race {
	return &race{owner: owner, setup: setup, ident: ident, gate: gate, hedger: hedger, hedging: h,
		keys: keys, maxAttempts: maxAttempts}
}

// raceMsgKind is what a message to the loop says.
type raceMsgKind uint8

const (
	// msgJudge: an attempt's input, once it was answered and classified;
	// the loop answers with the race's part of it (raceReply).
	msgJudge raceMsgKind = iota
	// msgEnded: an attempt recorded its verdict and let go of what it
	// does not hand on, or a panic ended it: its goroutine ends.
	msgEnded
	// msgPrepared: a hedge's preparation ended with verdict v (empty: it
	// may be sent), or a panic ended it; the loop answers whether to send
	// it.
	msgPrepared
	// msgHeard: an attempt's exchange returned (headers or an error),
	// before anything above the base (otelhttp, the user's meter) or its
	// Classifier runs: no hedge of it is due any more.
	msgHeard
	// msgUnsentPanicked: letting go of a hedge the loop did not send
	// panicked (its body's Close) while the race still runs: the panic
	// ends the race and goes on to the caller.
	msgUnsentPanicked
	// msgLeaves: the loop's own, in waiting: an attempt a panic ended
	// with no answer to judge leaves the race once the answers heard
	// before it are judged (raceLoop.ended).
	msgLeaves
)

// raceMsg is a message of a race's goroutine to its loop.
type raceMsg struct {
	kind raceMsgKind
	a    *attempt
	in   input         // msgJudge
	end  time.Duration // msgJudge, msgHeard: when the answer came
	// success: msgHeard of an answer the race ends on (success(status));
	// inTime: it came before the deadline and the caller's end.
	success, inTime bool
	res             result  // msgEnded
	v               verdict // msgPrepared
	// panicked: a panic (or runtime.Goexit: a nil value) ended the
	// goroutine.
	panicked bool
	value    any
	reply    chan raceReply
}

// raceReply is the loop's answer: to msgJudge, the input with what the
// race adds to it, and the attempt's view of the race; to msgPrepared,
// whether the hedge is sent.
type raceReply struct {
	in   input
	view raceView
	send bool
}

// raceView is what an attempt concluding learns of its race.
type raceView struct {
	// superseded: another attempt won first; its verdict is superseded.
	superseded bool
	// link is the attempt's place in the race.
	link hedgeLink
	// delay is the race's hedge delay.
	delay time.Duration
	// made is how many attempts the operation made when the attempt was
	// judged (the race's included): a retry that follows is retry made,
	// whichever of the race's attempts was judged last.
	made int
}

// hedgeSent is a hedge the race sent: the attempt, the attempt it hedges,
// when it was sent after that attempt's start, and its budget loan, which
// stays open until its verdict says whether its host saw it (settleHedge).
type hedgeSent struct {
	hedge, of *attempt
	after     time.Duration
	loan      budgetLoan
	settled   bool
}

// hedgeEvent is a hedge_sent or hedge_refused event of the race, recorded
// on the operation span once the race is over.
type hedgeEvent struct {
	name   string
	number int // the hedge's number; 0 when refused
	of     int // the number of the attempt it hedges
	at     time.Duration
	v      verdict // the refusal
}

// raceEnd is what a race came to: the attempt whose result the operation
// acts on (the winner, or the last retryable failure, whose pause the
// operation takes) and that result; the last attempt made; the race's
// hedge events; and a panic of one of its goroutines, which goes on on the
// operation's goroutine (panicked, by attempt failed).
type raceEnd struct {
	a        *attempt
	res      result
	made     attemptID
	delay    time.Duration
	events   []hedgeEvent
	panicked bool
	value    any
	failed   *attempt
	// later are the attempts whose goroutines panicked after the first
	// panic, each with its value: the operation lets go of them too.
	later []raceMsg
}

// run runs one race: it sends first (launched, and made at at), hedges it
// after the delay while the hedge rules and the admission allow, hands
// each attempt its verdict, and returns once every attempt it sent ended.
// The first verdict that ends the operation wins, and the attempts still
// in flight are canceled (they conclude superseded); a retryable failure
// while another attempt is in flight ends nothing (ReasonInFlight).
func (r *race) run(first *attempt, at progress) raceEnd {
	if !r.earned {
		r.earned = true
		r.hedger.begun(r.keys.dep, r.hedging.MaxShare, r.setup.clock.start)
	}
	r.inbox, r.over = make(chan raceMsg), make(chan struct{})
	defer close(r.over)
	l := &raceLoop{r: r, at: at, inFlight: []*attempt{first}, running: 1,
		end: raceEnd{made: first.id, delay: r.hedger.delay(r.keys.dep, r.hedging)}}
	l.timer = time.NewTimer(l.end.delay)
	defer l.timer.Stop()
	l.fire = l.timer.C
	if !l.hedgeMayFollow() {
		l.fire = nil
	}
	go r.attend(first, r.inbox, r.over, false) // launched by the operation
	for l.running > 0 {
		select {
		case m := <-r.inbox:
			switch m.kind {
			case msgJudge:
				l.judge(m)
			case msgEnded:
				l.ended(m)
			case msgPrepared:
				l.prepared(m)
			case msgHeard:
				l.hear(m)
			case msgUnsentPanicked:
				l.end.panic(m)
				l.stop()
			}
		case <-l.fire:
			l.hedgeDue()
		}
	}
	l.letGoOfPreparing()
	for i := range l.hedges {
		// Sent and not judged by the race's end (still in flight when
		// another attempt won or the operation ended, or a panic ended
		// the race): its host may have seen it, spent.
		l.settleHedge(&l.hedges[i], hedgeReached)
	}
	return l.end
}

// raceLoop is the state of one race, owned by its loop (race.run) alone:
// the messages of the race's goroutines reach it through the inbox.
type raceLoop struct {
	r        *race
	at       progress // where the operation stood when the race began
	end      raceEnd
	inFlight []*attempt
	// heard: the attempts in flight whose exchange returned, being
	// classified (a Classifier may take its time): none is hedged.
	// settledBy: the first of them answered with a success, which the
	// race ends on whatever the Classifier says: no attempt is hedged
	// any more, and one answered after it is superseded (it is judged
	// after it: waiting).
	heard     []*attempt
	settledBy *attempt
	// heardBeforeSuccess: the attempts heard before settledBy, which it
	// does not supersede.
	heardBeforeSuccess []*attempt
	// stopped: a panic ended the race, winning nothing; heardAtStop, the
	// attempts heard by then, whose answers still count.
	stopped     bool
	heardAtStop []*attempt
	// settledAt is when settledBy was answered; settledInTime, that it
	// came before the deadline and the caller's end.
	settledAt     time.Duration
	settledInTime bool
	// waiting: attempts classified while one heard before them still was
	// being classified. The first answer wins, not the first Classifier
	// to finish, so the loop judges them in the order they were heard.
	waiting []raceMsg
	hedges  []hedgeSent
	running int  // attempts sent whose goroutine did not end
	won     bool // the race has its verdict
	// noneWon: that verdict was the operation's end with no answer (the
	// caller's cancel, a deadline): the attempts it supersedes lost to no
	// other (see supersededReason).
	noneWon bool
	// cutAs is the class the attempts it cancels record (cutClass).
	cutAs attrs.ErrorClass
	final *attempt
	// hintUntil: the race's retry waits for the hints its attempts got.
	hintUntil time.Duration
	// preparing is the hedge being prepared, nil when none: its number
	// and tokens (its budget loan, loan) are the loop's to give back, as
	// long as it was not sent; givenBack says they were, once the race
	// was over.
	preparing, preparingOf *attempt
	loan                   budgetLoan
	givenBack              bool
	timer                  *time.Timer
	fire                   <-chan time.Time // the hedge delay's, nil when no hedge may follow
}

func (l *raceLoop) hedgeMayFollow() bool {
	return hedgeMayFollow(l.r.hedging.MaxHedges-l.r.tried, l.r.maxAttempts-l.end.made.n)
}

// arm sets the hedge delay for the next hedge, when one may follow.
func (l *raceLoop) arm() {
	l.fire = nil
	if l.hedgeMayFollow() {
		l.timer.Reset(l.end.delay)
		l.fire = l.timer.C
	}
}

// over reports whether the race needs no more attempts.
func (l *raceLoop) over() bool { return l.won || l.stopped || len(l.inFlight) == 0 }

// cancel cancels what is in flight once the race is over.
func (l *raceLoop) cancel() {
	as := l.cutAs
	if as == "" {
		as = attrs.ErrorClassRaceLost // a success heard, or a stop: no verdict cut them
	}
	for _, a := range l.inFlight {
		a.lose(as)
	}
	l.letGoOfPreparing()
}

// letGoOfPreparing cancels the hedge being prepared, the race being over,
// and gives back its number and tokens at once, before the attempt whose
// verdict ended the race decides on its retry: that decision finds the
// host as if the hedge had never been admitted. Its preparation, when it
// ends, only lets go of it (prepared).
func (l *raceLoop) letGoOfPreparing() {
	if l.preparing == nil || l.givenBack {
		return
	}
	l.preparing.lose(attrs.ErrorClassRaceLost)
	l.r.giveBack(l.preparing, l.loan)
	l.givenBack = true
}

func (l *raceLoop) remove(a *attempt) {
	l.inFlight = slices.DeleteFunc(l.inFlight, func(b *attempt) bool { return b == a })
	l.heard = slices.DeleteFunc(l.heard, func(b *attempt) bool { return b == a })
}

// awaited is the latest attempt in flight still waiting for its answer,
// the one a hedge would hedge; nil when every one has its answer, or one
// has a success the race will end on.
func (l *raceLoop) awaited() *attempt {
	if l.settledBy != nil {
		return nil
	}
	for i := len(l.inFlight) - 1; i >= 0; i-- {
		if a := l.inFlight[i]; !slices.Contains(l.heard, a) {
			return a
		}
	}
	return nil
}

// judge gives an attempt that concluded its verdict in the race, once
// every attempt heard before it was judged (or ended by a panic): its
// answer came later, so it is judged knowing theirs.
func (l *raceLoop) judge(m raceMsg) {
	l.waiting = append(l.waiting, m)
	l.judgeInOrder()
}

// judgeInOrder judges the waiting attempts that no earlier answer still
// being classified holds back.
func (l *raceLoop) judgeInOrder() {
	for i := 0; i < len(l.waiting); i++ {
		if m := l.waiting[i]; slices.Index(l.heard, m.a) <= 0 {
			l.waiting = slices.Delete(l.waiting, i, i+1)
			l.judgeNow(m)
			i = -1 // judging it may free the others
		}
	}
}

// judgeNow gives attempt m.a its verdict in the race.
func (l *raceLoop) judgeNow(m raceMsg) {
	if m.kind == msgLeaves {
		l.remove(m.a)
		if l.over() {
			l.cancel()
		}
		return
	}
	superseded := l.supersedes(m.a)
	l.remove(m.a)
	in := m.in.racing(superseded, l.won && l.noneWon, len(l.inFlight) > 0, l.hintUntil-m.end, l.r.maxAttempts-l.end.made.n)
	if l.settledBy != nil && l.settledBy != m.a && l.settledInTime {
		// A success answered after this answer, in time, waits for its
		// verdict: judged as it stood then, this answer is no end.
		in = in.asItStoodAt(l.r.setup.clock.limit - l.settledAt)
	}
	if h := l.hedgeOf(m.a); h != nil {
		l.settleHedge(h, hedgeFateOf(&in))
	}
	v := decide(in)
	switch {
	case v.leftToAttemptInFlight():
		// The race's retry waits for the hint this attempt got, as it
		// would have without hedging.
		l.hintUntil = max(l.hintUntil, m.end+max(in.retryAfter, in.classifier.pause))
	case v.decision != attrs.DecisionSuperseded:
		// The race's verdict: one that ends the operation, or its retry,
		// whose pause and limits the attempt asks for on its goroutine (a
		// retry while others are in flight comes to this only once no
		// time is left, and then ends the operation). Either way the race
		// needs no other attempt.
		l.won = true
		l.noneWon, l.cutAs = endsWithoutAnswer(&in), cutClass(&in)
		if m.reply != nil {
			l.final = m.a
		}
	}
	if l.over() {
		l.cancel()
	}
	if m.reply == nil { // an answer whose Classifier panicked: nobody waits for its verdict
		l.countPanicked(m.a, in, v)
		return
	}
	m.reply <- raceReply{in: in, view: raceView{superseded: in.superseded, link: linkOf(m.a, l.hedges), delay: l.end.delay, made: l.end.made.n}}
}

// ended notes that an attempt's goroutine ended.
func (l *raceLoop) ended(m raceMsg) {
	l.running--
	switch {
	case m.panicked:
		if m.a.hasUncounted {
			// Its answer came: judged in its turn, as the rules alone
			// judge it, and counted then (judgeNow). A reply-less judge.
			l.waiting = append(l.waiting, raceMsg{kind: msgJudge, a: m.a, in: m.a.uncounted.in, end: m.a.end})
		} else {
			// No answer to judge: it stays in flight for the answers heard
			// before the panic, judged as they stood when they came (it
			// was their retry), and leaves after them.
			if !slices.Contains(l.heard, m.a) {
				l.heard = append(l.heard, m.a)
			}
			l.waiting = append(l.waiting, raceMsg{kind: msgLeaves, a: m.a})
		}
		l.end.panic(m)
		l.stop()
		l.judgeInOrder() // the answers heard before the panic are judged as they came
	case m.a == l.final:
		l.end.a, l.end.res = m.a, m.res
	}
}

// supersedes reports whether the race supersedes attempt a's answer: an
// answer won (one heard before a's was judged before it), a success was
// heard before a's, or a panic stopped the race before a's answer came
// (a was canceled). An answer heard before the panic is no loser: the
// throttle and the budget count it as they would have.
func (l *raceLoop) supersedes(a *attempt) bool {
	afterSuccess := l.settledBy != nil && l.settledBy != a && !slices.Contains(l.heardBeforeSuccess, a)
	return l.won || afterSuccess || l.stopped && !slices.Contains(l.heardAtStop, a)
}

// hear notes that attempt m.a's exchange returned: its answer is being
// classified, and a success settles the race (see heard, settledBy).
func (l *raceLoop) hear(m raceMsg) {
	if m.success && l.settledBy == nil {
		l.settledBy, l.settledAt, l.settledInTime = m.a, m.end, m.inTime
		l.heardBeforeSuccess = slices.Clone(l.heard)
	}
	l.heard = append(l.heard, m.a)
}

// stop ends the race on a panic, which wins nothing: what is in flight is
// canceled, and the answers heard by then are still judged (supersedes).
func (l *raceLoop) stop() {
	if !l.stopped {
		l.stopped, l.heardAtStop = true, slices.Clone(l.heard)
	}
	l.cancel()
}

// countPanicked counts the answer of attempt a whose Classifier panicked
// (attempt.uncounted), once the race judged it (in, v): nothing when it was
// superseded, and no failure when another attempt in flight retries it,
// as conclude and settle do.
func (l *raceLoop) countPanicked(a *attempt, in input, v verdict) {
	if in.superseded {
		return
	}
	cost := budgetCharge(&in, a.uncounted.retryAfter, a.uncounted.hinted)
	if v.leftToAttemptInFlight() {
		cost = cost.retriedInFlight()
	}
	clock := l.r.setup.clock
	l.r.gate.observe(l.r.keys, clock.at(a.end), clock.at(clock.since()), cost)
}

// prepared sends the hedge whose preparation ended, or gives back what it
// took.
func (l *raceLoop) prepared(m raceMsg) {
	hedge, admittedOf, loan, givenBack := l.preparing, l.preparingOf, l.loan, l.givenBack
	l.preparing, l.preparingOf, l.loan, l.givenBack = nil, nil, 0, false
	// The attempt it hedges: the one it was admitted for, or an earlier one
	// still waiting, if that one's answer came while it was prepared; none
	// when every attempt in flight has its answer.
	of := l.awaited()
	send := !l.over() && !m.panicked && m.v.goAhead() && of != nil
	now := l.r.setup.clock.since()
	if send {
		at := l.at.started(l.end.made)
		if v := l.r.stillAdmitted(now, &at); !v.goAhead() {
			m.v, send = v, false
		}
	}
	switch {
	case send:
		l.hedges = append(l.hedges, hedgeSent{hedge: hedge, of: of, after: now - startOf(of, l.hedges), loan: loan})
		l.inFlight = append(l.inFlight, hedge)
		l.running++
		l.end.made = hedge.id
		l.end.events = append(l.end.events, hedgeEvent{name: attrs.EventHedgeSent, number: hedge.id.number,
			of: of.id.number, at: now})
		l.arm()
	case m.panicked:
		l.end.panic(m)
		l.stop()
	case !l.over() && !m.v.goAhead():
		l.end.events = append(l.end.events, hedgeEvent{name: attrs.EventHedgeRefused, of: admittedOf.id.number,
			at: now, v: m.v})
	}
	if !send && !givenBack {
		l.r.giveBack(hedge, loan)
	}
	m.reply <- raceReply{send: send}
}

// hedgeDue admits the hedge whose delay ended and starts its preparation.
func (l *raceLoop) hedgeDue() {
	l.fire = nil
	of := l.awaited()
	if l.over() || l.preparing != nil || of == nil {
		return
	}
	r := l.r
	now := r.setup.clock.since()
	hedgeAt := l.at.started(l.end.made)
	v, loan := r.admitHedge(now, &hedgeAt)
	if !v.goAhead() {
		l.end.events = append(l.end.events, hedgeEvent{name: attrs.EventHedgeRefused, of: of.id.number, at: now, v: v})
		return
	}
	r.tried++
	n := l.end.made.n + 1
	l.preparing, l.preparingOf, l.loan = newAttempt(nil, r.setup, attemptID{n: n, number: r.ident.attemptNumber(n)}, hedgeAt), of, loan
	l.preparing.copyOut() // here, while the caller waits: its request is not read once RoundTrip returned
	go r.prepare(l.preparing, r.inbox, r.over)
}

// giveBack gives back what an admitted hedge that was not sent took: its
// attempt number, its budget token and its hedge-rate token. The loop
// calls it, and only the loop, once per hedge: when the hedge's
// preparation ends and it is not sent, or when the race is over while it
// is still being prepared.
func (r *race) giveBack(hedge *attempt, loan budgetLoan) {
	r.ident.unnumber(hedge.id.number)
	r.gate.giveBack(r.keys, loan, r.setup.clock.at(r.setup.clock.since()), r.hedging.MaxShare)
}

// hedgeOf is the race's record of hedge a, nil when a is no hedge.
func (l *raceLoop) hedgeOf(a *attempt) *hedgeSent {
	for i := range l.hedges {
		if l.hedges[i].hedge == a {
			return &l.hedges[i]
		}
	}
	return nil
}

// hedgeFate is what became of a hedge sent, for its tokens.
type hedgeFate uint8

const (
	// hedgeReached: its host saw it, or may have: its budget token spent.
	hedgeReached hedgeFate = iota
	// hedgeRefused: net/http's Transport refused it (its PrepareAttemptFunc
	// made it unsendable): no hedge was sent, both tokens given back.
	hedgeRefused
	// hedgeNeverLeft: it never left the client (canceled while it waited
	// for a connection): its host saw nothing, its budget token given
	// back; it was a hedge sent all the same (its span, hedge_sent), and
	// keeps its hedge-rate token, which bounds those.
	hedgeNeverLeft
)

// hedgeFateOf is the fate of the hedge whose verdict's input is in.
func hedgeFateOf(in *input) hedgeFate {
	switch {
	case in.unsent():
		return hedgeRefused
	case in.leftNothingBehind():
		return hedgeNeverLeft
	}
	return hedgeReached
}

// settleHedge ends h's loan once, as its fate says.
func (l *raceLoop) settleHedge(h *hedgeSent, fate hedgeFate) {
	if h.settled {
		return
	}
	h.settled = true
	now := l.r.setup.clock.at(l.r.setup.clock.since())
	switch fate {
	case hedgeReached:
		l.r.gate.sent(l.r.keys, h.loan, now)
	case hedgeRefused:
		l.r.gate.giveBack(l.r.keys, h.loan, now, l.r.hedging.MaxShare)
	case hedgeNeverLeft:
		l.r.gate.neverLeft(l.r.keys, h.loan, now)
	}
}

// panic keeps the first panic that ended a goroutine of the race (m); an
// attempt whose goroutine panicked after it (msgEnded: its preparation's
// and an unsent hedge's let go of it already) is kept in later.
func (e *raceEnd) panic(m raceMsg) {
	switch {
	case !e.panicked:
		e.panicked, e.value, e.failed = true, m.value, m.a
	case m.kind == msgEnded:
		e.later = append(e.later, m)
	}
}

// admitHedge decides on a hedge at now (phaseHedge), made where the
// operation stands at at: decide, then the admission, which takes a budget
// token (the loan it returns) and a hedge from the dependency's rate for a
// hedge it admits, and gives them back if the decision still refuses it: a
// guard only, as decide is pure and its input a snapshot, so a hedge the
// admission admitted is one the second decision lets go.
func (r *race) admitHedge(now time.Duration, at *progress) (verdict, budgetLoan) {
	in := r.owner.inputAt(phaseHedge, now, at).hedging(r.hedging.MaxHedges - r.tried)
	v := decide(in)
	if !v.needBudget {
		return v, 0
	}
	loan, reason, allowed := r.gate.hedge(r.keys, r.setup.clock.at(now), r.hedging.MaxShare)
	if in = in.withBudget(reason); reason == "" {
		in = in.withRate(allowed)
	}
	if v = decide(in); allowed && !v.goAhead() {
		r.gate.giveBack(r.keys, loan, r.setup.clock.at(now), r.hedging.MaxShare)
		return v, 0
	}
	return v, loan
}

// stillAdmitted asks the hold again, at now, for the hedge admitted at
// its delay and prepared since (at: the race's progress): a hold another
// operation's answer brought during its preparation holds it, as it holds
// a retry after its pause (admission.resume).
func (r *race) stillAdmitted(now time.Duration, at *progress) verdict {
	reason := r.gate.resume(r.keys, r.setup.clock.at(now))
	if reason == "" {
		return verdict{}
	}
	return decide(r.owner.inputAt(phaseHedge, now, at).hedging(r.hedging.MaxHedges - r.tried + 1).withBudget(reason))
}

// linkOf is attempt a's place in a race that sent hedges.
func linkOf(a *attempt, hedges []hedgeSent) hedgeLink {
	var of int
	var sentAfter time.Duration
	hedged := false
	for _, h := range hedges {
		switch a {
		case h.hedge:
			of = h.of.id.number
		case h.of:
			sentAfter, hedged = h.after, true
		}
	}
	return hedgeLink{of: of, sentAfter: sentAfter, hedged: hedged}
}

// startOf is when attempt a was sent, as the loop knows it: the race's
// first attempt's start, or when the loop sent a hedge.
func startOf(a *attempt, hedges []hedgeSent) time.Duration {
	for _, h := range hedges {
		if h.hedge == a {
			return startOf(h.of, hedges) + h.after
		}
	}
	return a.start
}

// tell sends m to a race's loop (inbox), and reports whether it did: a
// loop that returned (over) takes nothing.
func tell(inbox chan raceMsg, over chan struct{}, m raceMsg) bool {
	select {
	case inbox <- m:
		return true
	case <-over:
		return false
	}
}

// heard tells the loop that attempt a's exchange returned, before its
// Classifier runs: the answer came, whatever the Classifier makes of it,
// so no hedge of a is due (hedging.md: a hedge follows a delay with no
// response headers), nor of any other attempt when the answer is a
// success, which the race ends on. inTime: it came (at end) before the
// deadline and the caller's end.
func (r *race) heard(a *attempt, success, inTime bool, end time.Duration) {
	tell(r.inbox, r.over, raceMsg{kind: msgHeard, a: a, success: success, inTime: inTime, end: end})
}

// judge hands the loop attempt a's input, gathered on a's goroutine once
// it was answered (at end) and classified, and returns that input with
// what the race adds to it (who won, who is in flight, the race's hints,
// the attempts made), and a's view of the race. Only an attempt of the
// race in progress concludes: a race ends once each of its attempts did.
func (r *race) judge(a *attempt, in input, end time.Duration) (input, raceView) {
	reply := make(chan raceReply, 1)
	if !tell(r.inbox, r.over, raceMsg{kind: msgJudge, a: a, in: in, end: end, reply: reply}) {
		return in.racing(true, false, false, 0, in.attemptsLeft), raceView{superseded: true, made: a.id.n}
	}
	rep := <-reply
	return rep.in, rep.view
}

// attend sends attempt a of the race in progress on the goroutine it runs
// on, launching it first when it is a hedge, and tells the loop its end:
// its result, or the panic that ended it. The launch is inside: it runs
// the user's code (the attempt span's name formatter, the tracer's span
// processors), whose panic or runtime.Goexit must reach the loop, which
// counts the hedge as sent. An attempt whose result the operation will not
// act on lets go of it here, on its own goroutine: closing a body ends a
// span, which runs the telemetry.
func (r *race) attend(a *attempt, inbox chan raceMsg, over chan struct{}, launch bool) {
	ended := false
	defer func() {
		if !ended {
			tell(inbox, over, raceMsg{kind: msgEnded, a: a, panicked: true, value: recover()})
		}
	}()
	if launch {
		a.launch(r.owner.policy())
	}
	res := a.send()
	if !final(res.v) {
		a.discard(res.resp, res.v.drain)
		res = result{err: res.err, v: res.v}
	}
	ended = true
	if !tell(inbox, over, raceMsg{kind: msgEnded, a: a, res: res}) {
		letGo(a, res)
	}
}

// prepare prepares hedge on a goroutine of its own, asks the loop whether
// to send it, and sends it when told to (attend). A hedge that is not sent
// was given back by the loop; its preparation only lets go of it. A panic
// goes to the loop, or, once the race is over and nobody waits for it, to
// otel.Handle.
func (r *race) prepare(hedge *attempt, inbox chan raceMsg, over chan struct{}) {
	returned := false // normally, or to attend, which reports from then on
	defer func() {
		if returned {
			return
		}
		v := recover()
		hedge.abandon()
		reply := make(chan raceReply, 1)
		if tell(inbox, over, raceMsg{kind: msgPrepared, a: hedge, panicked: true, value: v, reply: reply}) {
			<-reply
		} else if v != nil {
			handleStrayPanic("the preparation of a hedge no longer needed", v)
		}
	}()
	v := r.owner.prepareHedge(hedge)
	reply := make(chan raceReply, 1)
	if !tell(inbox, over, raceMsg{kind: msgPrepared, a: hedge, v: v, reply: reply}) || !(<-reply).send {
		returned = true
		if v.goAhead() { // the race was over, or no attempt waited any more
			defer func() {
				// Its body's Close: to the caller while the race runs, else
				// nobody waits for this goroutine.
				if p := recover(); p != nil && !tell(inbox, over, raceMsg{kind: msgUnsentPanicked, a: hedge, panicked: true, value: p}) {
					handleStrayPanic("closing the body of a hedge not sent", p)
				}
			}()
			hedge.unsent()
		}
		return
	}
	returned = true
	r.attend(hedge, inbox, over, true)
}

// record records the race's hedge events on the operation span, once the
// race is over, each at its time.
func (r *race) record(rec *recorder, tel *opRecord, end *raceEnd) {
	for _, e := range end.events {
		rec.recordHedge(tel, e.name, e.number, e.of, end.delay, e.v, r.setup.clock.at(e.at))
	}
}

// letGo lets go of what an attempt's result holds that nobody acts on: its
// response, closed, and the attempt.
func letGo(a *attempt, res result) {
	afterPanic(func() { a.discard(res.resp, 0) })
	a.abandon()
}

// final reports whether verdict v is the one a race ends on: the first
// that ends the operation, or a retry no other attempt in flight carries
// out. Exactly one attempt of a race concludes with it: the later ones are
// superseded, and a retry while another attempt is in flight
// (ReasonInFlight) leaves the race to that attempt.
func final(v verdict) bool {
	return v.decision != attrs.DecisionSuperseded && !v.leftToAttemptInFlight()
}

// latencySample is what an attempt of a race tells of its dependency's
// time to response headers (see latencySketch): its own, when it was
// answered; when it was cut once another attempt won (cut), that it took
// at least its elapsed time, which tells something only when it ran to
// the hedge delay or past it (0: nothing); when it timed out there, its
// elapsed time; a failure of another kind tells nothing.
func latencySample(o observation, view raceView) (took time.Duration, cut bool) {
	took = o.end - o.start
	switch {
	case o.err == nil && !view.superseded:
		return took, false
	case took < view.delay:
		return 0, false
	case view.superseded:
		return took, true
	case o.timedOut:
		return took, false
	}
	return 0, false
}
