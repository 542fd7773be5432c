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
	"runtime"
	"strings"
	"testing"
)

// TestDemoTracesHaveNoFindings runs the demo, reads the stdouttrace JSON it
// exports, and expects no findings and the same ratios the demo computed
// from its metrics.
func TestDemoTracesHaveNoFindings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo")
	}
	dir := t.TempDir()
	traces, summaryPath := filepath.Join(dir, "traces.json"), filepath.Join(dir, "summary.json")
	gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
	// The demo is a module of its own: run it there.
	cmd := exec.Command(gotool, "run", "-C", "../../examples/demo", ".", "-traces", traces, "-summary-json", summaryPath,
		"-html", filepath.Join(dir, "report.html"))
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}

	var stdout, stderr bytes.Buffer
	if code := run([]string{traces}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, want 0 (clean)\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "findings: none") {
		t.Fatalf("output lacks 'findings: none':\n%s", stdout.String())
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
