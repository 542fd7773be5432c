// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// admission is the one point at which every request beyond an operation's
// first is admitted: a retry (after a status, an error class, a
// Classifier, a server's verdict, or a state check's not_applied) and a
// hedge. It decides before anything about the request starts (a hedge's
// preparation included), and it takes what the request costs in the same
// step, so that operations in flight together cannot all pass on the same
// tokens:
//   - a retry follows a failure: the failure is charged to the retry
//     budget and the retry's admission decided in one step (retry);
//   - a state check's resend follows no failure charged with it (its
//     write's was, as it ended): it takes a budget token of its own in
//     the step that admits it, given back if the throttle refuses it
//     (resend);
//   - a hedge follows no failure: it takes a hedge from its dependency's
//     hedge rate, then a budget token (hedge), and gives both back here
//     when it is not sent (giveBack);
//   - an answer on which nothing is asked (a success, a failure that ends
//     the operation) is only counted (observe).
//
// With a client-side throttle (WithThrottle), every request passes it
// here too, the first attempt included, after the budget and the rate:
// it counts what each answer tells it.
//
// It holds no lock of its own: each of the Budget, the hedger and the
// Throttle takes its own, and calls no user code under it.
type admission struct {
	budget   *Budget // nil: WithoutBudget
	hedger   *hedger
	throttle *Throttle // nil: off
}

// admissionKeys are the keys a request is admitted under: budget, its
// retry budget's ("" without a budget), and dep, its dependency's, which
// the hedge rate and the throttle count by: the budget's key, else the
// host (without a budget, or when Budget.Key gave ""), so that one host's
// failures never throttle another's requests.
type admissionKeys struct{ budget, dep string }

// keysOf are r's admission keys under budget b (nil: WithoutBudget).
func keysOf(b *Budget, r *http.Request) admissionKeys {
	var k admissionKeys
	if b != nil {
		k.budget = b.key(r)
	}
	if k.dep = k.budget; k.dep == "" {
		k.dep = hostOf(r)
	}
	return k
}

// first decides whether an operation's first attempt to dep may start at
// now: "" when admitted, else ReasonThrottle. Only the throttle refuses a
// first attempt.
func (g *admission) first(dep string, now time.Time) attrs.Reason {
	if g.throttle != nil && !g.throttle.admit(dep, now) {
		return attrs.ReasonThrottle
	}
	return ""
}

// retry charges failed (the answer the retry is asked on, which came at
// answered; the zero value charges nothing) to k's budget and decides, in
// the same step, whether the retry may start at startAt: "" when
// admitted, else the refusal's reason. The throttle, whose window moves
// on with every reading, counts and admits at now.
func (g *admission) retry(k admissionKeys, answered, now, startAt time.Time, failed budgetObservation) attrs.Reason {
	if failed.ownToken {
		return g.resend(k, now, startAt)
	}
	g.count(k.dep, now, failed)
	if g.budget != nil {
		if reason := g.budget.retry(k.budget, answered, startAt, failed); reason != "" {
			return reason
		}
	}
	return g.first(k.dep, now)
}

// resend admits at now the resend a state check's not_applied asks for,
// to start at startAt: it takes a budget token, lent as a hedge's, then
// passes the throttle; the token is spent once both admit it, and given
// back when the throttle refuses. A resend admitted keeps its token even
// if it is then not sent (its preparation fails, a hold stops it), as a
// retry's failure stays charged.
func (g *admission) resend(k admissionKeys, now, startAt time.Time) attrs.Reason {
	var loan budgetLoan
	if g.budget != nil {
		var reason attrs.Reason
		if loan, reason = g.budget.lend(k.budget, now, startAt); reason != "" {
			return reason
		}
	}
	if reason := g.first(k.dep, now); reason != "" {
		if g.budget != nil {
			g.budget.giveBack(k.budget, loan, now)
		}
		return reason
	}
	g.sent(k, loan, now)
	return ""
}

// resume decides whether a retry admitted when it was decided may make
// its call at now, once its pause is over: "" when it may, else
// ReasonPushback when a hold on k's host came during the pause and still
// runs (another operation's Retry-After): a hold holds back every retry
// whose call it would meet, not only those decided after it came.
func (g *admission) resume(k admissionKeys, now time.Time) attrs.Reason {
	if g.budget != nil && g.budget.held(k.budget, now) {
		return attrs.ReasonPushback
	}
	return ""
}

// observe counts an answer, which came at answered, on which no retry is
// asked (the throttle at now, as in retry).
func (g *admission) observe(k admissionKeys, answered, now time.Time, o budgetObservation) {
	g.count(k.dep, now, o)
	if g.budget != nil {
		g.budget.record(k.budget, answered, o)
	}
}

// count tells dep's throttle what an answer came to.
func (g *admission) count(dep string, now time.Time, o budgetObservation) {
	if g.throttle == nil {
		return
	}
	if counted, accepted := throttleCount(o); counted {
		g.throttle.record(dep, now, accepted)
	}
}

// hedge takes what a hedge under k costs at now: a hedge from the
// dependency's rate, then a budget token (its loan), then the throttle's
// admission. It returns the loan, and the budget's or the throttle's
// refusal, or whether the rate allowed it; what a refusal leaves taken is
// given back at once. The rate comes first: it touches no other state, so
// that hedges it refuses, admitted at one instant with others, take no
// budget token the others would then count against them (they recorded
// the budget's refusal where the rate refused them).
func (g *admission) hedge(k admissionKeys, now time.Time, rate float64) (budgetLoan, attrs.Reason, bool) {
	if !g.hedger.take(k.dep) {
		return 0, "", false
	}
	var loan budgetLoan
	if g.budget != nil {
		var reason attrs.Reason
		if loan, reason = g.budget.hedge(k.budget, now); reason != "" {
			g.hedger.refund(k.dep, rate)
			return 0, reason, false
		}
	}
	if reason := g.first(k.dep, now); reason != "" {
		g.giveBack(k, loan, now, rate)
		return 0, reason, false
	}
	return loan, "", true
}

// sent notes at now that the hedge of loan, admitted on k's budget tokens,
// was sent and its host saw it (its verdict came): its token is spent.
func (g *admission) sent(k admissionKeys, loan budgetLoan, now time.Time) {
	if g.budget != nil {
		g.budget.spent(k.budget, loan, now)
	}
}

// neverLeft notes at now that the hedge of loan never left the client
// (canceled while it waited for a connection): its host saw nothing, and
// its budget token is given back; its hedge-rate token stays taken, as
// the rate bounds the hedges sent, which it was (its span, hedge_sent).
func (g *admission) neverLeft(k admissionKeys, loan budgetLoan, now time.Time) {
	if g.budget != nil {
		g.budget.giveBack(k.budget, loan, now)
	}
}

// giveBack returns what hedge took for the hedge of loan, admitted and
// not sent.
func (g *admission) giveBack(k admissionKeys, loan budgetLoan, now time.Time, rate float64) {
	if g.budget != nil {
		g.budget.giveBack(k.budget, loan, now)
	}
	g.hedger.refund(k.dep, rate)
}
