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
	stub := filepath.Join(s.home, ".cache", "otelretry", "bin", "stub")
	alt := filepath.Join(s.home, "opt", "prom")
	if err := os.MkdirAll(filepath.Dir(alt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(stub, alt); err != nil {
		t.Fatal(err)
	}
	a, b := stackCheckout(t), stackCheckout(t)
	sa := &fakeStack{home: s.home, env: withEnv(s.env, "OTELRETRY_PROMETHEUS_BIN", alt)}
	pidsA := sa.up(t, a)
	if err := os.RemoveAll(filepath.Dir(a)); err != nil {
		t.Fatal(err)
	}
	out, err := s.stack(t, b, "down")
	if err != nil {
		t.Fatalf("clone B down: %v\n%s", err, out)
	}
	if alive := aliveOnes(pidsA); len(alive) > 0 {
		_, statErr := os.Stat(s.run(a))
		t.Errorf("clone B's down with clone A gone (A's up ran with OTELRETRY_PROMETHEUS_BIN=%s): A's stack left running %v; A's run directory: %v", alt, alive, statErr)
	}
}
