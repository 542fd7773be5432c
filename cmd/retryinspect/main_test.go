// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

func stdoutFile(t *testing.T, roots ...tracefixture.Span) string {
	t.Helper()
	var buf bytes.Buffer
	if err := tracefixture.WriteStdout(&buf, false, roots...); err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, buf.String())
}

func caseNamed(tb testing.TB, name string) goldenCase {
	for _, tc := range goldenCases() {
		if tc.name == name {
			return tc
		}
	}
	tb.Fatalf("no golden case %q", name)
	return goldenCase{}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// closedPort returns the URL of a 127.0.0.1 port nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

func TestExitStatus(t *testing.T) {
	clean := stdoutFile(t, readTimeline())
	findings := stdoutFile(t, caseNamed(t, "status-and-error-class").roots...)
	empty := writeTemp(t, "\n")
	malformed := writeTemp(t, "{\"Name\": \"x\",\n  \"SpanKind\": }\n")
	noJaeger := closedPort(t)
	emptyJaeger := jaegerAnswer(t, http.StatusNotFound, `{"error":{"httpCode":404,"message":"No traces found"}}`).URL

	for _, tc := range []struct {
		name       string
		args       []string
		want       int
		wantStdout string // substring
		wantStderr string // substring; "" means stderr must be empty
	}{
		{"clean", []string{clean}, exitClean, "findings: none", ""},
		{"clean json", []string{clean, "-json"}, exitClean, `"findings": []`, ""},
		{"flags after the file", []string{clean, "-json", "-strict"}, exitClean, `"findings": []`, ""},
		{"findings", []string{findings}, exitFindings, "[status-and-error-class]", ""},
		{"help", []string{"-h"}, exitClean, "Usage:", ""},
		{"help long", []string{"--help"}, exitClean, "-jaeger URL -trace ID", ""},
		{"no input", nil, exitError, "", "give one input"},
		{"file and jaeger", []string{clean, "-jaeger", noJaeger, "-service", "s"}, exitError, "", "give one input"},
		{"unknown flag", []string{clean, "-color"}, exitError, "", "flag provided but not defined: -color"},
		{"stdin twice", []string{"-", "-"}, exitError, "", "standard input (-) can be read once"},
		{"empty name", []string{""}, exitError, "", "input file name is empty"},
		{"bad format", []string{"-format", "yaml", clean}, exitError, "", `-format "yaml": want one of [auto stdouttrace otlp jaeger]`},
		{"format without file", []string{"-format", "otlp", "-jaeger", noJaeger, "-service", "s"}, exitError, "", "-format applies to FILE arguments only"},
		{"service without jaeger", []string{clean, "-service", "demo"}, exitError, "", "-service applies to -jaeger and -victorialogs only"},
		{"jaeger without service", []string{"-jaeger", noJaeger}, exitError, "", "-jaeger needs -service NAME or -trace ID"},
		{"jaeger both", []string{"-jaeger", noJaeger, "-service", "s", "-trace", "ab"}, exitError, "", "exclude each other"},
		{"trace with lookback", []string{"-jaeger", noJaeger, "-trace", "ab", "-lookback", "2h"}, exitError, "", "apply to -service searches only"},
		{"bad limit", []string{"-jaeger", noJaeger, "-service", "s", "-limit", "0"}, exitError, "", "-limit must be positive"},
		{"bad trace id", []string{"-jaeger", noJaeger, "-trace", "not-hex"}, exitError, "", `-trace "not-hex" is not a hex trace id`},
		{"bad lookback", []string{"-jaeger", noJaeger, "-service", "s", "-lookback", "soon"}, exitError, "", `lookback "soon"`},
		{"bad endpoint", []string{"-jaeger", "localhost:16686", "-service", "s"}, exitError, "", "want an http(s) URL"},
		{"missing file", []string{filepath.Join(t.TempDir(), "nope.json")}, exitError, "", "no such file or directory"},
		{"malformed file", []string{malformed}, exitError, "", malformed + ":2:15: invalid character '}'"},
		{"wrong format", []string{"-format", "otlp", clean}, exitError, "", clean + ":1:1: not an OTLP trace request"},
		{"empty file", []string{empty}, exitError, "", "no spans in " + empty},
		{"jaeger unreachable", []string{"-jaeger", noJaeger, "-service", "demo", "-timeout", "2s"}, exitError, "", "cannot reach jaeger at " + noJaeger},
		{"jaeger no traces", []string{"-jaeger", emptyJaeger, "-service", "demo", "-lookback", "30m"}, exitError, "", `no spans in jaeger at ` + emptyJaeger + ` for service "demo" in the last 30m`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tc.args, &out, &errOut)
			if code != tc.want {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.want, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), tc.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantStdout, out.String())
			}
			if tc.wantStderr == "" && errOut.Len() > 0 || !strings.Contains(errOut.String(), tc.wantStderr) {
				t.Errorf("stderr %q, want %q", errOut.String(), tc.wantStderr)
			}
		})
	}
}

func TestStdin(t *testing.T) {
	var in bytes.Buffer
	if err := tracefixture.WriteStdout(&in, true, writeTimeout()); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	c := &command{stdin: &in, stdout: &out, stderr: &errOut, now: time.Now}
	if code := c.run([]string{"-"}); code != exitClean {
		t.Fatalf("exit %d; stderr %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "op-write/attempt-1  timeout") {
		t.Errorf("unexpected output:\n%s", out.String())
	}

	c.stdin = strings.NewReader("")
	if code := c.run([]string{"-"}); code != exitError || !strings.Contains(errOut.String(), "no spans in stdin") {
		t.Errorf("empty stdin: exit %d, stderr %s", code, errOut.String())
	}
}

// TestDocListsEveryCode keeps doc.go, the command's reference, in step
// with the codes the inspector emits.
func TestDocListsEveryCode(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(inspect.Codes(), inspect.NoteCodes()...) {
		if !bytes.Contains(doc, []byte("//\t"+string(c)+" ")) {
			t.Errorf("doc.go does not describe %s", c)
		}
	}
	for line := range strings.SplitSeq(usageHead, "\n") {
		if line = strings.TrimSpace(line); line != "" && strings.HasPrefix(line, "retryinspect ") && !bytes.Contains(doc, []byte(line)) {
			t.Errorf("doc.go does not repeat the usage line %q", line)
		}
	}
	example, err := os.ReadFile(filepath.Join("testdata", "golden", "clean-client-spans.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(example)), "\n") {
		if line != "" && !bytes.Contains(doc, []byte("//\t"+line+"\n")) {
			t.Errorf("the example in doc.go differs from testdata/golden/clean-client-spans.txt at %q", line)
		}
	}
}

// TestFileArguments: files are plain arguments, each read as what its
// content is (stdouttrace JSON, OTLP traces or logs) unless -format names
// it; several files are read as one input, of spans or of log records.
func TestFileArguments(t *testing.T) {
	read := stdoutFile(t, readTimeline())
	otlpRead := writeTemp(t, otlpOf(t, readTimeline()))
	// The write in trace 2, as OTLP: the read is trace 1 of the other file.
	otlpWrite := writeTemp(t, strings.SplitAfter(otlpOf(t, readTimeline(), writeTimeout()), "\n")[1])
	logs := filepath.Join("testdata", "logs", "capture-logs.jsonl")
	for _, tc := range []struct {
		name string
		args []string
		want []string // operation ids, in the report's order
		err  string
	}{
		{name: "stdouttrace", args: []string{read}, want: []string{"op-read"}},
		{name: "OTLP traces", args: []string{otlpRead}, want: []string{"op-read"}},
		{name: "OTLP traces, named", args: []string{"-format", "otlp", otlpRead}, want: []string{"op-read"}},
		{name: "OTLP logs", args: []string{logs}, want: []string{"op-read", "op-write", "op-pay", "op-pay"}},
		{name: "two files of two formats", args: []string{otlpWrite, read}, want: []string{"op-read", "op-write"}},
		{name: "after --", args: []string{"-strict", "--", read}, want: []string{"op-read"}},
		{name: "named wrongly", args: []string{"-format", "stdouttrace", otlpRead}, err: otlpRead + ":1:1: not a stdouttrace span"},
		{name: "spans and logs", args: []string{read, logs}, err: logs + " holds log records and " + read + " spans"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run3(append([]string{"-json"}, tc.args...))
			if tc.err != "" {
				if code != exitError || !strings.Contains(errOut, tc.err) {
					t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.err)
				}
				return
			}
			var r inspect.Report
			if err := json.Unmarshal([]byte(out), &r); err != nil || errOut != "" {
				t.Fatalf("exit %d, stderr %q, %v", code, errOut, err)
			}
			var ids []string
			for _, op := range r.Operations {
				ids = append(ids, op.ID)
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("operations %q, want %q", ids, tc.want)
			}
		})
	}
}

// TestDeprecatedFlags: -stdout FILE and -otlp FILE, the flags of v0.3,
// still read their file, in their format, as a FILE argument does, and
// say once on stderr that they are deprecated.
func TestDeprecatedFlags(t *testing.T) {
	spans := stdoutFile(t, readTimeline())
	otlp := writeTemp(t, otlpOf(t, readTimeline()))
	copied := writeTemp(t, otlpOf(t, readTimeline())) // the same spans, another file
	for _, tc := range []struct {
		old  []string
		file string
	}{
		{[]string{"--stdout", spans}, spans},
		{[]string{"-stdout", spans, "-html", "-"}, spans},
		{[]string{"--otlp", otlp, "--json"}, otlp},
		{[]string{"-otlp", otlp, "-otlp", copied}, otlp},
	} {
		code, out, errOut := run3(tc.old)
		rest := slices.DeleteFunc(slices.Clone(tc.old[2:]), func(a string) bool { return a == "-otlp" || a == otlp || a == copied })
		wantCode, want, _ := run3(append(rest, tc.file))
		if tc.old[0] == "-otlp" { // the spans twice: every operation twice
			wantCode, want, _ = run3([]string{otlp, copied})
		}
		flagName := strings.TrimLeft(tc.old[0], "-")
		notice := "retryinspect: -" + flagName + " FILE is deprecated and will be removed in the next release: give the file as an argument (retryinspect FILE)\n"
		if code != wantCode || out != want || errOut != notice {
			t.Errorf("%q: exit %d (want %d), stdout equal %v, stderr %q; want the notice %q", tc.old, code, wantCode, out == want, errOut, notice)
		}
	}
	if _, _, errOut := run3([]string{"-otlp", otlp, "-format", "stdouttrace"}); !strings.Contains(errOut, "-format applies to FILE arguments only") {
		t.Errorf("-otlp with -format: stderr %q", errOut)
	}
}

// TestHelpPrintsEachDefaultOnce: -h lists every flag once, and each
// default once, in the flag's own entry (the usage lines hold none).
func TestHelpPrintsEachDefaultOnce(t *testing.T) {
	code, out, _ := run3([]string{"-h"})
	if code != exitClean {
		t.Fatalf("exit %d", code)
	}
	head, flags, ok := strings.Cut(out, "\nInput ")
	if !ok {
		t.Fatalf("no flag list:\n%s", out)
	}
	if strings.Contains(head, "default") || strings.Contains(head, "64MiB") || strings.Contains(head, "1h") {
		t.Errorf("the usage lines print defaults:\n%s", head)
	}
	entries := map[string]string{}
	var name string
	for line := range strings.Lines(flags) {
		if f, ok := strings.CutPrefix(line, "  -"); ok {
			name, _, _ = strings.Cut(strings.TrimSpace(f), " ")
			if _, dup := entries[name]; dup {
				t.Errorf("-%s is listed twice", name)
			}
		}
		entries[name] += line
	}
	fs := 0
	for _, g := range flagGroups {
		fs += len(g.names)
	}
	if len(entries) != fs+1 { // and the group title before the first flag
		t.Errorf("%d entries, want %d flags", len(entries)-1, fs)
	}
	for name, e := range entries {
		if n := strings.Count(e, "default"); n > 1 {
			t.Errorf("-%s prints %d defaults:\n%s", name, n, e)
		}
	}
	for name, want := range map[string]string{"limit": "(default 100 traces, 5000 records)", "max-bytes": "(default 64MiB)", "lookback": "(default 1h)", "format": "(default auto)"} {
		if !strings.Contains(entries[name], want) {
			t.Errorf("-%s does not say %q:\n%s", name, want, entries[name])
		}
	}
}

// TestOutputFile: -o writes the text or JSON report to a file, with the
// same exit status; the HTML page may then go to stdout.
func TestOutputFile(t *testing.T) {
	spans := stdoutFile(t, caseNamed(t, "unsafe-resend").roots...)
	_, text, _ := run3([]string{spans})
	_, jsonOut, _ := run3([]string{spans, "-json"})
	report := filepath.Join(t.TempDir(), "report.txt")
	for _, tc := range []struct {
		args  []string
		file  string // what the file holds
		inOut string // what stdout holds
	}{
		{[]string{spans, "-o", report}, text, ""},
		{[]string{spans, "-json", "-o", report}, jsonOut, ""},
		{[]string{spans, "-json", "-o", report, "-html", "-"}, jsonOut, "<!DOCTYPE html>"},
	} {
		code, out, errOut := run3(tc.args)
		got, err := os.ReadFile(report)
		if code != exitFindings || errOut != "" || err != nil || string(got) != tc.file || !strings.HasPrefix(out, tc.inOut) || tc.inOut == "" && out != "" {
			t.Errorf("%q: exit %d, stderr %q, file %v %d bytes, stdout %.40q", tc.args, code, errOut, err, len(got), out)
		}
	}
	// Another spelling of a file, or a link to it, is the same file: a
	// second output would replace the first, and an output written over an
	// input would leave no trace to read again.
	link := filepath.Join(t.TempDir(), "link.txt")
	spansLink := filepath.Join(t.TempDir(), "spans-link.json")
	if err := errors.Join(os.Symlink(report, link), os.Symlink(spans, spansLink)); err != nil {
		t.Fatal(err)
	}
	input, err := os.ReadFile(spans)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{spans, "-o", ""}, "the -o file name is empty"},
		{[]string{spans, "-o", report, "-html", report}, "-html and -o name the same file"},
		{[]string{spans, "-o", report, "-html", filepath.Dir(report) + "/./x/../report.txt"}, "-html and -o name the same file"},
		{[]string{spans, "-o", report, "-html", link}, "-html and -o name the same file"},
		{[]string{spans, "-o", spans}, "-o names the input file"},
		{[]string{spans, "-html", filepath.Dir(spans) + "/./" + filepath.Base(spans)}, "-html names the input file"},
		{[]string{spans, "-o", spansLink}, "-o names the input file"},
		{[]string{spans, "-o", filepath.Join(t.TempDir(), "no", "dir.txt")}, "writing the report: "},
	} {
		if code, _, errOut := run3(tc.args); code != exitError || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if after, err := os.ReadFile(spans); err != nil || !bytes.Equal(after, input) {
		t.Errorf("the input file was written over: %v, %.60q", err, after)
	}
}

// otlpOf writes roots as OTLP JSON lines, one trace per line.
func otlpOf(t *testing.T, roots ...tracefixture.Span) string {
	t.Helper()
	var buf bytes.Buffer
	if err := tracefixture.WriteOTLP(&buf, roots...); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// "--" ends the flags only where a flag could be: as a flag's value
// (-o --) it is that value, and a flag after the next file is still a
// flag (it was read as a file: a reviewer's find).
func TestADoubleDashAsAFlagsValueIsNoTerminator(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		files []string
		out   string
		json  bool
	}{
		{args: []string{"-o", "--", "in.json", "-json"}, files: []string{"in.json"}, out: "--", json: true},
		{args: []string{"-o=--", "in.json", "-json"}, files: []string{"in.json"}, out: "--", json: true},
		{args: []string{"-json", "--", "in.json", "-o"}, files: []string{"in.json", "-o"}, json: true},
		{args: []string{"-o", "-o", "--", "in.json", "-json"}, files: []string{"in.json", "-json"}, out: "-o"},
		{args: []string{"in.json", "--o", "--", "-json"}, files: []string{"in.json"}, out: "--", json: true},
	} {
		fs := flag.NewFlagSet("retryinspect", flag.ContinueOnError)
		out := fs.String("o", "", "")
		json := fs.Bool("json", false, "")
		files, err := parseInterspersed(fs, tc.args)
		if err != nil || !slices.Equal(files, tc.files) || *out != tc.out || *json != tc.json {
			t.Errorf("%q: files %q, -o %q, -json %v, %v; want %q, %q, %v", tc.args, files, *out, *json, err, tc.files, tc.out, tc.json)
		}
	}
}
