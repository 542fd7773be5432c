// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withEnv: env with key set to value (replacing any earlier setting).
func withEnv(env []string, key, value string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// The header: "down  stop whatever `up` started, and the stacks of
// checkouts gone since theirs". Checkout A's `up` ran with
// OTELRETRY_PROMETHEUS_BIN set (a documented override); A was then removed.
// Checkout B's `down`, run without that override, stops A's orphaned
// stack through A's copy of the script, which knows A's Prometheus by its
// run's config file, whichever binary runs it (a reviewer's find: the copy
// was handed B's binary, did not recognise A's Prometheus, dropped its pid
// file, and A's Prometheus ran on, untracked, holding its port).
func TestStackDownStopsAnOrphanStartedWithAnotherPrometheusBin(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=120")
	alt := altPrometheusBin(t, s)
	runA, pidsA := orphanDownFromAnotherClone(t, s, &fakeStack{home: s.home, env: withEnv(s.env, "OTELRETRY_PROMETHEUS_BIN", alt)}, nil)
	if alive := aliveOnes(pidsA); len(alive) > 0 {
		_, statErr := os.Stat(runA)
		t.Errorf("clone B's down with clone A gone (A's up ran with OTELRETRY_PROMETHEUS_BIN=%s): A's stack left running %v; A's run directory: %v", alt, alive, statErr)
	}
}

// altPrometheusBin is another path to the fake stack's stub, for an `up`
// run with OTELRETRY_PROMETHEUS_BIN.
func altPrometheusBin(t *testing.T, s *fakeStack) string {
	t.Helper()
	alt := filepath.Join(s.home, "opt", "prom")
	if err := os.MkdirAll(filepath.Dir(alt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(s.home, ".cache", "otelretry", "bin", "stub"), alt); err != nil {
		t.Fatal(err)
	}
	return alt
}

// orphanDownFromAnotherClone brings up checkout A through upA, calls
// prepare with A's run directory (when not nil), removes A, and runs
// checkout B's `down` through s; it returns A's run directory and pids.
func orphanDownFromAnotherClone(t *testing.T, s, upA *fakeStack, prepare func(runA string)) (string, map[string]int) {
	t.Helper()
	a, b := stackCheckout(t), stackCheckout(t)
	pidsA := upA.up(t, a)
	runA := s.run(a)
	if prepare != nil {
		prepare(runA)
	}
	if err := os.RemoveAll(filepath.Dir(a)); err != nil {
		t.Fatal(err)
	}
	if out, err := s.stack(t, b, "down"); err != nil {
		t.Fatalf("clone B down: %v\n%s", err, out)
	}
	return runA, pidsA
}
