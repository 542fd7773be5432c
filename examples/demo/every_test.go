// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// -every starts each scenario set at its time (start + (N-1) x every),
// however long the set before took, and an interrupt ends the wait.
func TestEveryStartsEachSetAtItsTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		time.Sleep(2 * time.Second) // the first set took 2 s
		if err := waitUntil(t.Context(), start.Add(5*time.Second)); err != nil || time.Since(start) != 5*time.Second {
			t.Errorf("the second set started at %v (%v), want 5s", time.Since(start), err)
		}
		time.Sleep(7 * time.Second) // the second one overran its slot
		if err := waitUntil(t.Context(), start.Add(10*time.Second)); err != nil || time.Since(start) != 12*time.Second {
			t.Errorf("a set after one that overran started at %v (%v), want at once, 12s", time.Since(start), err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		if err := waitUntil(ctx, start.Add(time.Hour)); !errors.Is(err, context.Canceled) || time.Since(start) != 13*time.Second {
			t.Errorf("an interrupt in the wait: %v at %v, want context.Canceled at 13s", err, time.Since(start))
		}
	})
}

func TestTheDemoRefusesANegativeEvery(t *testing.T) {
	_, stderr, err := demoMain(t, t.TempDir(), "-every -1s")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr, "-every must not be negative") {
		t.Errorf("demo -every -1s: %v; stderr %q; want exit 2", err, stderr)
	}
}
