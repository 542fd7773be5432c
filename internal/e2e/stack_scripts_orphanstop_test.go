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
// script is missing is stopped with the caller's script, and its run
// directory is kept while its programs run on (a reviewer's find: the
// failure was ignored and the directory removed, the orphan's programs
// running on, tracked by nothing). The test below is the reviewer's run,
// held.
func TestStackDownOrphanWithoutWatchdogCopyIsStopped(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=120")
	runA, pidsA := orphanDownFromAnotherClone(t, s, s, func(runA string) {
		if err := os.RemoveAll(filepath.Join(runA, "watchdog", "scripts")); err != nil {
			t.Fatal(err)
		}
	})
	alive := aliveOnes(pidsA)
	_, statErr := os.Stat(filepath.Join(runA, "prometheus.pid"))
	if len(alive) > 0 && statErr != nil {
		t.Errorf("clone B's down, clone A gone and its watchdog copy missing: A's stack left running %v, and its pid files removed (%v)", alive, statErr)
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
