// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/silentport"
)

// Environment variables read by the tests (see doc.go).
const (
	envE2E            = "OTELRETRY_E2E"
	envOTLP           = "OTELRETRY_OTLP_ENDPOINT"
	envOTLPGRPC       = "OTELRETRY_OTLP_GRPC_ENDPOINT"
	envAgent          = "OTELRETRY_AGENT_OTLP_ENDPOINT"
	envSamplers       = "OTELRETRY_SAMPLERS"
	envPlainPercent   = "OTELRETRY_PLAIN_SUCCESS_PERCENT"
	envDecisionWait   = "OTELRETRY_DECISION_WAIT"
	envScrapeInterval = "OTELRETRY_SCRAPE_INTERVAL"
	envJaeger         = "OTELRETRY_JAEGER_URL"
	envPrometheus     = "OTELRETRY_PROMETHEUS_URL"
	envVictoriaLogs   = "OTELRETRY_VICTORIALOGS_URL"
	envDemoBin        = "OTELRETRY_DEMO_BIN"
	envRepeat         = "OTELRETRY_E2E_REPEAT"
)

// stack holds the endpoints and settings written by scripts/stack.sh up.
type stack struct {
	otlp, otlpGRPC, agent, jaeger, prometheus string
	// victorialogs is the log store's base URL (LogsQL at /select/logsql/query).
	victorialogs string
	// samplers are the names of the sampling Collectors; plainPercent the
	// share of plain successes they keep; decisionWait their decision_wait.
	samplers       []string
	plainPercent   float64
	decisionWait   time.Duration
	scrapeInterval time.Duration
}

// requireE2E skips unless OTELRETRY_E2E=1.
func requireE2E(t *testing.T) {
	t.Helper()
	if os.Getenv(envE2E) != "1" {
		t.Skipf("end-to-end test: set %s=1 (scripts/e2e.sh starts the stack and does so)", envE2E)
	}
}

// requireStack returns the stack's endpoints; with OTELRETRY_E2E=1 a missing
// endpoint is a failure, not a skip.
func requireStack(t *testing.T) stack {
	t.Helper()
	requireE2E(t)
	s := stack{
		otlp:         strings.TrimRight(os.Getenv(envOTLP), "/"),
		otlpGRPC:     strings.TrimRight(os.Getenv(envOTLPGRPC), "/"),
		agent:        strings.TrimRight(os.Getenv(envAgent), "/"),
		jaeger:       strings.TrimRight(os.Getenv(envJaeger), "/"),
		prometheus:   strings.TrimRight(os.Getenv(envPrometheus), "/"),
		victorialogs: strings.TrimRight(os.Getenv(envVictoriaLogs), "/"),
		samplers:     strings.Fields(os.Getenv(envSamplers)),
	}
	var missing []string
	for name, v := range map[string]string{envOTLP: s.otlp, envOTLPGRPC: s.otlpGRPC, envAgent: s.agent,
		envJaeger: s.jaeger, envPrometheus: s.prometheus, envVictoriaLogs: s.victorialogs, envSamplers: os.Getenv(envSamplers)} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	var err error
	if s.plainPercent, err = strconv.ParseFloat(os.Getenv(envPlainPercent), 64); err != nil {
		missing = append(missing, envPlainPercent)
	}
	if s.decisionWait, err = time.ParseDuration(os.Getenv(envDecisionWait)); err != nil {
		missing = append(missing, envDecisionWait)
	}
	if s.scrapeInterval, err = time.ParseDuration(os.Getenv(envScrapeInterval)); err != nil {
		missing = append(missing, envScrapeInterval)
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Fatalf("%s=1 but %s not set or not valid: source the env file of scripts/stack.sh up (or run scripts/e2e.sh)",
			envE2E, strings.Join(missing, ", "))
	}
	return s
}

// summary is the demo's -summary-json output.
type summary struct {
	Service  string `json:"service"`
	Exporter string `json:"exporter"` // the span exporter: otlp, none, file, ...
	// Traces says where the spans went (the protocol for OTLP).
	Traces struct {
		Exporter string `json:"exporter"`
		Protocol string `json:"protocol"`
	} `json:"traces"`
	Operations []operation `json:"operations"`
}

type operation struct {
	OperationID string    `json:"operation_id"`
	Scenario    string    `json:"scenario"`
	Method      string    `json:"method"`
	Outcome     string    `json:"outcome"`
	Status      int       `json:"status"`
	Attempts    []attempt `json:"attempts"`
	// StateCheck is the state check's result (retry.state_check.result of
	// the state_check span), empty when the operation ran none.
	StateCheck string `json:"state_check"`
	// Optional: the operation's duration as measured by the demo.
	DurationMs *float64 `json:"duration_ms,omitempty"`
}

type attempt struct {
	RequestID  string `json:"request_id"`
	Attempt    int    `json:"attempt"`
	Status     int    `json:"status"`
	ErrorClass string `json:"error_class"`
	Decision   string `json:"decision"`
	// The attempt's cost and the backoff chosen after it (retry.elapsed_ms,
	// retry.backoff_ms), when the summary has them.
	ElapsedMs *float64 `json:"elapsed_ms,omitempty"`
	BackoffMs *float64 `json:"backoff_ms,omitempty"`
}

// duration returns the operation's time on the request path from the
// summary: duration_ms when present, else the sum of its attempts'
// elapsed_ms and backoff_ms.
func (o operation) duration() (time.Duration, bool) {
	if o.DurationMs != nil {
		return time.Duration(*o.DurationMs * float64(time.Millisecond)), true
	}
	var ms float64
	ok := false
	for _, a := range o.Attempts {
		for _, v := range []*float64{a.ElapsedMs, a.BackoffMs} {
			if v != nil {
				ms += *v
				ok = true
			}
		}
	}
	return time.Duration(ms * float64(time.Millisecond)), ok
}

func (s summary) attemptCount() int {
	n := 0
	for _, op := range s.Operations {
		n += len(op.Attempts)
	}
	return n
}

var (
	repoRootOnce sync.Once
	repoRootDir  string
	repoRootErr  error
)

// repoRoot is the directory of the main module's go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	repoRootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			repoRootErr = err
			return
		}
		for {
			if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
				bytes.Contains(b, []byte("module github.com/otelretry/otelretry-go\n")) {
				repoRootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				repoRootErr = fmt.Errorf("go.mod of github.com/otelretry/otelretry-go not found above the test directory")
				return
			}
			dir = parent
		}
	})
	if repoRootErr != nil {
		t.Fatal(repoRootErr)
	}
	return repoRootDir
}

var (
	demoOnce sync.Once
	demoPath string
	demoErr  error
	demoDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if demoDir != "" {
		_ = os.RemoveAll(demoDir)
	}
	os.Exit(code)
}

// demoBinary builds ./examples/demo once per test process (the same program
// `go run ./examples/demo` runs), unless OTELRETRY_DEMO_BIN names one.
func demoBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(envDemoBin); p != "" {
		return p
	}
	root := repoRoot(t)
	demoOnce.Do(func() {
		demoDir, demoErr = os.MkdirTemp("", "otelretry-e2e-demo-")
		if demoErr != nil {
			return
		}
		demoPath = filepath.Join(demoDir, "demo")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// The demo is a module of its own: build it there.
		cmd := exec.CommandContext(ctx, "go", "build", "-C", filepath.Join(root, "examples", "demo"), "-o", demoPath, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			demoErr = fmt.Errorf("go build ./examples/demo: %v\n%s", err, out)
		}
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoPath
}

func repeat() int {
	if n, err := strconv.Atoi(os.Getenv(envRepeat)); err == nil && n > 0 {
		return n
	}
	return 3
}

// uniqueName returns a service name that is unique per run and needs no
// escaping in a PromQL regular expression.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d-%s", prefix, time.Now().Unix(), randomHex(4))
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// demoRun is one run of the demo.
type demoRun struct {
	service    string
	instanceID string
	summary    summary
	stdout     string
	stderr     string
	wall       time.Duration
	otlp       bool // exported over OTLP
}

// runDemo runs the demo with endpoint as OTEL_EXPORTER_OTLP_ENDPOINT, and
// extra OTEL_* variables, and returns its summary. With an empty endpoint,
// OTEL_EXPORTER_OTLP_ENDPOINT is unset and OTEL_{TRACES,METRICS,LOGS}_EXPORTER=none
// are set. Every inherited OTEL_* variable is removed so the run depends on
// nothing but its arguments.
func runDemo(t *testing.T, endpoint, service string, extra []string) demoRun {
	t.Helper()
	bin := demoBinary(t)
	dir := t.TempDir()
	summaryPath := filepath.Join(dir, "summary.json")
	r := demoRun{service: service, instanceID: service + "-" + randomHex(8), otlp: endpoint != ""}

	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"OTEL_SERVICE_NAME="+service,
		"OTEL_RESOURCE_ATTRIBUTES=service.instance.id="+r.instanceID,
	)
	if endpoint != "" {
		env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint)
	} else {
		// No exporter at all: the standard switches.
		env = append(env, "OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none", "OTEL_LOGS_EXPORTER=none")
	}
	env = append(env, extra...)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// -traces: where the demo's default exporter would write stdouttrace
	// JSON (unused with OTLP or none; no file may appear).
	page := filepath.Join(dir, "report.html")
	cmd := exec.CommandContext(ctx, bin, "-repeat", strconv.Itoa(repeat()), "-summary-json", summaryPath,
		"-traces", filepath.Join(dir, "traces.json"), "-html", page)
	cmd.Dir = repoRoot(t)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r.wall = time.Since(start)
	r.stdout, r.stderr = stdout.String(), stderr.String()
	if err != nil {
		t.Fatalf("demo (endpoint %q) failed after %v: %v\nstdout:\n%s\nstderr:\n%s",
			endpoint, r.wall.Round(time.Millisecond), err, tail(r.stdout), tail(r.stderr))
	}
	b, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatalf("demo wrote no summary: %v\nstderr:\n%s", err, tail(r.stderr))
	}
	if err := json.Unmarshal(b, &r.summary); err != nil {
		t.Fatalf("summary JSON: %v\n%s", err, b)
	}
	// The terminal shows the report, never span JSON; and with OTLP or
	// none, the default exporter's file is not created.
	if !strings.HasPrefix(r.stdout, "=== otelretry demo") || strings.Contains(r.stdout, `"SpanContext"`) {
		t.Errorf("demo output does not lead with the report, or holds span JSON:\n%s", tail(r.stdout))
	}
	if _, err := os.Stat(filepath.Join(dir, "traces.json")); !os.IsNotExist(err) {
		t.Errorf("demo wrote -traces although its spans go elsewhere (%v)", err)
	}
	// The demo's HTML report of its own spans, where it says.
	if b, err := os.ReadFile(page); err != nil || !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) ||
		!strings.Contains(r.stdout, "retryinspect's HTML report in "+page+" ") {
		t.Errorf("demo -html %s: no page, or the output does not say where (%v):\n%s", page, err, tail(r.stdout))
	}
	checkSummary(t, r)
	t.Logf("demo %s: %d operations, %d attempts in %v", service, len(r.summary.Operations),
		r.summary.attemptCount(), r.wall.Round(time.Millisecond))
	return r
}

// checkSummary checks the summary against the contract on its own.
func checkSummary(t *testing.T, r demoRun) {
	t.Helper()
	s := r.summary
	if s.Service != r.service {
		t.Errorf("summary service = %q, want %q", s.Service, r.service)
	}
	if want := map[bool]string{true: "otlp", false: "none"}[r.otlp]; s.Exporter != want {
		t.Errorf("summary exporter = %q, want %q", s.Exporter, want)
	}
	if len(s.Operations) == 0 {
		t.Fatal("summary has no operations")
	}
	ops := map[string]bool{}
	reqs := map[string]bool{}
	for _, op := range s.Operations {
		if op.OperationID == "" || ops[op.OperationID] {
			t.Errorf("operation id %q empty or repeated", op.OperationID)
		}
		ops[op.OperationID] = true
		if !attrs.Outcome(op.Outcome).Valid() {
			t.Errorf("%s: outcome %q not in the vocabulary", op.OperationID, op.Outcome)
		}
		for i, a := range op.Attempts {
			if a.Attempt != i+1 {
				t.Errorf("%s: attempt #%d has number %d", op.OperationID, i+1, a.Attempt)
			}
			if a.RequestID == "" || reqs[a.RequestID] {
				t.Errorf("%s: request id %q empty or repeated", op.OperationID, a.RequestID)
			}
			reqs[a.RequestID] = true
			if (a.Status != 0) == (a.ErrorClass != "") {
				t.Errorf("%s attempt %d: status %d and error class %q: want exactly one",
					op.OperationID, a.Attempt, a.Status, a.ErrorClass)
			}
			if !attrs.Decision(a.Decision).Valid() {
				t.Errorf("%s attempt %d: decision %q not in the vocabulary", op.OperationID, a.Attempt, a.Decision)
			}
		}
	}
}

func tail(s string) string {
	const max = 4000
	if len(s) > max {
		return "..." + s[len(s)-max:]
	}
	return s
}

// closedPort returns a loopback address on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestExportFailureDoesNotBreakRequests runs the demo with the OTLP endpoint
// on a closed loopback port, on a port that accepts and never answers, and
// without any exporter: every run must exit 0 with the same outcomes and
// (within tolerance) the same durations as the run without exporter.
// Telemetry failures never break the request path.
func TestExportFailureDoesNotBreakRequests(t *testing.T) {
	requireE2E(t)
	none := runDemo(t, "", uniqueName("otelretry-e2e-none"), nil)
	for _, c := range []struct{ name, endpoint string }{
		{"closed", "http://" + closedPort(t)},
		{"hanging", "http://" + silentport.Listen(t)},
	} {
		t.Run(c.name, func(t *testing.T) {
			down := runDemo(t, c.endpoint, uniqueName("otelretry-e2e-"+c.name), nil)
			compareRuns(t, down, none)
		})
	}
}

// compareRuns checks that the run with a failing exporter (down) returned
// the same outcomes as the run without exporter (none), with no added wait.
func compareRuns(t *testing.T, down, none demoRun) {
	t.Helper()
	a, b := down.summary.Operations, none.summary.Operations
	if len(a) != len(b) {
		t.Fatalf("exporter down: %d operations; no exporter: %d", len(a), len(b))
	}
	var sumA, sumB time.Duration
	var compared int
	for i := range a {
		// The terminal reason and the number of calls must not depend on
		// telemetry. Attempt details may differ where a scenario sits on a
		// timing edge (an attempt that ends just before or after the
		// deadline): logged, not failed.
		if got, want := outcomeOf(a[i]), outcomeOf(b[i]); got != want {
			t.Errorf("operation %d: exporter down %s; no exporter %s", i, got, want)
		} else if got, want := shape(a[i]), shape(b[i]); got != want {
			t.Logf("operation %d: same outcome, attempts differ: exporter down %s; no exporter %s", i, got, want)
		}
		da, okA := a[i].duration()
		db, okB := b[i].duration()
		if okA && okB {
			compared++
			sumA += da
			sumB += db
			// Export runs off the request path: a dead endpoint adds no wait.
			if da > db+500*time.Millisecond && da > 2*db {
				t.Errorf("operation %d (%s): %v with the exporter down, %v without exporter",
					i, a[i].Scenario, da, db)
			}
		}
	}
	if compared == 0 {
		t.Errorf("the summary has no durations (duration_ms, or attempts' elapsed_ms): latency not compared")
	} else if sumA > sumB+sumB/2+time.Second {
		t.Errorf("total operation time %v with the exporter down, %v without exporter", sumA, sumB)
	}
	t.Logf("operation time: %v with the exporter down, %v without; wall %v / %v (the demo's final flush is bounded)",
		sumA, sumB, down.wall.Round(time.Millisecond), none.wall.Round(time.Millisecond))
}

// outcomeOf is what must not depend on telemetry: the scenario, its method,
// its terminal reason and its number of attempts.
func outcomeOf(op operation) string {
	return fmt.Sprintf("%s %s -> %s after %d attempts", op.Scenario, op.Method, op.Outcome, len(op.Attempts))
}

// shape adds the details: the status returned and each attempt's status,
// error class and decision.
func shape(op operation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s -> %s/%d [", op.Scenario, op.Method, op.Outcome, op.Status)
	for i, a := range op.Attempts {
		if i > 0 {
			b.WriteString(" ")
		}
		if a.ErrorClass != "" {
			fmt.Fprintf(&b, "%s:%s", a.ErrorClass, a.Decision)
		} else {
			fmt.Fprintf(&b, "%d:%s", a.Status, a.Decision)
		}
	}
	b.WriteString("]")
	return b.String()
}
