// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/htmlreport"
)

// reportHeader starts the demo's output: the readable report comes first.
const reportHeader = "=== otelretry demo:"

// spanJSON is a marker of stdouttrace's span JSON.
const spanJSON = `"SpanContext"`

// otelEnv lists the standard variables the demo reads; every test starts
// with all of them empty, so the runner's environment cannot leak in.
var otelEnv = []string{
	"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_PROPAGATORS",
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
	"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
	"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_METRICS_EXEMPLAR_FILTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
}

func cleanEnv(t *testing.T, set map[string]string) {
	t.Helper()
	for _, k := range otelEnv {
		t.Setenv(k, set[k])
	}
}

// runDemo runs the whole demo in-process on loopback and returns its output
// and summary.
func runDemo(t *testing.T, o options) (string, summary) {
	t.Helper()
	o.repeat = 1
	o.summaryJSON = filepath.Join(t.TempDir(), "summary.json")
	var out bytes.Buffer
	if err := run(t.Context(), o, &out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(o.summaryJSON)
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return out.String(), s
}

// TestDemo runs the whole demo in-process on loopback and checks each
// scenario's outcome, the number of writes the server saw, and that the
// exported traces carry no secret.
func TestDemo(t *testing.T) {
	cleanEnv(t, nil)
	traces := filepath.Join(t.TempDir(), "traces.json")
	report := filepath.Join(t.TempDir(), "report.html")
	out, s := runDemo(t, options{traces: traces, html: report})
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
	// The hedged read's first attempt lost the race to its hedge.
	if s.Outcomes["return"] != 5 || s.Decisions["retry"] != 5 || s.Decisions["superseded"] != 1 || s.RetryRatio != 5.0/17 || s.DeadlineRatio != 2.0/10 {
		t.Errorf("summary = outcomes %v decisions %v retry %.3f deadline %.3f", s.Outcomes, s.Decisions, s.RetryRatio, s.DeadlineRatio)
	}
	// Every failed attempt is counted, by its error class or its status:
	// the six timeouts, the six 503s and the hedged read's lost race, as
	// the spans record them.
	failed := map[string]int64{}
	for _, op := range s.Operations {
		for _, a := range op.Attempts {
			switch {
			case a.ErrorClass != "":
				failed[a.ErrorClass]++
			case a.Status < 200 || a.Status >= 400:
				failed[fmt.Sprint(a.Status)]++
			}
		}
	}
	if !maps.Equal(s.FailedAttempts, failed) || !maps.Equal(failed, map[string]int64{"timeout": 6, "503": 6, "race_lost": 1}) {
		t.Errorf("failed attempts %v, want %v from the spans, timeout 6, 503 6 and race_lost 1", s.FailedAttempts, failed)
	}
	if want := "  failed attempts 13 by class or status:  503 6 (46%), timeout 6 (46%), race_lost 1 (8%)\n"; !strings.Contains(out, want) {
		t.Errorf("the output does not say %q:\n%s", want, out)
	}
	spans, err := os.ReadFile(traces)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) == 0 || !strings.Contains(string(spans), "api_key=REDACTED") {
		t.Fatal("stdout traces are empty or lack the sanitized URL")
	}
	// The HTML report: where the output says, of every operation.
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if want := "  report:  retryinspect's HTML report in " + report + " (10 operations, 17 attempts, 0 findings): open it in a browser\n"; !strings.Contains(out, want) {
		t.Errorf("the output does not say %q:\n%s", want, out)
	}
	if !strings.HasPrefix(string(page), "<!DOCTYPE html>") || !strings.Contains(string(page), "10 operations in 10 timelines") {
		t.Errorf("the HTML report does not draw the 10 operations:\n%.500s", page)
	}
	// The attempt tables are retryinspect's, as it prints them from the
	// spans the demo exported: "-" where a value is absent, never null.
	checkTablesAgree(t, out, spans)
	for _, leak := range []string{"demo-secret-key"} {
		if strings.Contains(string(spans), leak) || strings.Contains(out, leak) || strings.Contains(string(page), leak) {
			t.Errorf("the secret %q reached the traces, the output or the HTML report", leak)
		}
	}
}

// TestDemoEnvironment checks the standard OTEL_* configuration: what each
// setting selects, that the report leads the output, and where spans go.
func TestDemoEnvironment(t *testing.T) {
	closed := closedPort(t)
	for _, c := range []struct {
		name string
		env  map[string]string
		// traces is the -traces flag; "" lets the demo create a file.
		traces string
		// want: the span, metric and log exporters and OTLP protocol the
		// summary reports.
		wantTraces, wantMetrics, wantLogs exportTarget
		wantHeaders                       []string
	}{{
		name:        "nothing set: spans to a new file, metrics in the report only, no log events",
		wantTraces:  exportTarget{Exporter: exporterFile},
		wantMetrics: exportTarget{Exporter: exporterNone},
		wantLogs:    exportTarget{Exporter: exporterNone},
		wantHeaders: []string{"traceparent"},
	}, {
		name:        "OTEL_TRACES_EXPORTER=none: no spans anywhere",
		env:         map[string]string{"OTEL_TRACES_EXPORTER": "none"},
		traces:      "given.json",
		wantTraces:  exportTarget{Exporter: exporterNone},
		wantMetrics: exportTarget{Exporter: exporterNone},
		wantLogs:    exportTarget{Exporter: exporterNone},
		wantHeaders: []string{"traceparent"},
	}, {
		name: "OTLP endpoint alone: OTLP over http/protobuf for the three signals",
		env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + closed,
			"OTEL_EXPORTER_OTLP_TIMEOUT": "100"},
		wantTraces:  exportTarget{Exporter: exporterOTLP, Protocol: "http/protobuf", Endpoint: "http://" + closed},
		wantMetrics: exportTarget{Exporter: exporterOTLP, Protocol: "http/protobuf", Endpoint: "http://" + closed},
		wantLogs:    exportTarget{Exporter: exporterOTLP, Protocol: "http/protobuf", Endpoint: "http://" + closed},
		wantHeaders: []string{"traceparent"},
	}, {
		name: "OTLP over gRPC, metrics off, B3 propagation",
		env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + closed, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_METRICS_EXPORTER": "none", "OTEL_PROPAGATORS": "b3", "OTEL_EXPORTER_OTLP_TIMEOUT": "100"},
		wantTraces:  exportTarget{Exporter: exporterOTLP, Protocol: "grpc", Endpoint: "http://" + closed},
		wantMetrics: exportTarget{Exporter: exporterNone},
		wantLogs:    exportTarget{Exporter: exporterOTLP, Protocol: "grpc", Endpoint: "http://" + closed},
		wantHeaders: []string{"b3"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cleanEnv(t, c.env)
			t.Setenv("TMPDIR", dir) // where the default file goes
			traces := c.traces
			if traces != "" {
				traces = filepath.Join(dir, traces)
			}
			out, s := runDemo(t, options{traces: traces})
			if !strings.HasPrefix(out, reportHeader) {
				t.Errorf("the output does not start with the report:\n%.300s", out)
			}
			if strings.Contains(out, spanJSON) {
				t.Errorf("span JSON on the terminal")
			}
			got := s.Traces
			if c.wantTraces.Exporter == exporterFile {
				// A temporary file, removed at exit (TestDemoRemovesTemporaryFiles).
				if filepath.Dir(got.Endpoint) != dir || !got.Temporary {
					t.Errorf("spans file %q: not a temporary file in %s", got.Endpoint, dir)
				}
				got.Endpoint, got.Temporary = "", false
			}
			if got != c.wantTraces || s.Exporter != c.wantTraces.Exporter {
				t.Errorf("traces = %+v (exporter %q), want %+v", s.Traces, s.Exporter, c.wantTraces)
			}
			if s.Metrics != c.wantMetrics {
				t.Errorf("metrics = %+v, want %+v", s.Metrics, c.wantMetrics)
			}
			if s.Logs != c.wantLogs {
				t.Errorf("logs = %+v, want %+v", s.Logs, c.wantLogs)
			}
			if !slices.Equal(s.Propagation, c.wantHeaders) {
				t.Errorf("propagation headers seen by the server = %v, want %v", s.Propagation, c.wantHeaders)
			}
			if c.traces != "" && c.wantTraces.Exporter != exporterFile {
				if _, err := os.Stat(traces); !os.IsNotExist(err) {
					t.Errorf("-traces %s was created although spans go elsewhere (%v)", traces, err)
				}
			}
			if c.wantTraces.Exporter == exporterNone {
				entries, _ := os.ReadDir(dir)
				if len(entries) != 0 {
					t.Errorf("files written with OTEL_TRACES_EXPORTER=none: %v", entries)
				}
			}
		})
	}
}

// TestDemoSpansOnTerminal runs the demo as its own process (the test binary
// re-executed into main) and checks that spans printed on the terminal
// (OTEL_TRACES_EXPORTER=console, or -traces -) come after the whole report.
func TestDemoSpansOnTerminal(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"OTEL_TRACES_EXPORTER=console", []string{"OTEL_TRACES_EXPORTER=console"}, nil},
		{"-traces -", nil, []string{"-traces", "-"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
			cmd.Env = append(withoutOTEL(os.Environ()), append(c.env, envRunMain+"="+strings.Join(c.args, " "))...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("demo: %v\n%s", err, stderr.String())
			}
			out := stdout.String()
			report := strings.Index(out, "Telemetry (")
			first := strings.Index(out, spanJSON)
			if !strings.HasPrefix(out, reportHeader) || report < 0 || first < report {
				t.Errorf("want the report, then the spans: report at %d, first span at %d:\n%.400s", report, first, out)
			}
		})
	}
}

// envRunMain makes the test binary run the demo's main with the
// space-separated arguments it holds (TestMain).
const envRunMain = "OTELRETRY_DEMO_RUN_MAIN"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(envRunMain); ok {
		os.Args = append([]string{"demo"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func withoutOTEL(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "OTEL_") })
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

// checkTablesAgree checks that every line of every attempt table of
// retryinspect's text report of the spans (stdouttrace JSON) is in the
// demo's output, and that the output prints no null.
func checkTablesAgree(t *testing.T, out string, spans []byte) {
	t.Helper()
	rep, err := htmlreport.ReadStdout(bytes.NewReader(spans), "traces.json")
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	rows := 0
	tables, _, _ := strings.Cut(text.String(), "\nsummary: ") // the tables come before the summary
	for line := range strings.Lines(tables) {
		cols := strings.Fields(line)
		if len(cols) < 2 || !(cols[0] == "#" || cols[0] == "-" || cols[0] >= "1" && cols[0] <= "9") || !strings.HasPrefix(line, "  ") {
			continue // not a row of an attempt table
		}
		rows++
		if !strings.Contains(out, "    "+strings.TrimPrefix(line, "  ")) {
			t.Errorf("the demo's output lacks retryinspect's table line %q", line)
		}
	}
	if rows < 17 {
		t.Errorf("only %d table lines in retryinspect's report:\n%s", rows, text.String())
	}
	if strings.Contains(out, "null") {
		t.Errorf("the output prints null:\n%s", out)
	}
}

// TestDemoRemovesTemporaryFiles: the spans file and the HTML report the
// demo creates by default are removed at exit, and the output says so and
// how to keep them; files named by -traces and -html stay.
func TestDemoRemovesTemporaryFiles(t *testing.T) {
	cleanEnv(t, nil)
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	out, s := runDemo(t, options{})
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left in the temporary directory: %v", entries)
	}
	for _, want := range []string{
		"  spans:   stdouttrace JSON in a temporary file, removed at exit (-traces FILE keeps them)\n",
		"  report:  retryinspect's HTML report (10 operations, 17 attempts, 0 findings) in a temporary file, removed at exit (-html FILE keeps it)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q:\n%s", want, out)
		}
	}
	if s.Traces.Exporter != exporterFile || filepath.Dir(s.Traces.Endpoint) != dir || !s.Traces.Temporary {
		t.Errorf("traces %+v, want a temporary file in %s", s.Traces, dir)
	}

	traces, report := filepath.Join(dir, "traces.json"), filepath.Join(dir, "report.html")
	runDemo(t, options{traces: traces, html: report})
	for _, kept := range []string{traces, report} {
		if info, err := os.Stat(kept); err != nil || info.Size() == 0 {
			t.Errorf("%s, named, is not kept: %v", kept, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the temporary directory holds %v, want the two named files", entries)
	}
}

// stdoutSpan is what TestDemoServerSpanUnderEachAttempt reads of a span
// of the stdouttrace JSON.
type stdoutSpan struct {
	SpanContext struct{ SpanID string }
	Parent      struct{ SpanID string }
	SpanKind    int
	Attributes  []stdoutKV
	Resource    []stdoutKV
}

type stdoutKV struct {
	Key   string
	Value struct{ Value any }
}

func (s stdoutSpan) value(kvs []stdoutKV, key string) (any, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value.Value, true
		}
	}
	return nil, false
}

// TestDemoServerSpanUnderEachAttempt: the trace is the README's picture.
// The server received each attempt's trace context (traceparent, from the
// W3C propagators the demo sets), so that every attempt that got an
// answer has the server's SERVER span under it, recorded by the other
// service (its own service.name); and retryinspect names the dependency
// by that service.
func TestDemoServerSpanUnderEachAttempt(t *testing.T) {
	cleanEnv(t, nil)
	traces := filepath.Join(t.TempDir(), "traces.json")
	_, s := runDemo(t, options{traces: traces})
	if !slices.Equal(s.Propagation, []string{"traceparent"}) {
		t.Errorf("propagation headers seen by the server = %v, want traceparent", s.Propagation)
	}
	raw, err := os.ReadFile(traces)
	if err != nil {
		t.Fatal(err)
	}
	var spans []stdoutSpan
	dec := json.NewDecoder(bytes.NewReader(raw))
	for dec.More() {
		var sp stdoutSpan
		if err := dec.Decode(&sp); err != nil {
			t.Fatal(err)
		}
		spans = append(spans, sp)
	}
	servers := map[string][]string{} // parent span id → the service of each server span under it
	for _, sp := range spans {
		if sp.SpanKind == 2 { // trace.SpanKindServer
			svc, _ := sp.value(sp.Resource, "service.name")
			servers[sp.Parent.SpanID] = append(servers[sp.Parent.SpanID], fmt.Sprint(svc))
		}
	}
	answered := 0
	for _, sp := range spans {
		if _, attempt := sp.value(sp.Attributes, string(attrs.AttemptKey)); !attempt {
			continue
		}
		if _, status := sp.value(sp.Attributes, string(attrs.HTTPResponseStatusCodeKey)); !status {
			continue // no answer: the server may not have ended its span yet
		}
		answered++
		if got := servers[sp.SpanContext.SpanID]; !slices.Equal(got, []string{serverService}) {
			t.Errorf("attempt span %s: server spans under it of services %q, want one of %q", sp.SpanContext.SpanID, got, serverService)
		}
	}
	if answered < 10 {
		t.Errorf("only %d attempts with an answer in the traces", answered)
	}
	if want := "\n  " + serverService + ": "; !bytes.Contains(textReport(t, raw), []byte(want)) {
		t.Errorf("retryinspect's report does not name the dependency %q", serverService)
	}
}

// textReport is retryinspect's text report of spans (stdouttrace JSON).
func textReport(t *testing.T, spans []byte) []byte {
	t.Helper()
	rep, err := htmlreport.ReadStdout(bytes.NewReader(spans), "traces.json")
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	return text.Bytes()
}

// TestDocsGiveTheDemosFigures: what docs/stack.md and docs/retryinspect.md
// say of the demo is what it does, so that a new scenario cannot leave a
// page behind: where its spans go with nothing set, in its own words, and
// the records and retried operations of a run at -repeat 3 (the end-to-end
// test's), three times one run's.
func TestDocsGiveTheDemosFigures(t *testing.T) {
	cleanEnv(t, nil)
	_, s := runDemo(t, options{})
	ops, attempts, retried := len(s.Operations), 0, 0
	for _, op := range s.Operations {
		attempts += len(op.Attempts)
		if len(op.Attempts) > 1 {
			retried++
		}
	}
	page := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		// Lines rewrapped, code spans as plain text.
		return strings.ReplaceAll(strings.Join(strings.Fields(string(b)), " "), "`", "")
	}
	// figures finds the numbers of a claim on a page; the claim must be there.
	figures := func(name, pattern string) []int {
		m := regexp.MustCompile(pattern).FindStringSubmatch(page(name))
		if m == nil {
			t.Fatalf("docs/%s no longer says /%s/: update this test with the page", name, pattern)
		}
		var out []int
		for _, v := range m[1:] {
			n, _ := strconv.Atoi(v)
			out = append(out, n)
		}
		return out
	}
	check := func(name, what string, got, want []int) {
		if !slices.Equal(got, want) {
			t.Errorf("docs/%s: %s %v, the demo gives %v", name, what, got, want)
		}
	}

	if want := "spans as " + (exportTarget{Exporter: exporterFile, Temporary: true}).String(); !strings.Contains(page("stack.md"), want) {
		t.Errorf("docs/stack.md does not say, with nothing set, %q", want)
	}
	check("stack.md", "records at -repeat 3", figures("stack.md", `\((\d+) attempt and (\d+) operation records at -repeat 3\)`),
		[]int{3 * attempts, 3 * ops})
	check("retryinspect.md", "records, operation records, attempt records at -repeat 3",
		figures("retryinspect.md", `reads the (\d+) records a LogsQL count finds \((\d+) retry\.operation, (\d+) retry\.attempt\)`),
		[]int{3 * (ops + attempts), 3 * ops, 3 * attempts})
	check("retryinspect.md", "operations retried at -repeat 3", figures("retryinspect.md", `decision; (\d+) operations retried\)`),
		[]int{3 * retried})
}

// TestDemoTwoRunsReadTogetherAreClean runs the demo twice, as a newcomer
// does before `retryinspect -jaeger ... -service otelretry-demo -lookback
// 1h` (docs/retryinspect.md, docs/stack.md), and reads both runs' spans as
// one input, as that query over the last hour does. Each run alone is
// clean; two separate runs are 20 separate operations, so together they
// must be clean too: an operation id names one operation.
func TestDemoTwoRunsReadTogetherAreClean(t *testing.T) {
	cleanEnv(t, nil)
	var all bytes.Buffer
	for i := range 2 {
		traces := filepath.Join(t.TempDir(), "traces.json")
		runDemo(t, options{traces: traces, html: filepath.Join(t.TempDir(), "report.html")})
		b, err := os.ReadFile(traces)
		if err != nil {
			t.Fatal(err)
		}
		one, err := htmlreport.ReadStdout(bytes.NewReader(b), "run")
		if err != nil {
			t.Fatal(err)
		}
		if f := one.Result().Findings; f != 0 {
			t.Fatalf("run %d alone: %d findings", i+1, f)
		}
		all.Write(b)
	}
	rep, err := htmlreport.ReadStdout(&all, "two runs")
	if err != nil {
		t.Fatal(err)
	}
	if res := rep.Result(); res.Findings != 0 {
		var text bytes.Buffer
		rep.WriteText(&text)
		t.Errorf("two demo runs read together (%d operations): %d findings, want 0:\n%s", res.Operations, res.Findings, text.String())
	}
}

// attemptRow: "Absent fields stay absent (nil / empty), never zero-filled into a fake
// value." An attempt that got no response (a timeout) has no
// http.response.status_code on its span; -summary-json must not give it a
// status of 0, nor one with a response an error class of "".
func TestDemoSummaryJSONKeepsAbsentStatusAbsent(t *testing.T) {
	cleanEnv(t, nil)
	path := filepath.Join(t.TempDir(), "summary.json")
	var out bytes.Buffer
	if err := run(t.Context(), options{repeat: 1, summaryJSON: path, traces: filepath.Join(t.TempDir(), "t.json"),
		html: filepath.Join(t.TempDir(), "r.html")}, &out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Operations []struct {
			OperationID string           `json:"operation_id"`
			Attempts    []map[string]any `json:"attempts"`
		} `json:"operations"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, op := range s.Operations {
		for _, a := range op.Attempts {
			class, hasClass := a["error_class"].(string)
			if class == "" && hasClass {
				t.Errorf("%s attempt %v: an empty error_class", op.OperationID, a["attempt"])
			}
			if st, ok := a["status"]; class != "" && ok {
				bad++
				if bad <= 3 {
					t.Errorf("%s attempt %v: error_class %q and \"status\": %v; the span has no status code", op.OperationID, a["attempt"], class, st)
				}
			}
		}
	}
	if bad > 3 {
		t.Errorf("... %d attempts without a response carry a zero-filled status in all", bad)
	}
}

// flush and shutdown share one export deadline (exportTimeout from the
// first of them), so that an unreachable collector delays the end of the
// demo by at most exportTimeout, not once for each.
func TestFlushAndShutdownShareOneExportDeadline(t *testing.T) {
	var tel telemetry
	first, cancel := tel.exportContext(t.Context())
	end := time.Now()
	defer cancel()
	second, cancel2 := tel.exportContext(t.Context())
	defer cancel2()
	d1, _ := first.Deadline()
	d2, ok := second.Deadline()
	if !ok || !d1.Equal(d2) || d1.Sub(end) > exportTimeout {
		t.Errorf("deadlines %v and %v (%v), want one, at most %v from the first", d1.Sub(end), d2.Sub(end), ok, exportTimeout)
	}
}
