// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"testing"
	"testing/synctest"
	"time"
)

// admission.resend: "the token is spent once both admit it". An admitted
// resend settles its loan at once: a host whose loan stayed open would be
// kept for good (a host that lends is never forgotten), and a full table
// would refuse every other host's requests (a reviewer's mutant, dropping
// the settling, passed every test before this one).
func TestAnAdmittedResendSettlesItsLoan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{MaxHosts: 1, IdleEviction: time.Minute}
		g := admission{budget: b}
		now := time.Now()
		if reason := g.resend(admissionKeys{budget: "a.test", dep: "a.test"}, now, now); reason != "" {
			t.Fatalf("the first resend to a.test: refused (%s)", reason)
		}
		later := now.Add(2 * time.Minute) // a.test idle past IdleEviction
		if reason := g.resend(admissionKeys{budget: "b.test", dep: "b.test"}, later, later); reason != "" {
			t.Errorf("a resend to b.test once a.test was idle past IdleEviction: refused (%s); want a.test forgotten to make room", reason)
		}
	})
}

// admission.hedge: what a refusal leaves taken is given back at once. A
// hedge the budget refuses gives back the hedge it took from the
// dependency's rate, so that the next operation's hedge finds it (a
// reviewer's mutant, keeping it, passed every test before this one).
func TestAHedgeTheBudgetRefusesGivesItsRateBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 0.05 // a burst of 5
		b := &Budget{}
		g := admission{budget: b, hedger: &hedger{}}
		now := time.Now()
		k := admissionKeys{budget: "api.test", dep: "api.test"}
		g.hedger.begun(k.dep, rate, now) // a full burst
		burst := int(hedgeBurst(rate))

		for i := 0; ; i++ { // the host's tokens lent until the budget refuses
			if _, reason := b.hedge(k.budget, now); reason != "" {
				break
			}
			if i > 100 {
				t.Fatal("the budget never refused a hedge")
			}
		}
		for range 2 * burst {
			if _, reason, ok := g.hedge(k, now, rate); ok || reason == "" {
				t.Fatalf("a hedge once the host lent its tokens: ok %v, reason %q; want the budget's refusal (the rate's hedge given back)", ok, reason)
			}
		}
		took := 0
		for g.hedger.take(k.dep) {
			took++
			if took > 2*burst {
				break
			}
		}
		if took != burst {
			t.Errorf("the rate allows %d hedges after %d the budget refused; want its whole burst, %d", took, 2*burst, burst)
		}
	})
}
