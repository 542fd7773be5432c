// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// A server that never answers in time (every attempt is cut before its
// 10 ms of service ends) has no goodput before, during or after the
// trigger: nothing "comes back once the trigger is gone". The benchmark
// must not report it as recovered, let alone at once (0.0 s, the best
// figure in the table, with the plot's green "recovery" line at the
// trigger's end).
func TestAServerThatNeverServesIsNotReportedRecovered(t *testing.T) {
	o := defaultOptions()
	o.smoke()
	o.attemptTimeout = 5 * time.Millisecond // shorter than the service time: no attempt ever succeeds
	o.configs = []string{"no-retry"}
	var out bytes.Buffer
	reports, err := run(o, &out)
	if err != nil {
		t.Fatal(err)
	}
	r := reports[0]
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "metastable config=") {
			t.Log(l)
		}
	}
	if r.before != 0 || r.during != 0 || r.after != 0 || r.end != 0 {
		t.Fatalf("setup: goodput %v/%v/%v/%v, want 0 throughout", r.before, r.during, r.after, r.end)
	}
	if !math.IsInf(r.recovery, 1) {
		t.Errorf("goodput 0 before, during and after the trigger, yet recovery %s: a server that never served is reported recovered", r.recoveryText())
	}
}

// The same on the analysis alone: every operation failed.
func TestAnalyzeAllFailedIsNotRecovered(t *testing.T) {
	o := defaultOptions()
	o.before, o.trigger, o.after, o.tail = 2*time.Second, time.Second, 3*time.Second, time.Second
	o.bucket = 500 * time.Millisecond
	if err := o.normalize(); err != nil {
		t.Fatal(err)
	}
	var r result
	for at := time.Duration(0); at < o.total(); at += 10 * time.Millisecond {
		r.recs = append(r.recs, opRecord{sched: at, ok: false})
		r.attempts = append(r.attempts, 1)
	}
	rep := analyze(o, r)
	if !math.IsInf(rep.recovery, 1) {
		t.Errorf("every operation failed, yet recovery %s (line: %s)", rep.recoveryText(), rep.line())
	}
}
