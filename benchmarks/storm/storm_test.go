// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSmoke runs the whole benchmark in smoke mode, with the traffic split
// across two clients, and checks its structure only: every configuration
// and phase is reported, the counts are consistent and the ratios are
// ratios. It asserts nothing about timing.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every configuration for about 0.8 s each")
	}
	o := defaultOptions()
	o.smoke()
	o.clients = 2
	var out bytes.Buffer
	results, err := run(o, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())

	if len(results) != len(configNames) {
		t.Fatalf("got %d results, want %d", len(results), len(configNames))
	}
	for _, r := range results {
		if r.stray != 0 {
			t.Errorf("%s: %d requests the server could not attribute", r.config, r.stray)
		}
		if r.inflight != 0 {
			t.Errorf("%s: %d operations still running after the drain", r.config, r.inflight)
		}
		if len(r.phases) != 5 {
			t.Errorf("%s: %d phases, want 5", r.config, len(r.phases))
		}
		ops, atts := 0, 0
		for _, s := range append(append([]*stats{}, r.phases...), r.outage) {
			if s.ops == 0 {
				t.Errorf("%s/%s: no operations", r.config, s.name)
			}
			if sum := s.ok + s.status + s.deadline + s.errs + s.dropped; sum != s.ops {
				t.Errorf("%s/%s: outcomes add up to %d, ops %d", r.config, s.name, sum, s.ops)
			}
			// An operation that got an answer reached the server; one that
			// ran out of time may not have (a starved machine can take the
			// whole smoke deadline to dial).
			if s.attempts < s.ok+s.status {
				t.Errorf("%s/%s: attempts %d < operations answered %d", r.config, s.name, s.attempts, s.ok+s.status)
			}
			if s.attempts > 3*s.ops {
				t.Errorf("%s/%s: attempts %d > 3 × operations %d", r.config, s.name, s.attempts, s.ops)
			}
			if v := s.success(); v < 0 || v > 1 {
				t.Errorf("%s/%s: success ratio %v", r.config, s.name, v)
			}
			if s.quantile(0.5) > s.quantile(0.99) {
				t.Errorf("%s/%s: p50 > p99", r.config, s.name)
			}
		}
		for _, s := range r.phases {
			ops += s.ops
			atts += s.attempts
		}
		if ops != r.offered || atts != r.totalAtts {
			t.Errorf("%s: phases hold %d ops / %d attempts, run offered %d / sent %d", r.config, ops, atts, r.offered, r.totalAtts)
		}
		if r.outage.ops != r.phases[2].ops+r.phases[3].ops || r.outage.attempts != r.phases[2].attempts+r.phases[3].attempts {
			t.Errorf("%s: outage row is not the sum of the two outage phases", r.config)
		}
		if r.clients != 2 || 2*r.minOutageOps > r.phases[2].ops || r.minOutageOps < r.phases[2].ops/2-1 {
			t.Errorf("%s: clients %d, fewest outage-503 operations of one client %d of %d", r.config, r.clients, r.minOutageOps, r.phases[2].ops)
		}
	}

	// The last lines: one per configuration, in order, in the exact format.
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) < len(configNames) {
		t.Fatalf("only %d lines printed", len(lines))
	}
	re := regexp.MustCompile(`^storm config=(\S+) clients=2 amplification_outage=(\S+) success_brownout=(\S+) recovery_s=(\S+)$`)
	for i, line := range lines[len(lines)-len(configNames):] {
		m := re.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("line %q does not match %s", line, re)
			continue
		}
		if m[1] != configNames[i] {
			t.Errorf("line %d is for %s, want %s", i, m[1], configNames[i])
		}
		amp, err1 := strconv.ParseFloat(m[2], 64)
		succ, err2 := strconv.ParseFloat(m[3], 64)
		rec, err3 := strconv.ParseFloat(m[4], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Errorf("line %q: unparsable figures", line)
			continue
		}
		if amp < 0 || amp > 3 {
			t.Errorf("%s: amplification_outage %v outside [0,3]", m[1], amp)
		}
		if succ < 0 || succ > 1 {
			t.Errorf("%s: success_brownout %v outside [0,1]", m[1], succ)
		}
		if rec < 0 || (rec > o.recovery.Seconds() && !math.IsInf(rec, 1)) {
			t.Errorf("%s: recovery_s %v outside [0, phase] and not inf", m[1], rec)
		}
	}
}

// TestRecoveryTime pins the definition of recovery_s on synthetic records.
func TestRecoveryTime(t *testing.T) {
	const ms = time.Millisecond
	mk := func(failUntil, end int64) []opRecord {
		var recs []opRecord
		for at := int64(0); at < end; at += 5 {
			r := opRecord{sched: 1000*ms + time.Duration(at)*ms}
			if at >= failUntil {
				r.out = outOK
			} else {
				r.out = outStatus
			}
			recs = append(recs, r)
		}
		return recs
	}
	// All good: 0.
	if got := recoveryTime(mk(0, 1000), 1000*ms, 1000*ms, 250*ms, 10*ms, 0.99); got != 0 {
		t.Errorf("all ok: got %v, want 0", got)
	}
	// Failures until 300 ms (last failure at 295 ms): the window at u=290
	// holds it, the one at u=300 does not.
	if got := recoveryTime(mk(300, 1000), 1000*ms, 1000*ms, 250*ms, 10*ms, 0.99); math.Abs(got-0.30) > 1e-9 {
		t.Errorf("failures until 300ms: got %v, want 0.30", got)
	}
	// Failures to the end: inf.
	if got := recoveryTime(mk(1000, 1000), 1000*ms, 1000*ms, 250*ms, 10*ms, 0.99); !math.IsInf(got, 1) {
		t.Errorf("never recovered: got %v, want +Inf", got)
	}
}

// The comparison budgets follow their published descriptions.

// gRPC's own test of its throttle (retry_throttle_test.cc, "Basic"): max 4,
// ratio 1.6.
func TestGRPCThrottleMatchesGRPCsTest(t *testing.T) {
	g := &grpcThrottle{max: 4, ratio: 1.6, token: 4}
	var op opBudget
	steps := []struct {
		fail, want bool
	}{
		{true, true},   // 3 > 2
		{false, false}, // success: 4, capped
		{true, true},   // 3
		{true, false},  // 2: at the threshold, no retry
		{false, false}, // 3.6
		{true, true},   // 2.6
	}
	for i, s := range steps {
		if !s.fail {
			g.succeeded(&op, 1)
			continue
		}
		if got := g.failed(&op, false, true); got != s.want {
			t.Fatalf("step %d: retry allowed = %v, want %v (tokens %.1f)", i, got, s.want, g.token)
		}
	}
}

func TestGRPCThrottleDefaults(t *testing.T) {
	g := newGRPCThrottle()
	var op opBudget
	retries := 0
	for range 100 {
		if g.failed(&op, false, true) {
			retries++
		}
	}
	if retries != 4 || g.token != 0 {
		t.Fatalf("maxTokens 10: %d retries in an outage, tokens %v; want 4 and 0", retries, g.token)
	}
	// From 0, a failure is retried again once it leaves more than 5: 61
	// successes (6.1 tokens), not 60.
	for _, c := range []struct {
		successes int
		want      bool
	}{{60, false}, {61, true}} {
		g := newGRPCThrottle()
		g.token = 0
		for range c.successes {
			g.succeeded(&op, 1)
		}
		if got := g.failed(&op, false, true); got != c.want {
			t.Fatalf("after %d successes: retry allowed = %v, want %v", c.successes, got, c.want)
		}
	}
}

func TestAWSQuota(t *testing.T) {
	a := newAWSQuota()
	var op opBudget
	retries := 0
	for range 1000 {
		if a.failed(&op, false, true) {
			retries++
		}
	}
	if retries != 100 || a.tokens != 0 {
		t.Fatalf("500 tokens at 5: %d retries, %d tokens left; want 100 and 0", retries, a.tokens)
	}
	a.succeeded(&op, 1)
	if a.tokens != 1 {
		t.Fatalf("a success without retry gives back %d, want 1", a.tokens)
	}
	a.tokens = 20
	a.start(&op)
	if !a.failed(&op, true, true) || a.tokens != 10 {
		t.Fatalf("a timeout's retry: tokens %d, want 10 (cost 10)", a.tokens)
	}
	a.succeeded(&op, 2)
	if a.tokens != 20 {
		t.Fatalf("a retry that succeeded gives back its cost: tokens %d, want 20", a.tokens)
	}
	if a.failed(&op, false, false) || a.tokens != 20 {
		t.Fatal("a failure with no retry wanted must cost nothing")
	}
}

func TestWindowedBudgetFloor(t *testing.T) {
	w := newWindowedBudget()
	var op opBudget
	w.start(&op)
	retries := 0
	for range 100 {
		if w.failed(&op, false, true) {
			retries++
		}
	}
	if retries != 10 {
		t.Fatalf("the v0.1 floor: %d retries in a window, want 10", retries)
	}
	w.succeeded(&op, 2) // a refunded retry frees its place
	if !w.failed(&op, false, true) || w.failed(&op, false, true) {
		t.Fatal("want exactly one retry after one refund")
	}
}
