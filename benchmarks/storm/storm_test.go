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
