package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemo runs the whole demo in-process on loopback and checks each
// scenario's outcome, the number of writes the server saw, and that the
// exported traces carry no secret.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	traces, summaryPath := filepath.Join(dir, "traces.json"), filepath.Join(dir, "summary.json")
	var out bytes.Buffer
	if err := run(t.Context(), options{repeat: 1, traces: traces, summaryJSON: summaryPath}, &out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	want := scenarios()
	if len(s.Operations) != len(want) {
		t.Fatalf("operations = %d, want %d", len(s.Operations), len(want))
	}
	wantWrites := map[string]int{"POST timeout to check_state": 1, "state check: applied": 1, "state check: not applied, resent": 2}
	for i, op := range s.Operations {
		if op.Scenario != want[i].name || op.Outcome != string(want[i].want) {
			t.Errorf("[%d] %s: outcome %s, want %s", i+1, op.Scenario, op.Outcome, want[i].want)
		}
		if w, ok := wantWrites[op.Scenario]; ok && op.WritesSeen != w {
			t.Errorf("[%d] %s: server saw %d writes, want %d", i+1, op.Scenario, op.WritesSeen, w)
		}
		for _, a := range op.Attempts {
			if (a.Status != 0) == (a.ErrorClass != "") {
				t.Errorf("[%d] attempt %d has status %d and error class %q", i+1, a.Attempt, a.Status, a.ErrorClass)
			}
		}
	}
	if s.Outcomes["return"] != 4 || s.Decisions["retry"] != 5 || s.RetryRatio != 5.0/15 || s.DeadlineRatio != 2.0/9 {
		t.Errorf("summary = outcomes %v decisions %v retry %.3f deadline %.3f", s.Outcomes, s.Decisions, s.RetryRatio, s.DeadlineRatio)
	}
	spans, err := os.ReadFile(traces)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) == 0 || !strings.Contains(string(spans), "api_key=REDACTED") {
		t.Fatal("stdout traces are empty or lack the sanitized URL")
	}
	for _, leak := range []string{"demo-secret-key"} {
		if strings.Contains(string(spans), leak) || strings.Contains(out.String(), leak) {
			t.Errorf("the secret %q reached the traces or the output", leak)
		}
	}
}
