// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

var update = flag.Bool("update", false, "rewrite the committed files the tests compare with: testdata/golden, testdata/logs and internal/readfuzz/testdata/seeds")

// inspectStdout writes roots through the real stdouttrace exporter into a
// file and runs the command on it.
func inspectStdout(t *testing.T, roots []tracefixture.Span, pretty bool, extra ...string) (code int, stdout, stderr string) {
	t.Helper()
	var buf bytes.Buffer
	if err := tracefixture.WriteStdout(&buf, pretty, roots...); err != nil {
		t.Fatal(err)
	}
	return runOnFile(t, buf.Bytes(), extra...)
}

// runOnFile writes data into a file and runs the command on it, with the
// flags extra.
func runOnFile(t *testing.T, data []byte, extra ...string) (code int, stdout, stderr string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spans.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code = run(append(extra, path), &out, &errOut)
	return code, out.String(), errOut.String()
}

func compareGolden(t *testing.T, name string, got string) {
	t.Helper()
	compareFile(t, filepath.Join("testdata", "golden", name), got)
}

// compareFile compares got with the committed file at path, or rewrites
// the file under -update.
func compareFile(t *testing.T, path string, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			wantCode := exitClean
			if len(tc.want) > 0 {
				wantCode = exitFindings
			}
			code, out, errOut := inspectStdout(t, tc.roots, false)
			if code != wantCode || errOut != "" {
				t.Fatalf("exit %d, want %d; stderr: %s", code, wantCode, errOut)
			}
			compareGolden(t, tc.name+".txt", out)

			code, out, _ = inspectStdout(t, tc.roots, false, "-json")
			if code != wantCode {
				t.Fatalf("-json: exit %d, want %d", code, wantCode)
			}
			var report inspect.Report
			if err := json.Unmarshal([]byte(out), &report); err != nil {
				t.Fatalf("-json output does not parse: %v", err)
			}
			var codes []inspect.Code
			for _, f := range report.Findings {
				if !slices.Contains(codes, f.Code) {
					codes = append(codes, f.Code)
				}
				if f.Seen == "" || f.Check == "" {
					t.Errorf("finding %s lacks what was seen or what to check", f.Code)
				}
			}
			want := slices.Clone(tc.want)
			slices.Sort(codes)
			slices.Sort(want)
			if !slices.Equal(codes, want) {
				t.Errorf("finding codes %v, want %v", codes, tc.want)
			}
			var notes []inspect.Code
			for _, n := range report.Notes {
				if !slices.Contains(notes, n.Code) {
					notes = append(notes, n.Code)
				}
				if n.Seen == "" || n.Check == "" || n.Count < 1 {
					t.Errorf("note %s lacks what was seen, what to check or its count", n.Code)
				}
			}
			wantNotes := slices.Clone(tc.notes)
			slices.Sort(notes)
			slices.Sort(wantNotes)
			if !slices.Equal(notes, wantNotes) {
				t.Errorf("note codes %v, want %v", notes, tc.notes)
			}
			// --strict fails on notes as on findings.
			wantStrict := wantCode
			if len(tc.notes) > 0 {
				wantStrict = exitFindings
			}
			if code, _, _ = inspectStdout(t, tc.roots, false, "-strict"); code != wantStrict {
				t.Errorf("-strict: exit %d, want %d", code, wantStrict)
			}
			if tc.json {
				compareGolden(t, tc.name+".json", out)
			}
		})
	}
}

// TestGoldenCasesCoverEveryCode keeps the crafted sets honest: each finding
// and note code is raised by at least one of them.
func TestGoldenCasesCoverEveryCode(t *testing.T) {
	var raised []inspect.Code
	for _, tc := range goldenCases() {
		raised = append(append(raised, tc.want...), tc.notes...)
	}
	for _, c := range append(inspect.Codes(), inspect.NoteCodes()...) {
		if c == inspect.CodeNeedsSpans {
			continue // log records only: TestLogsNeedSpans
		}
		if !slices.Contains(raised, c) {
			t.Errorf("no golden case raises %s", c)
		}
	}
}

// TestFormatsAgree reads every crafted set in the three formats (stdouttrace
// compact and pretty-printed, OTLP JSON, the Jaeger API) and expects the
// same report.
func TestFormatsAgree(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			_, want, _ := inspectStdout(t, tc.roots, false)

			_, pretty, _ := inspectStdout(t, tc.roots, true)
			if pretty != want {
				t.Errorf("pretty-printed stdouttrace differs:\n%s", pretty)
			}

			var otlp bytes.Buffer
			if err := tracefixture.WriteOTLP(&otlp, tc.roots...); err != nil {
				t.Fatal(err)
			}
			if _, got, errOut := runOnFile(t, otlp.Bytes()); got != want {
				t.Errorf("OTLP differs (stderr %q):\n%s", errOut, got)
			}

			var jaeger bytes.Buffer
			if err := tracefixture.WriteJaeger(&jaeger, tc.roots...); err != nil {
				t.Fatal(err)
			}
			srv := jaegerServer(t, jaeger.Bytes())
			var out, errOut bytes.Buffer
			run([]string{"-jaeger", srv.URL, "-service", tracefixture.ServiceName}, &out, &errOut)
			if out.String() != want {
				t.Errorf("Jaeger differs (stderr %q):\n%s", errOut.String(), out.String())
			}
		})
	}
}

// jaegerServer serves body on /api/v3/traces from 127.0.0.1.
func jaegerServer(t *testing.T, body []byte) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v3/traces" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// jaegerAnswer answers every request with status and body, as Jaeger's
// /api/v3 gateway writes its errors.
func jaegerAnswer(t *testing.T, status int, body string) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, body, status)
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// TestRealCapturesReport runs the command on the real captures of the
// demo's traffic (internal/read/testdata, see its README): the Collector's
// file output, Jaeger's /api/v3 answer and its /api/traces answer saved
// to a file give the same report, and the
// demo's traffic raises no finding and no note.
func TestRealCapturesReport(t *testing.T) {
	dir := filepath.Join("internal", "read", "testdata")
	var otlp, otlpErr bytes.Buffer
	if code := run([]string{filepath.Join(dir, "collector-demo.jsonl"), "-strict"}, &otlp, &otlpErr); code != exitClean {
		t.Fatalf("collector file: exit %d, stderr %q\n%s", code, otlpErr.String(), otlp.String())
	}
	body, err := os.ReadFile(filepath.Join(dir, "jaeger-search.json"))
	if err != nil {
		t.Fatal(err)
	}
	var jaeger, jaegerErr bytes.Buffer
	if code := run([]string{"-jaeger", jaegerServer(t, body).URL, "-service", "demo", "-strict"}, &jaeger, &jaegerErr); code != exitClean {
		t.Fatalf("-jaeger: exit %d, stderr %q\n%s", code, jaegerErr.String(), jaeger.String())
	}
	if jaeger.String() != otlp.String() {
		t.Errorf("reports differ:\n--- jaeger\n%s\n--- collector file\n%s", jaeger.String(), otlp.String())
	}
	// The same search saved from Jaeger's /api/traces, the Jaeger UI's
	// API, given as a file: told from its content.
	var ui, uiErr bytes.Buffer
	if code := run([]string{filepath.Join(dir, "jaeger-ui-search.json"), "-strict"}, &ui, &uiErr); code != exitClean {
		t.Fatalf("/api/traces file: exit %d, stderr %q\n%s", code, uiErr.String(), ui.String())
	}
	if ui.String() != otlp.String() {
		t.Errorf("reports differ:\n--- /api/traces file\n%s\n--- collector file\n%s", ui.String(), otlp.String())
	}
	if !strings.Contains(otlp.String(), "findings: none") || strings.Contains(otlp.String(), "\nnotes:") {
		t.Errorf("the demo's traffic is not clean:\n%s", otlp.String())
	}
}
