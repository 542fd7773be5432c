// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// demoMain runs the demo's main in a process of its own (TestMain) with
// args, TMPDIR dir and env added to an environment without OTEL_*.
func demoMain(t *testing.T, dir, args string, env ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(withoutOTEL(os.Environ()), append(env, "TMPDIR="+dir, envRunMain+"="+args)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// metricsLine is the Telemetry section's metrics line of a demo's output.
func metricsLine(t *testing.T, env ...string) string {
	t.Helper()
	stdout, stderr, err := demoMain(t, t.TempDir(), "", env...)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr)
	}
	for l := range strings.Lines(stdout) {
		if strings.HasPrefix(l, "  metrics:") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// The demo takes flags only: a stray word (summary.json, meant for
// -summary-json) exits 2 with a message, as -bogus does, instead of running
// the whole demo and writing nothing it asked for (it exited 0 silently: a
// reviewer's find).
func TestTheDemoRefusesAPositionalArgument(t *testing.T) {
	_, stderr, err := demoMain(t, t.TempDir(), "summary.json")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr, `takes flags only, not "summary.json"`) {
		t.Errorf("demo summary.json: %v; stderr %q; want exit 2 naming the word", err, stderr)
	}
}

// The spans' temporary file is removed at exit (doc.go) when a telemetry
// setup step after it fails too (a Prometheus port already taken): it was
// left in TMPDIR (a reviewer's find).
func TestTheDemoRemovesItsSpansFileWhenTelemetrySetupFails(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, port, _ := net.SplitHostPort(busy.Addr().String())
	dir := t.TempDir()
	_, stderr, err := demoMain(t, dir, "",
		"OTEL_METRICS_EXPORTER=prometheus", "OTEL_EXPORTER_PROMETHEUS_HOST=127.0.0.1", "OTEL_EXPORTER_PROMETHEUS_PORT="+port)
	if err == nil || !strings.Contains(stderr, "metric exporter") {
		t.Fatalf("demo with its Prometheus port taken: %v; stderr %q; want it to fail naming the metric exporter", err, stderr)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("left in the temporary directory after the demo ended: %s", e.Name())
	}
}

// README.md: the demo says where its telemetry went. Under
// OTEL_METRICS_EXPORTER=prometheus its Telemetry section named no address
// (a reviewer's find); it names the scrape URL now.
func TestTheDemoSaysWhereItsPrometheusMetricsWent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	line := metricsLine(t, "OTEL_METRICS_EXPORTER=prometheus", "OTEL_EXPORTER_PROMETHEUS_HOST=127.0.0.1", "OTEL_EXPORTER_PROMETHEUS_PORT="+port)
	if !strings.Contains(line, port) {
		t.Errorf("Telemetry section says %q; the metrics were served on 127.0.0.1:%s", line, port)
	}
}

// With OTEL_EXPORTER_PROMETHEUS_PORT=0 autoexport's server listens on a
// port the kernel picks, which autoexport does not tell: the Telemetry
// section says so instead of naming port 0, where nothing is served (a
// reviewer's find in the change that printed the scrape URL).
func TestTheDemoNamesNoPortZeroForItsPrometheusMetrics(t *testing.T) {
	line := metricsLine(t, "OTEL_METRICS_EXPORTER=prometheus", "OTEL_EXPORTER_PROMETHEUS_HOST=127.0.0.1", "OTEL_EXPORTER_PROMETHEUS_PORT=0")
	if strings.Contains(line, ":0/") || !strings.Contains(line, "a port the system chose") {
		t.Errorf("Telemetry section says %q: port 0 is not where the metrics were served", line)
	}
}

// A telemetry setup step that fails after the -traces file was opened (an
// unknown OTEL_METRICS_EXPORTER or OTEL_LOGS_EXPORTER) leaves a file of
// the user's as it was: it was emptied before the failure (a reviewer's
// find). One the demo made is removed.
func TestASetupFailureKeepsTheUsersTracesFile(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"OTEL_METRICS_EXPORTER=bogus", "metric exporter"},
		{"OTEL_LOGS_EXPORTER=bogus", "log exporter"},
	} {
		t.Run(tc.env, func(t *testing.T) {
			dir := t.TempDir()
			kept, made := filepath.Join(dir, "spans.json"), filepath.Join(dir, "new.json")
			const old = `{"Name":"a span from yesterday's run"}` + "\n"
			if err := os.WriteFile(kept, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{kept, made} {
				_, stderr, err := demoMain(t, dir, "-traces "+path, tc.env)
				var exit *exec.ExitError
				if !errors.As(err, &exit) || !strings.Contains(stderr, tc.want) {
					t.Fatalf("demo -traces %s with %s: %v; stderr %q; want a setup failure", path, tc.env, err, stderr)
				}
			}
			if got, err := os.ReadFile(kept); err != nil || string(got) != old {
				t.Errorf("after a setup failure, the user's -traces file holds %q (%v); want %q as it was", got, err, old)
			}
			if _, err := os.Stat(made); err == nil {
				t.Errorf("the -traces file the failed demo made is left: %s", made)
			}
		})
	}
}

// A -traces path that is a link to a file not there yet: a setup failure
// removes the file the demo made through it and keeps the link (the link
// was removed and the file left: a reviewer's find).
func TestASetupFailureKeepsTheUsersLinkAndRemovesWhatItMade(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target.json"), filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := demoMain(t, dir, "-traces "+link, "OTEL_METRICS_EXPORTER=bogus")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(stderr, "metric exporter") {
		t.Fatalf("demo: %v; stderr %q; want a setup failure", err, stderr)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("the user's link %s is gone after a setup failure: %v", link, err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("the file the failed demo made through the link is left: %s", target)
	}
}

// doc.go's exit statuses: 0 when the demo ran, 1 when it failed (here a
// telemetry setup step), 2 on a bad flag.
func TestTheDemosExitStatuses(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		env        []string
		want       int
		says       string // in stderr: what failed
	}{
		{"ran", "", []string{"OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none", "OTEL_LOGS_EXPORTER=none"}, 0, ""},
		{"failed", "", []string{"OTEL_METRICS_EXPORTER=bogus"}, 1, "OTEL_METRICS_EXPORTER"},
		// The flag named, not an exporter variable nobody set (a
		// reviewer's remark).
		{"traces file", "-traces " + filepath.Join(t.TempDir(), "missing", "x.json"), nil, 1, "traces file (-traces)"},
		{"bad flag", "-repeat 0", nil, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := demoMain(t, t.TempDir(), tc.args, tc.env...)
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.want || !strings.Contains(stderr, tc.says) {
				t.Errorf("exit %d, want %d; stderr %q, want it to say %q", code, tc.want, stderr, tc.says)
			}
		})
	}
}
