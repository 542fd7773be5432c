// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/render"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// The log capture: one run of the real transport, on virtual time
// (testing/synctest, so every figure is exact), exported both ways: the
// spans by the stdouttrace exporter, the log events (WithLoggerProvider)
// by an SDK LoggerProvider whose exporter writes OTLP JSON lines as the
// Collector's file exporter does, and the same records as VictoriaLogs
// returns them from /select/logsql/query. The committed copy, under
// testdata/logs, is rewritten with -update.
var logCaptureFiles = struct{ spans, otlp, victoria string }{
	filepath.Join("testdata", "logs", "capture-spans.json"),
	filepath.Join("testdata", "logs", "capture-logs.jsonl"),
	filepath.Join("testdata", "logs", "capture-victorialogs.jsonl"),
}

type logCapture struct{ spans, otlp, victoria []byte }

// captureRun plays, through otelretry.NewTransport:
//
//   - the contract's read: GET under 400 ms, backoff 40 ms, 3 attempts;
//     503 (80 ms), 503 (80 ms), 200 (50 ms): remaining 400, 280, 160 and
//     decisions retry, retry, return;
//   - the contract's write: a POST whose answer does not come within its
//     120 ms attempt timeout: one call, decision check_state;
//   - a job without a span of its own that sends a POST, gets check_state,
//     and sends it again under the same operation id (an application
//     loop): a finding, outer-layer-resend.
func captureRun(t *testing.T) logCapture {
	t.Helper()
	var c logCapture
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		res := resource.NewSchemaless(attribute.String("service.name", "checkout"))
		var spans bytes.Buffer
		tp := spanWriter(t, &spans, sdktrace.WithResource(res))
		logs := &otlpJSONExporter{}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(logs)), sdklog.WithResource(res))

		seed := []otelretry.Option{
			otelretry.WithMaxAttempts(3),
			otelretry.WithDeadline(400 * time.Millisecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(40 * time.Millisecond)),
			otelretry.WithTracerProvider(tp),
			otelretry.WithLoggerProvider(lp),
			otelretry.WithoutClientSpans(),
		}
		send := func(ctx context.Context, base http.RoundTripper, method, url, opID string, opts ...otelretry.Option) {
			client := &http.Client{Transport: otelretry.NewTransport(base, append(slices.Clone(seed), opts...)...)}
			var body io.Reader
			if method == http.MethodPost {
				body = strings.NewReader(`{"sku":"A-1","qty":1}`)
			}
			req, err := http.NewRequestWithContext(otelretry.WithOperationID(ctx, opID), method, url, body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			switch {
			case err == nil:
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			case !errors.Is(err, otelretry.ErrOutcomeUnknown):
				t.Fatalf("%s %s: %v", method, url, err)
			}
		}

		root, span := tp.Tracer("checkout").Start(ctx, "checkout")
		send(root, scripted.New(
			scripted.Step{Delay: 80 * time.Millisecond, Status: 503},
			scripted.Step{Delay: 80 * time.Millisecond, Status: 503},
			scripted.Step{Delay: 50 * time.Millisecond, Status: 200, Body: "ok"},
		), http.MethodGet, "http://dependency.test/orders?customer=7", "op-read")
		time.Sleep(100 * time.Millisecond)
		// The base gives up after 120ms: otelretry's attempt timeout does not
		// cut a write's wait, which it could not retry.
		send(root, scripted.New(scripted.Step{Delay: 120 * time.Millisecond, Err: errNoAnswer}), http.MethodPost, "http://dependency.test/orders", "op-write")
		span.End()

		time.Sleep(time.Second)
		job := otelretry.WithOperationID(ctx, "op-pay")
		pay := scripted.New(scripted.Step{Delay: 120 * time.Millisecond, Err: errNoAnswer})
		for range 2 {
			send(job, pay, http.MethodPost, "http://payments.test/charges", "op-pay")
			time.Sleep(200 * time.Millisecond)
		}

		if err := tp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if err := lp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		c.spans = spans.Bytes()
		c.otlp = logs.buf.Bytes()
		c.victoria = toVictoriaLogs(t, c.otlp)
	})
	return c
}

// spanWriter is a tracer provider that writes its spans to out as
// stdouttrace does, synchronously, with the ids countingIDs gives: the
// input retryinspect reads, from the real transport.
func spanWriter(t *testing.T, out *bytes.Buffer, opts ...sdktrace.TracerProviderOption) *sdktrace.TracerProvider {
	t.Helper()
	exp, err := stdouttrace.New(stdouttrace.WithWriter(out))
	if err != nil {
		t.Fatal(err)
	}
	return sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(&countingIDs{})}, opts...)...)
}

// countingIDs gives the capture the same ids on every run.
type countingIDs struct {
	mu sync.Mutex
	n  uint64
}

func (g *countingIDs) next() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return g.n
}

func (g *countingIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	tid[0] = 0x4b
	binary.BigEndian.PutUint64(tid[8:], g.next())
	return tid, g.NewSpanID(context.Background(), tid)
}

func (g *countingIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var sid trace.SpanID
	binary.BigEndian.PutUint64(sid[:], 0x5a00000000000000|g.next())
	return sid
}

// otlpJSONExporter is an sdk/log exporter that writes each batch as one
// OTLP JSON ExportLogsServiceRequest line, with the Collector's pdata
// marshaler, as the Collector's file exporter writes it.
type otlpJSONExporter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (e *otlpJSONExporter) Export(_ context.Context, records []sdklog.Record) error {
	ld := plog.NewLogs()
	for i := range records {
		r := &records[i]
		rl := ld.ResourceLogs().AppendEmpty()
		if res := r.Resource(); res != nil {
			for _, kv := range res.Attributes() {
				putValue(rl.Resource().Attributes().PutEmpty(string(kv.Key)), kv.Value)
			}
		}
		sl := rl.ScopeLogs().AppendEmpty()
		scope := r.InstrumentationScope()
		sl.Scope().SetName(scope.Name)
		sl.Scope().SetVersion(scope.Version)
		lr := sl.LogRecords().AppendEmpty()
		lr.SetEventName(r.EventName())
		lr.SetTimestamp(pcommon.NewTimestampFromTime(r.Timestamp()))
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(r.ObservedTimestamp()))
		lr.SetSeverityNumber(plog.SeverityNumber(r.Severity()))
		lr.SetSeverityText(r.SeverityText())
		putValue(lr.Body(), r.Body())
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			putValue(lr.Attributes().PutEmpty(string(kv.Key)), kv.Value)
			return true
		})
		lr.SetTraceID(pcommon.TraceID(r.TraceID()))
		lr.SetSpanID(pcommon.SpanID(r.SpanID()))
		lr.SetFlags(plog.LogRecordFlags(r.TraceFlags()))
	}
	line, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf.Write(line)
	e.buf.WriteByte('\n')
	return nil
}

func (e *otlpJSONExporter) Shutdown(context.Context) error   { return nil }
func (e *otlpJSONExporter) ForceFlush(context.Context) error { return nil }

func putValue(dst pcommon.Value, v attribute.Value) {
	switch v.Type() {
	case attribute.BOOL:
		dst.SetBool(v.AsBool())
	case attribute.INT64:
		dst.SetInt(v.AsInt64())
	case attribute.FLOAT64:
		dst.SetDouble(v.AsFloat64())
	case attribute.STRING:
		dst.SetStr(v.AsString())
	case attribute.INVALID:
	default:
		dst.SetStr(v.Emit())
	}
}

// toVictoriaLogs writes OTLP logs JSON as VictoriaLogs' /select/logsql/query
// returns it after ingesting them through /insert/opentelemetry/v1/logs:
// one object per record whose values are all text, the resource
// attributes and the event name as stream fields (also listed in
// _stream), the scope as scope.name and scope.version, the severity as
// severity_number and severity_text, the body in _msg, every attribute
// under its own name, trace_id and span_id in hex, and _time.
//
// Checked against VictoriaLogs v1.52.1: these records, sent through the
// Collector (OTLP/HTTP protobuf) with their times moved to the present and
// read back with /select/logsql/query, came back with the same fields and
// values as this writes (the times moved back), field for field, but for
// _stream_id: the server's is a hash of the stream (one per _stream; here
// a stand-in derived from _stream, since the reader ignores it).
func toVictoriaLogs(t *testing.T, otlp []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for line := range bytes.Lines(otlp) {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(line)
		if err != nil {
			t.Fatal(err)
		}
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					f := map[string]string{}
					var stream []string
					for k, v := range rl.Resource().Attributes().All() {
						f[k] = v.AsString()
						stream = append(stream, k+"="+strconv.Quote(v.AsString()))
					}
					if ev := lr.EventName(); ev != "" {
						f["event_name"] = ev
						stream = append(stream, "event_name="+strconv.Quote(ev))
					}
					slices.Sort(stream)
					f["_stream"] = "{" + strings.Join(stream, ",") + "}"
					sum := sha256.Sum256([]byte(f["_stream"]))
					f["_stream_id"] = "0000000000000000" + hex.EncodeToString(sum[:16])
					f["scope.name"], f["scope.version"] = sl.Scope().Name(), sl.Scope().Version()
					f["severity_number"] = strconv.Itoa(int(lr.SeverityNumber()))
					f["severity_text"] = lr.SeverityText()
					f["_msg"] = lr.Body().AsString()
					for k, v := range lr.Attributes().All() {
						f[k] = v.AsString()
					}
					if id := lr.TraceID(); !id.IsEmpty() {
						f["trace_id"] = hex.EncodeToString(id[:])
					}
					if id := lr.SpanID(); !id.IsEmpty() {
						f["span_id"] = hex.EncodeToString(id[:])
					}
					f["_time"] = lr.Timestamp().AsTime().UTC().Format(time.RFC3339Nano)
					b, err := json.Marshal(f)
					if err != nil {
						t.Fatal(err)
					}
					out.Write(b)
					out.WriteByte('\n')
				}
			}
		}
	}
	return out.Bytes()
}

// TestLogCapture rewrites the committed capture with -update, and checks
// that the committed one still reads as the live run does.
func TestLogCapture(t *testing.T) {
	live := captureRun(t)
	if *update {
		if err := os.MkdirAll(filepath.Dir(logCaptureFiles.spans), 0o755); err != nil {
			t.Fatal(err)
		}
		for path, data := range map[string][]byte{logCaptureFiles.spans: live.spans, logCaptureFiles.otlp: live.otlp, logCaptureFiles.victoria: live.victoria} {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	committed := readLogCapture(t)
	for _, r := range []struct {
		name       string
		live, kept []byte
		read       func(io.Reader, string, int64) ([]model.Span, error)
	}{
		{"spans", live.spans, committed.spans, read.Stdout},
		{"otlp logs", live.otlp, committed.otlp, read.OTLP},
		{"victorialogs", live.victoria, committed.victoria, read.VictoriaLogs},
	} {
		if got, want := textReport(t, r.live, r.read), textReport(t, r.kept, r.read); got != want {
			t.Errorf("%s: the committed capture reads differently from a live run (run go test . -run TestLogCapture -update):\n--- live\n%s\n--- committed\n%s", r.name, got, want)
		}
	}
}

func readLogCapture(t *testing.T) logCapture {
	t.Helper()
	var c logCapture
	for path, dst := range map[string]*[]byte{logCaptureFiles.spans: &c.spans, logCaptureFiles.otlp: &c.otlp, logCaptureFiles.victoria: &c.victoria} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test . -run TestLogCapture -update)", err)
		}
		*dst = data
	}
	return c
}

func analyzeWith(t *testing.T, data []byte, decode func(io.Reader, string, int64) ([]model.Span, error)) *inspect.Report {
	t.Helper()
	spans, err := decode(bytes.NewReader(data), "capture", 0)
	if err != nil {
		t.Fatal(err)
	}
	return inspect.Analyze(spans)
}

func textReport(t *testing.T, data []byte, decode func(io.Reader, string, int64) ([]model.Span, error)) string {
	t.Helper()
	var b strings.Builder
	if err := render.Text(&b, analyzeWith(t, data, decode)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestLogsReadLikeSpans reads the committed capture from its spans, its
// OTLP logs and its VictoriaLogs records, and expects the same report but
// for the first line (what was counted: spans or records) and the noun
// for what holds an attempt.
func TestLogsReadLikeSpans(t *testing.T) {
	c := readLogCapture(t)
	fromSpans := textReport(t, c.spans, read.Stdout)
	_, want, _ := strings.Cut(fromSpans, "\n")
	for _, tc := range []struct {
		name   string
		data   []byte
		decode func(io.Reader, string, int64) ([]model.Span, error)
	}{
		{"otlp logs", c.otlp, read.OTLP},
		{"victorialogs", c.victoria, read.VictoriaLogs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := textReport(t, tc.data, tc.decode)
			head, got, _ := strings.Cut(text, "\n")
			if strings.ReplaceAll(got, "retry.attempt records", "attempt spans") != want {
				t.Errorf("the report from log records differs from the spans'\n--- logs\n%s\n--- spans\n%s", text, fromSpans)
			}
			if wantHead := "retryinspect: 4 operations, 6 attempts in 10 log records (4 retry.operation, 6 retry.attempt, 0 of other events; 0 duplicate deliveries)"; head != wantHead {
				t.Errorf("first line %q, want %q", head, wantHead)
			}
			r := analyzeWith(t, tc.data, tc.decode)
			if r.Input != inspect.InputLogs || len(r.Notes) != 0 {
				t.Errorf("input %q, notes %v; want %q and none", r.Input, r.Notes, inspect.InputLogs)
			}
			if s := analyzeWith(t, c.spans, read.Stdout); !slices.EqualFunc(r.Findings, s.Findings, sameFinding) {
				t.Errorf("findings %v, from the spans %v", r.Findings, s.Findings)
			}
		})
	}

	// The contract's two timelines, as the records read them.
	r := analyzeWith(t, c.victoria, read.VictoriaLogs)
	byID := map[string]inspect.Operation{}
	for _, op := range r.Operations {
		if byID[op.ID].ID == "" {
			byID[op.ID] = op
		}
	}
	type row struct {
		status              int64
		remaining, offsetMs int64
		decision            string
	}
	var rows []row
	for _, at := range byID["op-read"].Attempts {
		rows = append(rows, row{*at.StatusCode, *at.RemainingMs, *at.OffsetMs, at.Decision})
	}
	if want := []row{{503, 400, 0, "retry"}, {503, 280, 120, "retry"}, {200, 160, 240, "return"}}; !slices.Equal(rows, want) {
		t.Errorf("read timeline %v, want %v", rows, want)
	}
	if op := byID["op-read"]; op.Outcome != "return" || *op.DeadlineMs != 400 || *op.RecordedAttempts != 3 {
		t.Errorf("read operation: outcome %s, deadline %d, attempts %d", op.Outcome, *op.DeadlineMs, *op.RecordedAttempts)
	}
	w := byID["op-write"]
	if len(w.Attempts) != 1 || w.Attempts[0].Decision != "check_state" || w.Attempts[0].ErrorClass != "timeout" || w.Outcome != "check_state" {
		t.Errorf("write operation: %+v", w)
	}
	var codes []inspect.Code
	for _, f := range r.Findings {
		codes = append(codes, f.Code)
	}
	// The loop starts a trace per call: the repeat is found across them.
	if want := []inspect.Code{inspect.CodeOperationIDReused, inspect.CodeDuplicateRequestID, inspect.CodeOuterLayerResend}; !slices.Equal(codes, want) {
		t.Errorf("findings %v, want %v (the job's loop)", codes, want)
	}
}

// sameFinding compares two findings but for the noun of what holds an
// attempt.
func sameFinding(x, y inspect.Finding) bool {
	x.Seen = strings.ReplaceAll(x.Seen, "retry.attempt records", "attempt spans")
	y.Seen = strings.ReplaceAll(y.Seen, "retry.attempt records", "attempt spans")
	return x.Code == y.Code && x.OperationID == y.OperationID && x.TraceID == y.TraceID && x.SpanID == y.SpanID &&
		x.Seen == y.Seen && x.Check == y.Check
}

// vlEdit decodes VictoriaLogs lines, lets edit change, drop (nil) or add
// records, and encodes them again.
func vlEdit(t *testing.T, data []byte, edit func(rec map[string]string) []map[string]string) []byte {
	t.Helper()
	var out bytes.Buffer
	for line := range bytes.Lines(data) {
		var rec map[string]string
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		for _, r := range edit(rec) {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(append(b, '\n'))
		}
	}
	return out.Bytes()
}

// TestLogsNeedSpans: what only spans can say is a needs-spans note from
// log records, never a finding.
func TestLogsNeedSpans(t *testing.T) {
	c := readLogCapture(t)
	only := func(r *inspect.Report, id string) []inspect.Finding {
		var out []inspect.Finding
		for _, f := range slices.Concat(r.Findings, r.Notes) {
			if f.OperationID == id {
				out = append(out, f)
			}
		}
		return out
	}

	t.Run("no operation record", func(t *testing.T) {
		// The write's operation record is lost (or the operation ended
		// in a panic): its span may be lost too, or never recorded.
		data := vlEdit(t, c.victoria, func(rec map[string]string) []map[string]string {
			if rec["event_name"] == "retry.operation" && rec["retry.operation.id"] == "op-write" {
				return nil
			}
			return []map[string]string{rec}
		})
		got := only(analyzeWith(t, data, read.VictoriaLogs), "op-write")
		if len(got) != 1 || got[0].Code != inspect.CodeNeedsSpans || !strings.Contains(got[0].Seen, "without a retry.operation record") {
			t.Errorf("got %v, want one needs-spans note", got)
		}
	})

	t.Run("resent after check_state", func(t *testing.T) {
		// The write resent after its state check answered not_applied:
		// the answer is on the state_check span only.
		data := vlEdit(t, c.victoria, func(rec map[string]string) []map[string]string {
			if rec["retry.operation.id"] != "op-write" {
				return []map[string]string{rec}
			}
			if rec["event_name"] == "retry.operation" {
				rec["retry.attempts"], rec["retry.outcome"], rec["retry.reason"] = "2", "return", "response"
				rec["retry.operation.duration_ms"] = "1000" // it lasts past its resend's answer
				return []map[string]string{rec}
			}
			second := maps.Clone(rec)
			second["retry.attempt"], second["retry.request.id"], second["span_id"] = "2", "op-write/attempt-2", "5a000000000000ff"
			second["retry.remaining_ms"], second["retry.elapsed_ms"], second["retry.decision"], second["retry.reason"] = "200", "30", "return", "response"
			second["http.response.status_code"], second["_time"] = "201", "2000-01-01T00:00:00.65Z"
			delete(second, "retry.error_class")
			delete(second, "error.type")
			return []map[string]string{rec, second}
		})
		got := only(analyzeWith(t, data, read.VictoriaLogs), "op-write")
		if len(got) != 1 || got[0].Code != inspect.CodeNeedsSpans || !strings.Contains(got[0].Seen, "state check") {
			t.Errorf("got %v, want one needs-spans note (an unsafe-resend from the spans only if no state check answered not_applied)", got)
		}
	})
}

// TestLogInputs runs the command on the capture's logs: --otlp on the OTLP
// logs file, --victorialogs on a server answering /select/logsql/query
// with the VictoriaLogs records.
func TestLogInputs(t *testing.T) {
	c := readLogCapture(t)
	code, out, errOut := runOnFile(t, c.otlp)
	if code != exitFindings || errOut != "" || !strings.Contains(out, "in 10 log records") {
		t.Fatalf("logs file: exit %d, stderr %q\n%s", code, errOut, out)
	}

	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/select/logsql/query" {
			http.NotFound(w, r)
			return
		}
		query = r.URL.Query().Get("query") + " limit=" + r.URL.Query().Get("limit")
		w.Write(c.victoria)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code = run([]string{"-victorialogs", srv.URL, "-service", "checkout", "-lookback", "2h"}, &stdout, &stderr)
	if code != exitFindings || stderr.Len() > 0 || !strings.Contains(stdout.String(), "in 10 log records") {
		t.Fatalf("-victorialogs: exit %d, stderr %q\n%s", code, stderr.String(), stdout.String())
	}
	if want := `_time:7200000ms "retry.operation.id":* "service.name":="checkout" limit=5000`; query != want {
		t.Errorf("query %q, want %q", query, want)
	}
	stdout.Reset()
	code = run([]string{"-victorialogs", srv.URL, "-trace", "4B000000000000000000000000000001", "-json"}, &stdout, &stderr)
	if code != exitFindings || !strings.Contains(stdout.String(), `"input": "logs"`) {
		t.Fatalf("-victorialogs -trace: exit %d, stderr %q", code, stderr.String())
	}
	if want := `"retry.operation.id":* trace_id:"4b000000000000000000000000000001" limit=5000`; query != want {
		t.Errorf("query %q, want %q", query, want)
	}

	mixed := append(slices.Clone(c.otlp), []byte(`{"resourceSpans":[]}`+"\n")...)
	if code, _, errOut := runOnFile(t, mixed); code != exitError || !strings.Contains(errOut, "both traces") {
		t.Errorf("mixed traces and logs: exit %d, stderr %q", code, errOut)
	}
}

// errNoAnswer is a base's own timeout (a read deadline, net/http's
// ResponseHeaderTimeout): a net.Error whose Timeout is true.
var errNoAnswer error = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}

// A handler makes two creates at once under one WithOperationID (a
// fan-out): the first fails with a 500 after 0.6 ms, the second began
// 0.2 ms after the first, while it was in flight. Read from the log
// records of the run, where an operation's end is its start plus
// retry.operation.duration_ms in whole milliseconds, the first "ended" at
// its start, before the second began, and the second was reported as an
// outer layer's resend; the spans said otherwise. An end read from a
// record is known to within a millisecond now.
func TestAFanOutReadFromLogsIsNoResend(t *testing.T) {
	var spans bytes.Buffer
	logs := &otlpJSONExporter{}
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		res := resource.NewSchemaless(attribute.String("service.name", "checkout"))
		tp := spanWriter(t, &spans, sdktrace.WithResource(res))
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(logs)), sdklog.WithResource(res))
		base := scripted.New(
			scripted.Step{Delay: 600 * time.Microsecond, Status: 500},
			scripted.Step{Delay: 50 * time.Millisecond, Status: 201},
		)
		client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithLoggerProvider(lp), otelretry.WithoutClientSpans())}
		root, span := tp.Tracer("app").Start(ctx, "POST /ingest")
		job := otelretry.WithOperationID(root, "op-ingest")
		var wg sync.WaitGroup
		for i, sku := range []string{"A-1", "B-2"} {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 200 * time.Microsecond)
				req, _ := http.NewRequestWithContext(job, http.MethodPost, "http://dependency.test/orders", strings.NewReader(`{"sku":"`+sku+`"}`))
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("%s: %v", sku, err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		wg.Wait()
		span.End()
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := lp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	victoria := toVictoriaLogs(t, logs.buf.Bytes())
	for _, in := range []struct {
		name string
		r    *inspect.Report
	}{
		{"spans", analyzeWith(t, spans.Bytes(), read.Stdout)},
		{"otlp logs", analyzeWith(t, logs.buf.Bytes(), read.OTLP)},
		{"victorialogs", analyzeWith(t, victoria, read.VictoriaLogs)},
	} {
		for _, f := range in.r.Findings {
			if f.Code == inspect.CodeOuterLayerResend {
				t.Errorf("%s: a fan-out (the second create began while the first was in flight) is reported: %s", in.name, f.Seen)
			}
		}
	}
}

// A GET redirected at once (307, on virtual time: a clock that did not
// tick, as a redirect answered within a millisecond reads from the
// records) to another host, which answers 503, then 201. Both hops start
// at one instant; the first hop's attempt went to the second hop, which
// its start alone cannot tell apart, and two attempt-count-mismatch
// findings were made that the spans of the same run do not have. The
// attempts' numbers, which a later hop goes on counting, tell them apart.
func TestARedirectAtOneInstantReadsFromLogsAsFromSpans(t *testing.T) {
	var spans, logs []byte
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		tp := spanWriter(t, &out)
		exp := &otlpJSONExporter{}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
		rt := otelretry.NewTransport(scripted.New(
			redirectTo("http://b.test/y"),
			scripted.Step{Status: http.StatusServiceUnavailable},
			scripted.Step{Status: http.StatusCreated},
		), otelretry.WithTracerProvider(tp), otelretry.WithLoggerProvider(lp), otelretry.WithoutClientSpans())
		ctx, handler := tp.Tracer("app").Start(t.Context(), "handler", trace.WithSpanKind(trace.SpanKindServer))
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/x", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("%v, %v", resp, err)
		}
		resp.Body.Close()
		handler.End()
		tp.Shutdown(context.Background())
		lp.Shutdown(context.Background())
		spans, logs = out.Bytes(), exp.buf.Bytes()
	})
	fromSpans, fromLogs := analyzeWith(t, spans, read.Stdout), analyzeWith(t, logs, read.OTLP)
	if len(fromSpans.Findings) != 0 || len(fromLogs.Findings) != 0 {
		t.Errorf("findings from the spans %v, from the log records %v; want none", fromSpans.Findings, fromLogs.Findings)
	}
	var hops [][]int64
	for _, op := range fromLogs.Operations {
		var numbers []int64
		for _, at := range op.Attempts {
			numbers = append(numbers, at.Number)
		}
		hops = append(hops, numbers)
	}
	if want := [][]int64{{1}, {2, 3}}; !slices.EqualFunc(hops, want, slices.Equal) {
		t.Errorf("the hops' attempts read from the records %v, want %v", hops, want)
	}
}

// A handler creates two orders, one after the other: two POSTs of one
// URL, each answered 201, the second marked retry.operation.repeat=1 (an
// earlier operation under the same handler span). The spans give no
// finding; the log records, which carry no parent span, gave an
// outer-layer-resend "on the marker alone". They give a needs-spans note.
func TestLogsRepeatMarkerNeedsSpans(t *testing.T) {
	spans, logs := oneInstantRun(t, scripted.New(scripted.Step{Status: http.StatusCreated}), func(t *testing.T, c *http.Client, ctx context.Context) {
		for _, item := range []string{"A1", "B2"} {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":"`+item+`"}`))
			if status := do(t, c, req); status != http.StatusCreated {
				t.Fatalf("status %d", status)
			}
			time.Sleep(100 * time.Millisecond) // the handler's own work between the two creates
		}
	})
	codes := func(r *inspect.Report) (out []inspect.Code) {
		for _, f := range slices.Concat(r.Findings, r.Notes) {
			out = append(out, f.Code)
		}
		return out
	}
	if got := codes(analyzeWith(t, spans, read.Stdout)); len(got) != 0 {
		t.Fatalf("setup: the spans give %v; want nothing", got)
	}
	if got := codes(analyzeWith(t, logs, read.OTLP)); !slices.Equal(got, []inspect.Code{inspect.CodeNeedsSpans}) {
		t.Errorf("the log records of the same run give %v; want one needs-spans note", got)
	}
}

// A loop sends a failed POST again at once under one WithOperationID: an
// outer-layer-resend from the spans. The log records give each
// operation's end in whole milliseconds, so whether the second began after
// the first ended or while it was in flight (a fan-out, above), they cannot
// tell: they gave nothing, neither the finding nor a note. They give a
// needs-spans note.
func TestLogsNoteAResendWithinAMillisecond(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusBadRequest} {
		spans, logs := oneInstantRun(t, scripted.New(scripted.Step{Status: status}), func(t *testing.T, c *http.Client, ctx context.Context) {
			ctx = otelretry.WithOperationID(ctx, "order-7")
			for range 2 {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":"A1"}`))
				do(t, c, req)
			}
		})
		codes := func(r *inspect.Report) (out []inspect.Code) {
			for _, f := range slices.Concat(r.Findings, r.Notes) {
				out = append(out, f.Code)
			}
			return out
		}
		fromSpans, fromLogs := codes(analyzeWith(t, spans, read.Stdout)), codes(analyzeWith(t, logs, read.OTLP))
		if !slices.Equal(fromSpans, []inspect.Code{inspect.CodeOuterLayerResend}) || !slices.Equal(fromLogs, []inspect.Code{inspect.CodeNeedsSpans}) {
			t.Errorf("status %d: the spans give %v, the log records %v; want an outer-layer-resend, and a needs-spans note", status, fromSpans, fromLogs)
		}
	}
}
