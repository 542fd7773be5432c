// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
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
		{"clean", []string{"--stdout", clean}, exitClean, "findings: none", ""},
		{"clean json", []string{"--stdout", clean, "--json"}, exitClean, `"findings": []`, ""},
		{"findings", []string{"--stdout", findings}, exitFindings, "[status-and-error-class]", ""},
		{"help", []string{"-h"}, exitClean, "Usage:", ""},
		{"help long", []string{"--help"}, exitClean, "--jaeger URL --trace ID", ""},
		{"no input", nil, exitError, "", "give exactly one input"},
		{"two inputs", []string{"--stdout", clean, "--otlp", clean}, exitError, "", "give exactly one input"},
		{"unknown flag", []string{"--stdout", clean, "--color"}, exitError, "", "flag provided but not defined: -color"},
		{"positional", []string{"--stdout", clean, "extra"}, exitError, "", `unexpected argument "extra"`},
		{"empty name", []string{"--otlp", ""}, exitError, "", "input file name is empty"},
		{"service without jaeger", []string{"--stdout", clean, "--service", "demo"}, exitError, "", "--service applies to --jaeger and --victorialogs only"},
		{"jaeger without service", []string{"--jaeger", noJaeger}, exitError, "", "--jaeger needs --service NAME or --trace ID"},
		{"jaeger both", []string{"--jaeger", noJaeger, "--service", "s", "--trace", "ab"}, exitError, "", "exclude each other"},
		{"trace with lookback", []string{"--jaeger", noJaeger, "--trace", "ab", "--lookback", "2h"}, exitError, "", "apply to --service searches only"},
		{"bad trace id", []string{"--jaeger", noJaeger, "--trace", "not-hex"}, exitError, "", `--trace "not-hex" is not a hex trace id`},
		{"bad lookback", []string{"--jaeger", noJaeger, "--service", "s", "--lookback", "soon"}, exitError, "", `lookback "soon"`},
		{"bad endpoint", []string{"--jaeger", "localhost:16686", "--service", "s"}, exitError, "", "want an http(s) URL"},
		{"missing file", []string{"--stdout", filepath.Join(t.TempDir(), "nope.json")}, exitError, "", "no such file or directory"},
		{"malformed file", []string{"--stdout", malformed}, exitError, "", malformed + ":2:15: invalid character '}'"},
		{"wrong format", []string{"--otlp", clean}, exitError, "", clean + ":1:1: not an OTLP trace request"},
		{"empty file", []string{"--stdout", empty}, exitError, "", "no spans in " + empty},
		{"jaeger unreachable", []string{"--jaeger", noJaeger, "--service", "demo", "--timeout", "2s"}, exitError, "", "cannot reach jaeger at " + noJaeger},
		{"jaeger no traces", []string{"--jaeger", emptyJaeger, "--service", "demo", "--lookback", "30m"}, exitError, "", `no spans in jaeger at ` + emptyJaeger + ` for service "demo" in the last 30m`},
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
	if code := c.run([]string{"--stdout", "-"}); code != exitClean {
		t.Fatalf("exit %d; stderr %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "op-write/attempt-1  timeout") {
		t.Errorf("unexpected output:\n%s", out.String())
	}

	c.stdin = strings.NewReader("")
	if code := c.run([]string{"--stdout", "-"}); code != exitError || !strings.Contains(errOut.String(), "no spans in stdin") {
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
		if line = strings.TrimSpace(line); line != "" && line != "Flags:" && !bytes.Contains(doc, []byte(line)) {
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
