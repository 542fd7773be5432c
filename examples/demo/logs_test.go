// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otelretry/otelretry-go/attrs"
)

// The demo's log events (WithLoggerProvider), one test per value of
// OTEL_LOGS_EXPORTER. Each run of the demo makes 10 operations of 17
// attempts: as many retry.operation and retry.attempt records, which
// docs/stack.md states (TestDemoLogsOTLP holds the page to the count).

// eventJSON is how stdoutlog writes a record's event name.
func eventJSON(name string) string { return `"EventName":"` + name + `"` }

// runDemoProcess runs the demo's main in a process of its own (the test
// binary re-executed, TestMain) with env added to an environment without
// OTEL_*, and returns its stdout, stderr and summary.
func runDemoProcess(t *testing.T, env ...string) (stdout, stderr string, s summary) {
	t.Helper()
	dir := t.TempDir()
	summaryPath := filepath.Join(dir, "summary.json")
	args := "-summary-json " + summaryPath + " -traces " + filepath.Join(dir, "traces.json") + " -html " + filepath.Join(dir, "report.html")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(withoutOTEL(os.Environ()), append(env, "TMPDIR="+dir, envRunMain+"="+args)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo: %v\n%s", err, errOut.String())
	}
	raw, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), s
}

func attemptCount(s summary) int {
	n := 0
	for _, op := range s.Operations {
		n += len(op.Attempts)
	}
	return n
}

// OTEL_LOGS_EXPORTER=console: every record on stdout, after the report.
func TestDemoLogsConsole(t *testing.T) {
	stdout, stderr, s := runDemoProcess(t, "OTEL_LOGS_EXPORTER=console")
	if want := (exportTarget{Exporter: exporterConsole}); s.Logs != want {
		t.Errorf("logs = %+v, want %+v", s.Logs, want)
	}
	ops, attempts := strings.Count(stdout, eventJSON(attrs.LogEventOperation)), strings.Count(stdout, eventJSON(attrs.LogEventAttempt))
	if ops != len(s.Operations) || attempts != attemptCount(s) || ops != 10 || attempts != 17 {
		t.Errorf("stdout holds %d %s and %d %s records; the demo ran %d operations of %d attempts (want 10 and 17)",
			ops, attrs.LogEventOperation, attempts, attrs.LogEventAttempt, len(s.Operations), attemptCount(s))
	}
	report := strings.Index(stdout, "  logs:    stdoutlog JSON below")
	first := strings.Index(stdout, `"EventName"`)
	if !strings.HasPrefix(stdout, reportHeader) || report < 0 || first < report {
		t.Errorf("want the report, then the records: report's logs line at %d, first record at %d:\n%.400s", report, first, stdout)
	}
	if strings.Contains(stderr, `"EventName"`) {
		t.Errorf("records on stderr:\n%.400s", stderr)
	}
	// Each operation's records carry its id; none the secret.
	for _, op := range s.Operations {
		if !strings.Contains(stdout, `"Key":"`+string(attrs.OperationIDKey)+`","Value":{"Type":"STRING","Value":"`+op.OperationID+`"}`) {
			t.Errorf("no record with %s=%s", attrs.OperationIDKey, op.OperationID)
		}
	}
	if strings.Contains(stdout, "demo-secret-key") {
		t.Error("the secret reached the log records")
	}
}

// OTEL_LOGS_EXPORTER=none, and the default (nothing set): no record
// anywhere, and no LoggerProvider for the transport.
func TestDemoLogsNone(t *testing.T) {
	for _, env := range [][]string{{"OTEL_LOGS_EXPORTER=none"}, nil} {
		t.Run(strings.Join(append([]string{"env"}, env...), " "), func(t *testing.T) {
			stdout, stderr, s := runDemoProcess(t, env...)
			if want := (exportTarget{Exporter: exporterNone}); s.Logs != want {
				t.Errorf("logs = %+v, want %+v", s.Logs, want)
			}
			if strings.Contains(stdout+stderr, `"EventName"`) {
				t.Errorf("log records written:\n%.400s", stdout+stderr)
			}
			if !strings.Contains(stdout, "  logs:    not exported") {
				t.Errorf("the report does not say the logs are not exported:\n%s", stdout)
			}
		})
	}
	cleanEnv(t, map[string]string{"OTEL_LOGS_EXPORTER": "none"})
	tel, err := newTelemetry(t.Context(), filepath.Join(t.TempDir(), "traces.json"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.shutdown(t.Context())
	if tel.lp != nil || tel.logs.Exporter != exporterNone {
		t.Errorf("OTEL_LOGS_EXPORTER=none: LoggerProvider %v, logs %+v; want none", tel.lp, tel.logs)
	}
}

// otlpLogReceiver is an OTLP/HTTP logs receiver on 127.0.0.1 that counts
// the records it receives by event name.
type otlpLogReceiver struct {
	mu       sync.Mutex
	events   map[string]int
	opIDs    map[string]bool // retry.operation.id of the operation records
	noTrace  int             // records without a trace id
	requests int
}

func (rc *otlpLogReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/logs" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf POST to /v1/logs", http.StatusBadRequest)
		return
	}
	var req collogspb.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.requests++
	for _, rl := range req.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				rc.events[lr.EventName]++
				if len(lr.TraceId) != 16 || hex.EncodeToString(lr.TraceId) == strings.Repeat("0", 32) {
					rc.noTrace++
				}
				if lr.EventName != attrs.LogEventOperation {
					continue
				}
				for _, kv := range lr.Attributes {
					if kv.Key == string(attrs.OperationIDKey) {
						rc.opIDs[kv.Value.GetStringValue()] = true
					}
				}
			}
		}
	}
	rc.mu.Unlock()
	resp, _ := proto.Marshal(&collogspb.ExportLogsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(resp)
}

// OTEL_LOGS_EXPORTER=otlp: every record reaches an OTLP/HTTP receiver, in
// its trace. Spans and metrics stay on the default (a file, the report).
func TestDemoLogsOTLP(t *testing.T) {
	rc := &otlpLogReceiver{events: map[string]int{}, opIDs: map[string]bool{}}
	srv := httptest.NewServer(rc) // 127.0.0.1
	defer srv.Close()
	cleanEnv(t, map[string]string{"OTEL_LOGS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": srv.URL + "/v1/logs"})
	t.Setenv("TMPDIR", t.TempDir())
	out, s := runDemo(t, options{})
	want := exportTarget{Exporter: exporterOTLP, Protocol: "http/protobuf", Endpoint: srv.URL + "/v1/logs"}
	if s.Logs != want || s.Traces.Exporter != exporterFile {
		t.Errorf("logs = %+v, traces = %+v; want %+v and the default file", s.Logs, s.Traces, want)
	}
	if strings.Contains(out, `"EventName"`) {
		t.Error("records on the terminal")
	}
	// run() flushed the LoggerProvider before it returned.
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.events[attrs.LogEventOperation] != len(s.Operations) || rc.events[attrs.LogEventAttempt] != attemptCount(s) || len(rc.events) != 2 ||
		len(s.Operations) != 10 || attemptCount(s) != 17 {
		t.Errorf("the receiver counted %v in %d requests; the demo ran %d operations of %d attempts (want 10 and 17)",
			rc.events, rc.requests, len(s.Operations), attemptCount(s))
	}
	if ops, attempts := stackPageRecordCounts(t); ops != rc.events[attrs.LogEventOperation] || attempts != rc.events[attrs.LogEventAttempt] {
		t.Errorf("docs/stack.md says each run emits %d %s and %d %s records; the receiver counted %v: correct the page",
			ops, attrs.LogEventOperation, attempts, attrs.LogEventAttempt, rc.events)
	}
	if rc.noTrace > 0 {
		t.Errorf("%d records without a trace id", rc.noTrace)
	}
	var ids []string
	for _, op := range s.Operations {
		if !rc.opIDs[op.OperationID] {
			ids = append(ids, op.OperationID)
		}
	}
	if len(ids) > 0 {
		t.Errorf("no operation record for %v (received %v)", ids, slices.Sorted(maps.Keys(rc.opIDs)))
	}
}

// stackPageRecords is docs/stack.md's sentence on the records each run of
// the demo emits.
var stackPageRecords = regexp.MustCompile("each run emits ([0-9]+) `" + regexp.QuoteMeta(attrs.LogEventOperation) +
	"` and ([0-9]+) `" + regexp.QuoteMeta(attrs.LogEventAttempt) + "` records")

// stackPageRecordCounts returns the retry.operation and retry.attempt
// records docs/stack.md says each run of the demo emits.
func stackPageRecordCounts(t *testing.T) (ops, attempts int) {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "stack.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := stackPageRecords.FindSubmatch(page)
	if m == nil {
		t.Fatalf("docs/stack.md does not say how many records each run emits (%s)", stackPageRecords)
	}
	ops, _ = strconv.Atoi(string(m[1]))
	attempts, _ = strconv.Atoi(string(m[2]))
	return ops, attempts
}
