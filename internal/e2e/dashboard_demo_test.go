// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// docs/stack.md: the dashboards count increases, and Prometheus sees no
// increase in a series' first sample, so a demo run that exits at once
// (its metrics exported once, as it ends) reads 0 there; one that keeps
// running (-repeat with -every, its metrics exported each second) reads
// its retry ratio (a reviewer's run: the newcomer's demo showed 0 and NaN
// on every panel).
func TestTheDashboardReadsADemoThatKeepsRunning(t *testing.T) {
	s := requireStack(t)
	t.Parallel()
	once, running := uniqueName("otelretry-once"), uniqueName("otelretry-every")
	// The SDK's default interval (60 s) outlasts the run: one export, at
	// its end.
	runDemoWith(t, s.otlp, once, nil)
	// Three sets two scrapes apart, exported each second: Prometheus sees
	// the series before the last sets' counts.
	every := max(2*s.scrapeInterval, time.Second)
	runDemoWith(t, s.otlp, running, []string{"OTEL_METRIC_EXPORT_INTERVAL=1000"}, "-repeat", "3", "-every", every.String())

	increase := func(job string) (float64, bool) {
		got, err := promQuery(s.prometheus, `sum(increase(retry_operations_total{job="`+job+`"}[5m]))`, time.Time{})
		if err != nil || len(got) != 1 {
			return 0, false
		}
		return got[0].Value, true
	}
	ratio := func(job string) string {
		return `sum(rate(retry_attempts_total{job="` + job + `",retry_decision="retry"}[5m])) / sum(rate(retry_attempts_total{job="` + job + `"}[5m]))`
	}
	// Both runs' series are in Prometheus within a few scrapes.
	deadline := time.Now().Add(20*s.scrapeInterval + 10*time.Second)
	for {
		onceUp, okOnce := increase(once)
		runningUp, okRunning := increase(running)
		if okOnce && okRunning && runningUp > 0 {
			if onceUp != 0 {
				t.Errorf("the run that exited at once: increase %v, want 0 (its counts are in its series' first sample)", onceUp)
			}
			got, err := promQuery(s.prometheus, ratio(running), time.Time{})
			if err != nil || len(got) != 1 || math.IsNaN(got[0].Value) || got[0].Value <= 0 || got[0].Value >= 1 {
				t.Errorf("the running demo's retry ratio: %v (%v), want a share", got, err)
			}
			if nan, err := promQuery(s.prometheus, ratio(once), time.Time{}); err != nil || len(nan) != 1 || !math.IsNaN(nan[0].Value) {
				t.Errorf("the retry ratio of the run that exited at once: %v (%v), want NaN", nan, err)
			}
			t.Logf("increase: %v for the run that exited at once, %v for the one that kept running; its retry ratio %v", onceUp, runningUp, got)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus: increase %v (%v) for %s, %v (%v) for %s; want both series, the second rising", onceUp, okOnce, once, runningUp, okRunning, running)
		}
		time.Sleep(s.scrapeInterval)
	}
}

// runDemoWith runs the demo with args as service, its metrics (only)
// exported over OTLP to endpoint, with the OTEL_* variables env.
func runDemoWith(t *testing.T, endpoint, service string, env []string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, demoBinary(t), args...)
	cmd.Dir = repoRoot(t)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "OTEL_SERVICE_NAME="+service, "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint,
		"OTEL_TRACES_EXPORTER=none", "OTEL_LOGS_EXPORTER=none"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
}
