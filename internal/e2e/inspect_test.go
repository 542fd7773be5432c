// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// inspectReport is the part of `retryinspect --json` this test reads.
type inspectReport struct {
	Summary struct {
		Operations int `json:"operations"`
		Attempts   int `json:"attempts"`
	} `json:"summary"`
	Findings []json.RawMessage `json:"findings"`
}

// checkRetryinspect reads the run's traces back from the real Jaeger API
// with cmd/retryinspect: the demo's traffic must raise no finding, and the
// command must count the operations and attempts the demo reported.
func checkRetryinspect(t *testing.T, s stack, run demoRun) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	limit := strconv.Itoa(2*len(run.summary.Operations) + 100)
	// The HTML report goes with CI's artifacts (artifacts/ is untracked).
	artifacts := filepath.Join(repoRoot(t), "artifacts")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(artifacts, "retryinspect-e2e.html")
	// retryinspect is a module of its own: run it there.
	cmd := exec.CommandContext(ctx, "go", "run", "-C", filepath.Join(repoRoot(t), "cmd", "retryinspect"), ".",
		"--jaeger", s.jaeger, "--service", run.service, "--lookback", "1h", "--limit", limit, "--json", "--html", page)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		t.Errorf("retryinspect found problems in the demo's traces:\n%s", tail(stdout.String()))
	default:
		t.Fatalf("retryinspect --jaeger: %v\n%s", err, tail(stderr.String()))
	}
	var rep inspectReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("retryinspect --json: %v\n%s", err, tail(stdout.String()))
	}
	if rep.Summary.Operations != len(run.summary.Operations) || rep.Summary.Attempts != run.summary.attemptCount() {
		t.Errorf("retryinspect read %d operations and %d attempts from Jaeger, the demo made %d and %d",
			rep.Summary.Operations, rep.Summary.Attempts, len(run.summary.Operations), run.summary.attemptCount())
	}
	if len(rep.Findings) != 0 {
		t.Errorf("retryinspect: %d findings, want none", len(rep.Findings))
	}
	if b, err := os.ReadFile(page); err != nil || !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) {
		t.Errorf("retryinspect --html wrote no page to %s: %v", page, err)
	}
	t.Logf("retryinspect over Jaeger: %d operations, %d attempts, no findings; HTML report in %s",
		rep.Summary.Operations, rep.Summary.Attempts, page)
}
