// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheDemoUnderASamplerOfTheEnvironment: docs/stack.md says the demo "reads
// the standard environment" and that the SDK's other variables act "as the
// SDK reads them". OTEL_TRACES_SAMPLER is one the SDK reads (the demo's
// TracerProvider takes no sampler of its own). With it set, the requests
// all succeed as usual, but the demo exits with "metrics and spans
// disagree" and prints no report: a false diagnosis (nothing disagrees;
// spans were sampled out) and a broken run.
func TestTheDemoUnderASamplerOfTheEnvironment(t *testing.T) {
	for _, c := range []struct{ sampler, arg string }{
		{"always_off", ""},
		{"parentbased_traceidratio", "0.25"},
	} {
		t.Run(c.sampler+" "+c.arg, func(t *testing.T) {
			cleanEnv(t, nil)
			t.Setenv("OTEL_TRACES_SAMPLER", c.sampler)
			t.Setenv("OTEL_TRACES_SAMPLER_ARG", c.arg)
			dir := t.TempDir()
			var out bytes.Buffer
			err := run(t.Context(), options{repeat: 1, traces: filepath.Join(dir, "t.json"), html: filepath.Join(dir, "r.html")}, &out)
			if err != nil {
				t.Errorf("demo failed under OTEL_TRACES_SAMPLER=%s: %v", c.sampler, err)
			}
			if !strings.HasPrefix(out.String(), reportHeader) {
				t.Errorf("no report printed; output:\n%.300s", out.String())
			}
		})
	}
}

// TestTheDemoPipedToHeadRemovesItsTemporaryFiles: doc.go says that without
// -traces and -html the demo writes its spans and report "to temporary
// files, which it removes at exit", and docs/stack.md "(none set): spans as
// stdouttrace JSON in a temporary file, removed at exit". Run as
// `go run ./examples/demo | head`, the demo dies of SIGPIPE at its next
// write once the reader has gone, and its temporary spans file stays in
// the temporary directory for good.
func TestTheDemoPipedToHeadRemovesItsTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(withoutOTEL(os.Environ()), "TMPDIR="+dir, envRunMain+"=")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// Like `head -1`: read the first line, then go away.
	line, _ := bufio.NewReader(r).ReadString('\n')
	r.Close()
	err = cmd.Wait()
	t.Logf("first line %q; demo ended: %v", line, err)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("left in the temporary directory after the demo ended: %s", e.Name())
	}
}

// TestTheDemoNamesItsConsoleMetrics: with OTEL_METRICS_EXPORTER=console (a value
// docs/stack.md lists), the demo's "Telemetry" section says the metrics
// are "stdouttrace JSON below"; what follows is the console metric
// exporter's stdoutmetric JSON (ResourceMetrics/ScopeMetrics), and no
// stdouttrace (span) JSON at all, since the spans went to a file. The demo
// misnames the form its metrics took.
func TestTheDemoNamesItsConsoleMetrics(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(withoutOTEL(os.Environ()), "OTEL_METRICS_EXPORTER=console", envRunMain+"=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	label := "  metrics: stdouttrace JSON below\n"
	i := strings.Index(out, label)
	if i < 0 {
		return // labelled otherwise
	}
	below := out[i:]
	t.Errorf("the demo says %q; below it: span JSON %v, metric JSON (ScopeMetrics) %v",
		strings.TrimSpace(label), strings.Contains(below, spanJSON), strings.Contains(below, `"ScopeMetrics"`))
}
