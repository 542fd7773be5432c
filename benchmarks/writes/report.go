// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/otelretry/otelretry-go/attrs"
)

// tally is a configuration's figures.
type tally struct {
	writes int
	// What the server did: applied a write once, twice or more, or never.
	once, dup, never int
	// What the caller was told.
	success, failed, unknown int
	// failedApplied: told an error (not an unknown outcome), yet applied.
	failedApplied int
	// budget: writes whose retry the retry budget refused (otelretry's
	// budget_exhausted).
	budget   int
	requests int // sent, refused connections included
	// lostResends: requests sent after the first answer a write lost (see
	// lostAnswerResends).
	lostResends int
	// resendable: otelretry ended the write with a resend still allowed
	// (not max_attempts, deadline_exceeded or budget_exhausted); done: of
	// those, the writes applied once and answered a success.
	resendable, done int
}

func tallyOf(r result) tally {
	t := tally{writes: len(r.writes)}
	for _, w := range r.writes {
		switch {
		case w.applied == 1:
			t.once++
		case w.applied > 1:
			t.dup++
		default:
			t.never++
		}
		switch w.told {
		case toldSuccess:
			t.success++
		case toldUnknown:
			t.unknown++
		default:
			t.failed++
			if w.applied > 0 {
				t.failedApplied++
			}
		}
		t.requests += len(w.seen)
		t.lostResends += lostAnswerResends(w.seen)
		switch w.outcome {
		case attrs.OutcomeBudgetExhausted:
			t.budget++
		case attrs.OutcomeMaxAttempts, attrs.OutcomeDeadlineExceeded:
		default:
			t.resendable++
			if w.applied == 1 && w.told == toldSuccess {
				t.done++
			}
		}
	}
	return t
}

func (t tally) perWrite(n int) float64 { return float64(n) / float64(t.writes) }

// requestsPerWrite is the requests per write as the report prints them:
// "none" in a run of no write, whose 0/0 is no figure.
func (t tally) requestsPerWrite() string {
	if t.writes == 0 {
		return "none"
	}
	return strconv.FormatFloat(t.perWrite(t.requests), 'f', 3, 64)
}

// targets are the run's targets for the configuration with generated
// keys, judged against the one without. The requests are compared write by
// write over the writes no budget refusal touched in either run (a
// refusal in one run and not in the other changes the requests for
// reasons of its own): both runs meet the same fault at the same request
// of a write, so the writes' requests may differ only by the resends the
// keyed run sent after a write's first lost answer.
type targets struct {
	writes, duplicates         int
	resendable, done           int
	compared                   int // writes whose requests are compared
	requests, base, lostResend float64
}

// requestsMet reports whether the keyed run's requests per write stayed
// within the unkeyed run's and the lost answers' resends; over no write
// compared it is not met: there was nothing to judge.
func (g targets) requestsMet() bool {
	return g.compared > 0 && g.requests <= g.base+g.lostResend+1e-9
}

// targetsOf returns the targets' figures, and false when the run lacks
// either otelretry configuration.
func targetsOf(results []result) (targets, bool) {
	var k, u *result
	for i := range results {
		switch results[i].config {
		case keyed:
			k = &results[i]
		case unkeyed:
			u = &results[i]
		}
	}
	if k == nil || u == nil || len(k.writes) != len(u.writes) {
		return targets{}, false
	}
	t := tallyOf(*k)
	g := targets{writes: t.writes, duplicates: t.dup, resendable: t.resendable, done: t.done}
	var reqK, reqU, lost int
	for i, kw := range k.writes {
		uw := u.writes[i]
		if kw.outcome == attrs.OutcomeBudgetExhausted || uw.outcome == attrs.OutcomeBudgetExhausted {
			continue
		}
		g.compared++
		reqK, reqU, lost = reqK+len(kw.seen), reqU+len(uw.seen), lost+lostAnswerResends(kw.seen)
	}
	if g.compared > 0 {
		n := float64(g.compared)
		g.requests, g.base, g.lostResend = float64(reqK)/n, float64(reqU)/n, float64(lost)/n
	}
	return g, true
}

func metText(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

// judgedText is metText for a target judged over n writes, and says so
// when there were none: a target over no writes is neither met nor missed.
func judgedText(n int, ok bool) string {
	if n == 0 {
		return "not judged (no such write)"
	}
	return metText(ok)
}

// report writes the table, the targets and one machine-readable line per
// configuration.
func report(w io.Writer, results []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "configuration\tapplied once\ttwice or more\tnever\ttold success\terror\tunknown outcome\terror, yet applied\trequests per write\tbudget refusals\tfaults lost/503/slow/refused\ttime\t")
	for _, r := range results {
		t := tallyOf(r)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%d/%d/%d/%d\t%.1fs\t\n", r.config, t.once, t.dup, t.never,
			t.success, t.failed, t.unknown, t.failedApplied, t.requestsPerWrite(), t.budget,
			r.drawn[faultLost], r.drawn[faultUnavailable], r.drawn[faultSlow], r.drawn[faultRefused], r.took.Seconds())
	}
	tw.Flush()
	for _, r := range results {
		if r.stray > 0 {
			fmt.Fprintf(w, "! %s: %d requests for no write\n", r.config, r.stray)
		}
	}
	if g, ok := targetsOf(results); ok {
		fmt.Fprintf(w, "targets, %s:\n", keyed)
		fmt.Fprintf(w, "  duplicates: %d (target 0): %s\n", g.duplicates, judgedText(g.writes, g.duplicates == 0))
		fmt.Fprintf(w, "  writes it ended with a resend still allowed (not max_attempts, deadline_exceeded or budget_exhausted): %d, applied once and answered a success: %d (target all): %s\n",
			g.resendable, g.done, judgedText(g.resendable, g.done == g.resendable))
		fmt.Fprintf(w, "  requests per write, over the %d writes no budget refusal touched in either run: %.3f, at most %s's %.3f + %.3f the lost answers needed (requests after a write's first lost answer, to its success, a 409 after a 409 not counted) = %.3f: %s\n",
			g.compared, g.requests, unkeyed, g.base, g.lostResend, g.base+g.lostResend, judgedText(g.compared, g.requestsMet()))
	}
	var measured []string
	for _, r := range results {
		t := tallyOf(r)
		switch r.config {
		case "retryablehttp", "failsafehttp":
			measured = append(measured, fmt.Sprintf("%s %d duplicates", r.config, t.dup))
		case unkeyed:
			measured = append(measured, fmt.Sprintf("%s without keys %d unknown outcomes", r.config, t.unknown))
		}
	}
	if len(measured) > 0 {
		fmt.Fprint(w, "as measured:")
		for i, m := range measured {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprint(w, sep+" "+m)
		}
		fmt.Fprintln(w)
	}
	for _, r := range results {
		t := tallyOf(r)
		fmt.Fprintf(w, "writes config=%s once=%d dup=%d never=%d success=%d error=%d unknown=%d budget=%d requests_per_write=%s\n",
			r.config, t.once, t.dup, t.never, t.success, t.failed, t.unknown, t.budget, t.requestsPerWrite())
	}
}
