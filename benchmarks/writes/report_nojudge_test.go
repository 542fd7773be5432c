// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
)

// When a budget refusal touched every write, no write's requests are
// compared: the requests target has nothing to be judged on, and is not
// printed "met" (0 <= 0 + 0) for a comparison that was never made, though
// the keyed run sent twice the requests of the unkeyed one (a reviewer's
// find); the report says it was not judged.
func TestTheRequestsTargetOverNoWriteIsNotJudged(t *testing.T) {
	refused := func(n int) writeResult {
		seen := make([]int, n)
		for i := range seen {
			seen[i] = 503
		}
		return writeResult{told: toldError, seen: seen, outcome: attrs.OutcomeBudgetExhausted}
	}
	k := result{config: keyed}
	u := result{config: unkeyed}
	for range 4 {
		k.writes = append(k.writes, refused(6))
		u.writes = append(u.writes, refused(3))
	}
	g, ok := targetsOf([]result{k, u})
	if !ok {
		t.Fatal("targetsOf: not ok")
	}
	var out bytes.Buffer
	report(&out, []result{k, u})
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "requests per write, over the") && strings.HasSuffix(line, ": met") {
			t.Fatalf("compared=%d writes, requestsMet()=%v; report judges a target on no writes as met:\n%s", g.compared, g.requestsMet(), line)
		}
	}
	if g.requestsMet() || !strings.Contains(out.String(), "not judged") {
		t.Errorf("requestsMet() = %v over no write; report:\n%s", g.requestsMet(), out.String())
	}
}
