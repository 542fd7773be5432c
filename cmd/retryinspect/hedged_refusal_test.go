// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A hedged read whose hedge failed first (retry, in_flight) and whose
// first attempt then failed with the budget refusing its retry: one
// retry refused, recorded on attempt 1's decision. The HTML overview
// counted it twice: once from attempt 1's budget_exhausted, once more as a
// refusal no attempt's decision records, for it read only the last attempt
// in the list (the hedge, retry).
func TestAHedgedRacesRefusalIsCountedOnce(t *testing.T) {
	spans := hedgedRefusalSpans(t)
	code, out, errOut := runOnFile(t, spans)
	if code == exitError {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "1 budget_exhausted") {
		t.Fatalf("the scenario did not play:\n%s", out)
	}
	headline := regexp.MustCompile(`(?m)^  api\.test: .*$`).FindString(out)
	if !strings.Contains(headline, "the budget refused 1 retry") {
		t.Errorf("headline %q: want the budget refused 1 retry", headline)
	}
	_, page, _ := runOnFile(t, spans, "-html", "-")
	m := regexp.MustCompile(`the budget refused (\d+ retr\w+)`).FindAllString(page, -1)
	for _, s := range m {
		if s != "the budget refused 1 retry" {
			t.Errorf("the HTML overview says %q of a run where the budget refused one retry (all: %q)", s, m)
			break
		}
	}
}

// hedgedRefusalSpans: a GET hedged after 10ms; the hedge (attempt 2)
// fails first with a 503 (retry, in_flight: attempt 1 is its retry), then
// attempt 1 fails with a 503 and the budget (4 tokens: the hedge took
// one, the failure another) refuses its retry: budget_exhausted, decided
// by attempt 1, which is not the last attempt in the list.
func hedgedRefusalSpans(t *testing.T) []byte {
	return refusalSpans(t, func(t *testing.T, tel []otelretry.Option) {
		base := scripted.New(scripted.Step{Delay: 100 * time.Millisecond, Status: 503}, scripted.Step{Delay: 5 * time.Millisecond, Status: 503})
		rt := otelretry.NewTransport(base, append(tel,
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
			otelretry.WithBudget(&otelretry.Budget{Tokens: 4}))...)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/r", nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		if err != nil || resp.StatusCode != 503 {
			t.Fatalf("ended %v; the scenario wants the 503", err)
		}
	})
}

// The same run with its operation span lost (an operation from its
// attempts alone: no outcome): the decision of the attempt the operation
// ended on says it was refused (Operation.Refused). The last attempt in the
// list was read (the hedge, retry), and the headline and the JSON's
// budget_refused dropped the refusal.
func TestARefusalWithoutAnOperationSpanIsCounted(t *testing.T) {
	var kept []string
	for _, line := range strings.Split(string(hedgedRefusalSpans(t)), "\n") {
		if strings.Contains(line, `"retry.request.id"`) { // attempt spans only
			kept = append(kept, line)
		}
	}
	spans := []byte(strings.Join(kept, "\n") + "\n")
	code, out, errOut := runOnFile(t, spans)
	if code == exitError {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if testing.Verbose() {
		t.Logf("%s", out)
	}
	if !strings.Contains(out, "budget_exhausted  budget") || strings.Contains(out, "outcome budget_exhausted") {
		t.Fatalf("the scenario did not play:\n%s", out)
	}
	headline := regexp.MustCompile(`(?m)^  .*× load.*$`).FindString(out)
	if !strings.Contains(headline, "the budget refused 1 retry") {
		t.Errorf("headline %q: attempt 1 decided budget_exhausted (the operation's ending attempt), yet no retry the budget refused is counted", headline)
	}
	_, js, _ := runOnFile(t, spans, "-json")
	if !strings.Contains(js, `"budget_refused":1`) && !strings.Contains(js, `"budget_refused": 1`) {
		t.Errorf("JSON: want budget_refused 1; got %q", regexp.MustCompile(`"budget_refused":\s*\d+`).FindString(js))
	}
}
