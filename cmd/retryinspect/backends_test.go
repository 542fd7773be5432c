// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// retryinspect asks Jaeger for the traces as stored (raw_traces=true on a
// trace, query.raw_traces=true on a search): unless asked so, Jaeger
// adjusts the traces it answers, and its DeduplicateSpans drops a span
// that repeats one already seen, so a duplicate delivery, which the same
// spans read from a file report, was hidden when read from Jaeger. This
// server stands in for Jaeger holding one trace delivered twice (an
// exporter's retried batch): raw, it returns both copies; adjusted, one.
func TestJaegerReportsDuplicateDeliveriesAsAFileDoes(t *testing.T) {
	raw, err := os.ReadFile("internal/read/testdata/jaeger-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Result struct {
			ResourceSpans []json.RawMessage `json:"resourceSpans"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		t.Fatal(err)
	}
	once := answer.Result.ResourceSpans
	twice := append(append([]json.RawMessage{}, once...), once...)
	encode := func(rs []json.RawMessage, wrap bool) []byte {
		doc := map[string]any{"resourceSpans": rs}
		var v any = doc
		if wrap {
			v = map[string]any{"result": doc}
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, '\n')
	}
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.String()
		q := r.URL.Query()
		if q.Get("raw_traces") == "true" || q.Get("query.raw_traces") == "true" {
			w.Write(encode(twice, true)) // the stored spans, as delivered
			return
		}
		w.Write(encode(once, true)) // adjusted: DeduplicateSpans dropped the copies
	}))
	defer srv.Close()

	// The same stored spans, as the Collector's file exporter wrote them.
	_, fromFile, _ := runOnFile(t, encode(twice, false))

	var traceID string
	if i := bytes.Index(raw, []byte(`"traceId":"`)); i >= 0 {
		traceID = string(raw[i+len(`"traceId":"`) : i+len(`"traceId":"`)+32])
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"-jaeger", srv.URL, "-trace", traceID}, &stdout, &stderr)
	if code == exitError {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	fileHead, _, _ := strings.Cut(fromFile, "\n")
	jaegerHead, _, _ := strings.Cut(stdout.String(), "\n")
	if fileHead != jaegerHead || !strings.Contains(stdout.String(), "delivered 2 times") {
		t.Errorf("asked %s\nfrom the file:   %s\nfrom Jaeger:     %s\n(the file's report names the duplicate deliveries: %v; Jaeger's: %v)",
			asked, fileHead, jaegerHead, strings.Contains(fromFile, "delivered 2 times"), strings.Contains(stdout.String(), "delivered 2 times"))
	}
}

// -victorialogs -trace sends limit=5000 and, when the answer holds 5000
// records, tells the user to raise -limit, which -trace takes (it refused
// it before, so a trace of more records could not be read whole).
func TestVictoriaLogsTraceCutAtLimitCanBeRaised(t *testing.T) {
	c := readLogCapture(t)
	first, _, _ := bytes.Cut(c.victoria, []byte("\n"))
	var limit string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit = r.URL.Query().Get("limit")
		// As many records as asked for: the trace has more.
		w.Write(bytes.Repeat(append(first, '\n'), 5000))
	}))
	defer srv.Close()

	const trace = "4b000000000000000000000000000001"
	var stdout, stderr bytes.Buffer
	code := run([]string{"-victorialogs", srv.URL, "-trace", trace}, &stdout, &stderr)
	t.Logf("-trace: limit=%s sent, exit %d, stderr %q", limit, code, stderr.String())
	if limit == "" {
		return // the whole trace is asked for
	}
	if !strings.Contains(stderr.String(), "raise -limit") {
		t.Fatalf("the answer was cut at limit=%s and nothing says so", limit)
	}
	stdout.Reset()
	stderr.Reset()
	code = run([]string{"-victorialogs", srv.URL, "-trace", trace, "-limit", "10000"}, &stdout, &stderr)
	if code == exitError {
		t.Errorf("the advice is refused: -trace with -limit 10000: exit %d, stderr %q (the trace's records past 5000 cannot be read)", code, stderr.String())
	}
}

// A -jaeger -service search whose answer holds -limit traces may have
// been cut: it says so, as -victorialogs does of its records (it said
// nothing before).
func TestJaegerSearchCutAtLimitSaysSo(t *testing.T) {
	trace, err := os.ReadFile("internal/read/testdata/jaeger-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	var numTraces string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		numTraces = r.URL.Query().Get("query.num_traces")
		w.Write(trace) // one trace: as many as -limit 1 asked for
	}))
	defer srv.Close()

	var stdout, stderr bytes.Buffer
	code := run([]string{"-jaeger", srv.URL, "-service", "demo", "-limit", "1"}, &stdout, &stderr)
	if code == exitError {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if numTraces != "1" {
		t.Fatalf("query.num_traces=%q", numTraces)
	}
	if !strings.Contains(stderr.String(), "more may match") {
		t.Errorf("the answer holds -limit 1 trace (more may match) but nothing says so: exit %d, stderr %q\nfirst line: %s",
			code, stderr.String(), strings.SplitN(stdout.String(), "\n", 2)[0])
	}
}

// A -jaeger URL whose credential is a token in the user name (sent as
// basic authentication's): neither the report nor any message prints it,
// the report's source line included (it printed the user name, masking
// only a password).
func TestJaegerUserNameTokenIsNotPrinted(t *testing.T) {
	raw, err := os.ReadFile("internal/read/testdata/jaeger-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	var sentAuth bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _, sentAuth = r.BasicAuth()
		w.Write(raw)
	}))
	defer srv.Close()
	const token = "glpat-USERTOKENSECRET12"
	html := filepath.Join(t.TempDir(), "r.html")
	var stdout, stderr bytes.Buffer
	run([]string{"-jaeger", strings.Replace(srv.URL, "://", "://"+token+"@", 1), "-service", "demo", "-html", html}, &stdout, &stderr)
	page, err := os.ReadFile(html)
	if err != nil || !sentAuth {
		t.Fatalf("no report (%v) or no basic authentication sent (%v): %s", err, sentAuth, stderr.String())
	}
	for name, out := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String(), "html": string(page)} {
		if strings.Contains(out, "USERTOKENSECRET") {
			t.Errorf("%s prints the URL's user name, a token", name)
		}
	}
	if !strings.Contains(string(page), "REDACTED:REDACTED@127.0.0.1") {
		t.Errorf("the report does not name the source with its userinfo masked")
	}
}
