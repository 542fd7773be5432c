// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoTracesHaveNoFindings runs the demo, reads the stdouttrace JSON it
// exports, and expects no findings, the same ratios the demo computed
// from its metrics, and the demo's attempt tables to be this command's.
func TestDemoTracesHaveNoFindings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo")
	}
	dir := t.TempDir()
	traces, summaryPath := filepath.Join(dir, "traces.json"), filepath.Join(dir, "summary.json")
	// The demo is a module of its own: run it there. "go" is the test's own
	// toolchain: go test puts its GOROOT/bin first on the PATH.
	cmd := exec.Command("go", "run", "-C", "../../examples/demo", ".", "-traces", traces, "-summary-json", summaryPath,
		"-html", filepath.Join(dir, "report.html"))
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=")
	demoOut, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, demoOut)
	}

	var stdout, stderr bytes.Buffer
	if code := run([]string{traces}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, want 0 (clean)\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "findings: none") {
		t.Fatalf("output lacks 'findings: none':\n%s", stdout.String())
	}

	// The demo prints the attempt tables as this command does: every row
	// of every table, "-" where a value is absent. The tables come before
	// the summary.
	tables, _, _ := strings.Cut(stdout.String(), "\nsummary: ")
	for line := range strings.Lines(tables) {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(line, "  ") && (f[0] == "#" || f[0] == "-" || f[0] >= "1" && f[0] <= "9") &&
			!bytes.Contains(demoOut, []byte("    "+strings.TrimPrefix(line, "  "))) {
			t.Errorf("the demo's output lacks the table line %q", line)
		}
	}
	if bytes.Contains(demoOut, []byte("null")) {
		t.Errorf("the demo prints null:\n%s", demoOut)
	}

	raw, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var demo struct {
		RetryRatio    float64 `json:"retry_ratio"`
		DeadlineRatio float64 `json:"deadline_ratio"`
		Operations    []any   `json:"operations"`
	}
	if err := json.Unmarshal(raw, &demo); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("retry ratio     %.3f", demo.RetryRatio),
		fmt.Sprintf("deadline ratio  %.3f", demo.DeadlineRatio),
		fmt.Sprintf("summary: %d operations", len(demo.Operations)),
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q (the demo's own figure):\n%s", want, stdout.String())
		}
	}
}
