// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Composed steps do what the steps do one after another: random
// successes' and failures' steps (any ratio, any tokens), and shifts of
// a token as a loan's take, applied to every tokens a host may hold.
func TestTokenStepsCompose(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		tokens := int64(1+rng.IntN(20)) * tokenCost
		composed := unchanged
		var steps []tokenStep
		for range 1 + rng.IntN(10) {
			var s tokenStep
			switch rng.IntN(3) {
			case 0:
				s = tokenStep{shift: int64(1 + rng.IntN(1000)), lo: -unbounded, hi: tokens}
			case 1:
				s = tokenStep{shift: -tokenCost, lo: tokens / 2, hi: unbounded}
			default:
				s = tokenStep{shift: -tokenCost, lo: -unbounded, hi: unbounded}
			}
			steps = append(steps, s)
			composed = composed.then(s)
		}
		for x := int64(-2 * tokenCost); x <= tokens+2*tokenCost; x += 250 {
			want := x
			for _, s := range steps {
				want = s.apply(want)
			}
			if got := composed.apply(x); got != want {
				t.Fatalf("steps %+v on %d: composed %d, one by one %d", steps, x, got, want)
			}
		}
	}
}

// TestLoansSettledInAnyOrderAgreeWithAReplay runs random sequences of
// hedges, their settlement (sent or given back, in any order, the rest
// given back at the end) and answers on one host, and replays each with
// the hedges given back never admitted: the budget ends where the replay
// does, never above (a token minted) nor below (a token lost).
func TestLoansSettledInAnyOrderAgreeWithAReplay(t *testing.T) {
	type step struct {
		kind int // 0 a success, 1 a failure, 2 a hedge, 3 settle the oldest open loan, 4 the newest
		sent bool
	}
	type open struct {
		loan budgetLoan
		step int // its hedge's
	}
	rng := rand.New(rand.NewPCG(7, 44))
	now := time.Now()
	milli := func(b *Budget) int64 {
		if e, kept := b.hosts["h.test"]; kept {
			return e.milli
		}
		return b.tokens()
	}
	for seq := range 20000 {
		tokens, ratio := 2+rng.IntN(9), []float64{0.3, 0.5, 1}[rng.IntN(3)]
		b := &Budget{Tokens: tokens, TokenRatio: ratio}
		var steps []step
		var opens []open
		sent := map[int]bool{} // by hedge step
		for range 12 {
			st := step{kind: rng.IntN(5), sent: rng.IntN(2) == 0}
			switch st.kind {
			case 0:
				b.record("h.test", now, obs200)
			case 1:
				b.record("h.test", now, obs503)
			case 2:
				loan, r := b.hedge("h.test", now)
				if r != "" {
					continue
				}
				opens = append(opens, open{loan, len(steps)})
			default:
				if len(opens) == 0 {
					continue
				}
				i := 0
				if st.kind == 4 {
					i = len(opens) - 1
				}
				b.settleLoan("h.test", opens[i].loan, now, st.sent)
				sent[opens[i].step] = st.sent
				opens = slices.Delete(opens, i, i+1)
			}
			steps = append(steps, st)
		}
		for _, o := range opens { // the race ends while they are prepared
			b.giveBack("h.test", o.loan, now)
		}
		checkBudget(t, b)
		replay := &Budget{Tokens: tokens, TokenRatio: ratio}
		for i, st := range steps {
			switch {
			case st.kind == 0:
				replay.record("h.test", now, obs200)
			case st.kind == 1:
				replay.record("h.test", now, obs503)
			case st.kind == 2 && sent[i]:
				if _, r := replay.hedge("h.test", now); r != "" {
					t.Fatalf("sequence %d: the replay refused a hedge the budget admitted", seq)
				}
				replay.spent("h.test", replay.loans, now)
			}
		}
		if got, want := milli(b), milli(replay); got != want {
			t.Fatalf("sequence %d (tokens %d, ratio %v): %d milli-tokens, the replay %d; steps %+v, sent %v",
				seq, tokens, ratio, got, want, steps, sent)
		}
	}
}
