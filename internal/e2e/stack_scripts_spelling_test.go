// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// OTELRETRY_RUN_DIR is documented as any directory; `down` must stop the
// Prometheus `up` started there: its "--config.file=$RUN/..." is matched
// as a fixed string (a reviewer's find, as is the test below: as a regular
// expression, a run directory with "[" in its name did not match its own
// Prometheus's command line).
func TestStackDownStopsPrometheusOfARunDirWithBrackets(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run[1]")
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=120", "OTELRETRY_RUN_DIR="+run)
	a := stackCheckout(t)
	if out, err := s.stack(t, a, "up"); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	pids := pidsIn(t, run)
	if out, err := s.stack(t, a, "down"); err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
	if alive := aliveOnes(pids); len(alive) > 0 {
		t.Errorf("down with OTELRETRY_RUN_DIR=%s: left running %v", run, alive)
	}
}

// An orphan whose `up` ran with OTELRETRY_CACHE spelled with a trailing
// slash (the same directory as the default): the script spells each path
// one way now, and stop_orphans keeps an orphan's run directory while any
// of its programs runs on (its copy's `down`, which always exits 0, was
// taken for a stop that succeeded, the programs running on untracked).
func TestStackDownStopsAnOrphanWhoseCacheWasSpelledDifferently(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=120")
	upA := &fakeStack{home: s.home, env: withEnv(s.env, "OTELRETRY_CACHE", filepath.Join(s.home, ".cache", "otelretry")+"/")}
	runA, pidsA := orphanDownFromAnotherClone(t, s, upA, nil)
	if alive := aliveOnes(pidsA); len(alive) > 0 {
		_, statErr := os.Stat(runA)
		t.Errorf("clone B's down, clone A gone (its up ran with OTELRETRY_CACHE ending in /): A's stack left running %v; A's run directory: %v", alive, statErr)
	}
}
