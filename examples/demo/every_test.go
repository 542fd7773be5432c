// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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

// interruptAtSet makes the wait for set 2 an interrupt: Ctrl-C during the
// wait (returning its error) or as the set starts (returning nil).
func interruptAtSet(t *testing.T, cancel context.CancelFunc, inTheWait bool) *int {
	t.Helper()
	waits := 0
	waitForSet = func(ctx context.Context, _ time.Time) error {
		waits++
		cancel()
		if inTheWait {
			return ctx.Err()
		}
		return nil
	}
	t.Cleanup(func() { waitForSet = waitUntil })
	return &waits
}

// A demo that keeps running (-every) is stopped by an interrupt, between
// sets or as one starts: the sets it played are reported, and the run ends
// without an error (a reviewer's remark: it ended with "context canceled",
// no report, its last metrics unexported; then a reviewer's find: one
// during a set counted the set it cut as played). Without -every an
// interrupt is an error, as before.
func TestAnInterruptEndsADemoThatKeepsRunningWithItsReport(t *testing.T) {
	for _, tc := range []struct {
		name      string
		every     time.Duration
		inTheWait bool
		err       error
	}{
		{"between sets", time.Hour, true, nil},
		{"as a set starts", time.Hour, false, nil},
		{"without -every", 0, true, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t, nil)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			waits := interruptAtSet(t, cancel, tc.inTheWait)
			dir := t.TempDir()
			var out strings.Builder
			summaryPath := filepath.Join(dir, "summary.json")
			err := run(ctx, options{repeat: 3, every: tc.every, traces: filepath.Join(dir, "t.json"), html: filepath.Join(dir, "r.html"),
				summaryJSON: summaryPath}, &out)
			if !errors.Is(err, tc.err) || *waits != 1 {
				t.Fatalf("run: %v after %d waits, want %v after one", err, *waits, tc.err)
			}
			if tc.err != nil {
				return
			}
			for _, want := range []string{"=== otelretry demo: 10 operations", "interrupted: 1 of 3 scenario sets played", "retryinspect's HTML report"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the output lacks %q:\n%s", want, out.String())
				}
			}
			// The summary says so too (a reviewer's find: it did not).
			var s summary
			if b, err := os.ReadFile(summaryPath); err != nil || json.Unmarshal(b, &s) != nil || !s.Interrupted || s.Sets != 1 || s.Repeat != 3 || len(s.Operations) != 10 {
				t.Errorf("summary: interrupted %v, %d of %d sets, %d operations (%v); want true, 1 of 3, 10", s.Interrupted, s.Sets, s.Repeat, len(s.Operations), err)
			}
		})
	}
}

func TestTheDemoRefusesEveryWithoutRepeat(t *testing.T) {
	_, stderr, err := demoMain(t, t.TempDir(), "-every 5s")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr, "give -repeat 2 or more") {
		t.Errorf("demo -every 5s: %v; stderr %q; want exit 2", err, stderr)
	}
}
