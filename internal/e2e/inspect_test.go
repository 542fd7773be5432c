// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// inspectReport is the part of `retryinspect --json` this test reads.
type inspectReport struct {
	Input string `json:"input"` // spans or logs
	Spans struct {
		Total      int `json:"total"`
		Duplicates int `json:"duplicates"`
		Operation  int `json:"operation"`
		Attempt    int `json:"attempt"`
	} `json:"spans"`
	Summary struct {
		Operations int `json:"operations"`
		Attempts   int `json:"attempts"`
	} `json:"summary"`
	Operations []struct {
		ID       string `json:"operation_id"`
		TraceID  string `json:"trace_id"`
		SpanID   string `json:"span_id"`
		Outcome  string `json:"outcome"`
		Attempts []struct {
			Attempt    int    `json:"attempt"`
			RequestID  string `json:"request_id"`
			StatusCode int    `json:"status_code"`
			ErrorClass string `json:"error_class"`
			Decision   string `json:"decision"`
		} `json:"attempts"`
	} `json:"operations"`
	Notes []struct {
		Code        string `json:"code"`
		OperationID string `json:"operation_id"`
	} `json:"notes"`
	Findings []json.RawMessage `json:"findings"`
}

// runRetryinspect runs cmd/retryinspect with args and --json, and returns
// its report. Exit status 1 (findings) is an error of the test, any other
// failure ends it.
func runRetryinspect(t *testing.T, what string, args ...string) inspectReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// retryinspect is a module of its own: run it there.
	cmd := exec.CommandContext(ctx, "go", append([]string{"run", "-C", filepath.Join(repoRoot(t), "cmd", "retryinspect"), ".", "--json"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		t.Errorf("retryinspect found problems in the demo's %s:\n%s", what, tail(stdout.String()))
	default:
		t.Fatalf("retryinspect %s: %v\n%s", strings.Join(args, " "), err, tail(stderr.String()))
	}
	var rep inspectReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("retryinspect --json: %v\n%s", err, tail(stdout.String()))
	}
	return rep
}

// artifactPage is where an HTML report goes with CI's artifacts
// (artifacts/ is untracked).
func artifactPage(t *testing.T, name string) string {
	t.Helper()
	artifacts := filepath.Join(repoRoot(t), "artifacts")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(artifacts, name)
}

func checkPage(t *testing.T, page string) {
	t.Helper()
	if b, err := os.ReadFile(page); err != nil || !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) {
		t.Errorf("retryinspect --html wrote no page to %s: %v", page, err)
	}
}

// checkRetryinspect reads the run's traces back from the real Jaeger API
// with cmd/retryinspect: the demo's traffic must raise no finding, and the
// command must count the operations and attempts the demo reported.
func checkRetryinspect(t *testing.T, s stack, run demoRun) {
	t.Helper()
	limit := strconv.Itoa(2*len(run.summary.Operations) + 100)
	page := artifactPage(t, "retryinspect-e2e.html")
	rep := runRetryinspect(t, "traces",
		"--jaeger", s.jaeger, "--service", run.service, "--lookback", "1h", "--limit", limit, "--html", page)
	if rep.Summary.Operations != len(run.summary.Operations) || rep.Summary.Attempts != run.summary.attemptCount() {
		t.Errorf("retryinspect read %d operations and %d attempts from Jaeger, the demo made %d and %d",
			rep.Summary.Operations, rep.Summary.Attempts, len(run.summary.Operations), run.summary.attemptCount())
	}
	if len(rep.Findings) != 0 {
		t.Errorf("retryinspect: %d findings, want none", len(rep.Findings))
	}
	checkPage(t, page)
	t.Logf("retryinspect over Jaeger: %d operations, %d attempts, no findings; HTML report in %s",
		rep.Summary.Operations, rep.Summary.Attempts, page)

	// The same traces as the Jaeger UI reads them (its /api/traces, whose
	// JSON the UI shows and saves), given as a file.
	q := url.Values{"service": {run.service}, "lookback": {"1h"}, "limit": {limit}}
	body, err := httpGet(s.jaeger + "/api/traces?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "jaeger-ui.json")
	if err := os.WriteFile(saved, body, 0o600); err != nil {
		t.Fatal(err)
	}
	ui := runRetryinspect(t, "traces saved from Jaeger's /api/traces", saved)
	if ui.Summary.Operations != rep.Summary.Operations || ui.Summary.Attempts != rep.Summary.Attempts || len(ui.Findings) != 0 {
		t.Errorf("retryinspect read %d operations, %d attempts and %d findings from /api/traces' JSON, %d, %d and %d from /api/v3",
			ui.Summary.Operations, ui.Summary.Attempts, len(ui.Findings), rep.Summary.Operations, rep.Summary.Attempts, len(rep.Findings))
	}
}

// checkRetryinspectLogs reads the run's log events back from the real
// VictoriaLogs with retryinspect --victorialogs, once counts (the LogsQL
// count of the run's records by event name, see checkDemoLogs) shows them
// all: it must read every record and operation the count finds, each
// operation in the trace and span its record names (records, by operation
// id), with the demo's outcome and attempts (number, request id, status or
// error class, decision), and, as from Jaeger, no finding. Its only notes
// may be the ones log records cannot settle: needs-spans, for an operation
// that ran a state check (its span is not a log event).
func checkRetryinspectLogs(t *testing.T, s stack, run demoRun, counts map[string]int, records map[string]map[string]string) {
	t.Helper()
	ops, attempts := counts[attrs.LogEventOperation], counts[attrs.LogEventAttempt]
	page := artifactPage(t, "retryinspect-e2e-victorialogs.html")
	rep := runRetryinspect(t, "log events",
		"--victorialogs", s.victorialogs, "--service", run.service, "--lookback", "1h",
		"--limit", strconv.Itoa(2*(ops+attempts)+100), "--html", page)
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if rep.Input != "logs" || rep.Spans.Total != ops+attempts || rep.Spans.Operation != ops || rep.Spans.Attempt != attempts || rep.Spans.Duplicates != 0 {
		fail("read %+v from %s, LogsQL counts %d %s and %d %s records", rep.Spans, rep.Input,
			ops, attrs.LogEventOperation, attempts, attrs.LogEventAttempt)
	}
	if rep.Summary.Operations != ops || rep.Summary.Attempts != attempts {
		fail("read %d operations and %d attempts, LogsQL counts %d and %d", rep.Summary.Operations, rep.Summary.Attempts, ops, attempts)
	}
	byID := map[string]int{}
	for i, op := range rep.Operations {
		if _, dup := byID[op.ID]; dup {
			fail("operation %s read twice", op.ID)
		}
		byID[op.ID] = i
	}
	stateChecked := map[string]bool{}
	retried, retriedAttempts := 0, 0
	for _, want := range run.summary.Operations {
		if want.StateCheck != "" {
			stateChecked[want.OperationID] = true
		}
		i, ok := byID[want.OperationID]
		if !ok {
			fail("%s (%s): not read", want.OperationID, want.Scenario)
			continue
		}
		got := rep.Operations[i]
		if rec := records[want.OperationID]; got.TraceID != rec["trace_id"] || got.SpanID != rec["span_id"] {
			fail("%s: read in trace %q span %q, its record says %q and %q", want.OperationID, got.TraceID, got.SpanID, rec["trace_id"], rec["span_id"])
		}
		if got.Outcome != want.Outcome {
			fail("%s: outcome %q, the demo says %q", want.OperationID, got.Outcome, want.Outcome)
		}
		if len(got.Attempts) != len(want.Attempts) {
			fail("%s (%s): %d attempts, the demo made %d", want.OperationID, want.Scenario, len(got.Attempts), len(want.Attempts))
			continue
		}
		if len(want.Attempts) > 1 {
			retried++
			retriedAttempts += len(want.Attempts)
		}
		for j, w := range want.Attempts {
			g := got.Attempts[j]
			if g.Attempt != w.Attempt || g.RequestID != w.RequestID || g.StatusCode != w.Status || g.ErrorClass != w.ErrorClass || g.Decision != w.Decision {
				fail("%s attempt %d: read %+v, the demo says %+v", want.OperationID, j+1, g, w)
			}
		}
	}
	if len(rep.Findings) != 0 {
		fail("%d findings, want none (as from Jaeger):\n%s", len(rep.Findings), rep.Findings)
	}
	for _, n := range rep.Notes {
		if n.Code != "needs-spans" || !stateChecked[n.OperationID] {
			fail("note %s on %s: only needs-spans, on an operation with a state check, is expected from log records", n.Code, n.OperationID)
		}
	}
	checkPage(t, page)
	if len(problems) > 0 {
		t.Fatalf("retryinspect --victorialogs: %d problems:\n  %s", len(problems), joinMax(problems, 40))
	}
	t.Logf("retryinspect over VictoriaLogs: %d records, %d operations and %d attempts, as LogsQL counts; "+
		"every operation's outcome and attempts as the demo reported (%d retried, %d attempts); no findings; notes: %d needs-spans; HTML report in %s",
		rep.Spans.Total, rep.Summary.Operations, rep.Summary.Attempts, retried, retriedAttempts, len(rep.Notes), page)
}
