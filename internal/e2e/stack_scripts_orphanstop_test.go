// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// The header: "down  stop whatever `up` started, and the stacks of
// checkouts gone since theirs". An orphan whose watchdog copy of the
// script is missing is stopped with the caller's script, and a run
// directory is removed only once its stop succeeded (a reviewer's find,
// as is the test below: the failure was ignored and the directory removed,
// the orphan's programs running on, tracked by nothing).
func TestStackDownOrphanWithoutWatchdogCopyIsStopped(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=120")
	a, b := stackCheckout(t), stackCheckout(t)
	pidsA := s.up(t, a)
	runA := s.run(a)
	if err := os.RemoveAll(filepath.Join(runA, "watchdog", "scripts")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(a)); err != nil {
		t.Fatal(err)
	}
	out, err := s.stack(t, b, "down")
	if err != nil {
		t.Fatalf("clone B down: %v\n%s", err, out)
	}
	alive := aliveOnes(pidsA)
	_, statErr := os.Stat(filepath.Join(runA, "prometheus.pid"))
	if len(alive) > 0 && statErr != nil {
		t.Errorf("clone B's down, clone A gone and its watchdog copy missing: A's stack left running %v, and its pid files removed (%v)\n%s", alive, statErr, out)
	}
}

// An orphan whose `up` ran with another OTELRETRY_PROMETHEUS_BIN, stopped
// by a `down` without it: its Prometheus is known by its run's config
// file, whichever binary runs it (a record of the binary, the first fix,
// was missing from run directories an older script made).
func TestStackDownOrphanFromAnOlderCacheIsStopped(t *testing.T) {
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
	runA := s.run(a)
	if err := os.RemoveAll(filepath.Dir(a)); err != nil {
		t.Fatal(err)
	}
	out, err := s.stack(t, b, "down")
	if err != nil {
		t.Fatalf("clone B down: %v\n%s", err, out)
	}
	alive := aliveOnes(pidsA)
	_, statErr := os.Stat(filepath.Join(runA, "prometheus.pid"))
	if len(alive) > 0 && statErr != nil {
		t.Errorf("clone B's down, clone A gone (its Prometheus another binary): A's stack left running %v, and its pid files removed (%v)", alive, statErr)
	}
}

// Two clones' downs at once, with one orphan in the cache: both exit 0 and
// the orphan is stopped.
func TestStackTwoDownsAtOnceWithAnOrphan(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=120")
	a, b, c := stackCheckout(t), stackCheckout(t), stackCheckout(t)
	pidsA := s.up(t, a)
	if err := os.RemoveAll(filepath.Dir(a)); err != nil {
		t.Fatal(err)
	}
	type res struct {
		out string
		err error
	}
	ch := make(chan res, 2)
	for _, co := range []string{b, c} {
		go func() {
			out, err := s.stack(t, co, "down")
			ch <- res{out, err}
		}()
	}
	for range 2 {
		r := <-ch
		if r.err != nil {
			t.Errorf("concurrent down: %v\n%s", r.err, r.out)
		}
	}
	if alive := aliveOnes(pidsA); len(alive) > 0 {
		t.Errorf("two concurrent downs: orphan left running %v", alive)
	}
	if processAlive(pidsA["watchdog"]) {
		t.Errorf("two concurrent downs: orphan's watchdog left running")
	}
}
