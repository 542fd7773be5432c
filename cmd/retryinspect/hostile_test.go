// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// Inputs an adversary would craft, run through the whole command. Each
// test here failed before the command handled its case; the output it
// gave then is in the closing note of the retryinspect work.

// TestJSONAgreesWithText: every timestamp that is read can be written in
// the JSON report, so --json exits as the text report does. OTLP's largest
// timestamp (year 2554, beyond int64 nanoseconds) reads without wrapping.
func TestJSONAgreesWithText(t *testing.T) {
	const in = `{"resourceSpans":[{"scopeSpans":[{"spans":[` +
		`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"retry GET",` +
		`"startTimeUnixNano":"18446744073709551615","endTimeUnixNano":"18446744073709551615","attributes":[` +
		`{"key":"retry.operation.id","value":{"stringValue":"op"}},{"key":"retry.outcome","value":{"stringValue":"return"}},` +
		`{"key":"retry.attempts","value":{"intValue":"0"}}]}]}]}]}`
	textCode, text, textErr := runOnFile(t, []byte(in))
	jsonCode, out, jsonErr := runOnFile(t, []byte(in), "-json")
	if textCode != jsonCode || textErr != "" || jsonErr != "" {
		t.Fatalf("text exits %d (%q), --json exits %d (%q)", textCode, textErr, jsonCode, jsonErr)
	}
	var report inspect.Report
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatal(err)
	}
	if y := report.Operations[0].Start.Year(); y != 2554 || !strings.Contains(text, "start 2554-07-21") {
		t.Errorf("start year %d; text:\n%s", y, text)
	}
}

// TestSizeLimit: /dev/zero and oversized files stop at the limit, which
// --max-bytes sets.
func TestSizeLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /dev/zero")
	}
	code, _, stderr := run3([]string{"-format", "otlp", "/dev/zero", "-max-bytes", "1MiB"})
	if code != exitError || stderr != "retryinspect: /dev/zero: larger than the limit of 1MiB (raise it with -max-bytes)\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	// The default limit holds too.
	code, _, stderr = run3([]string{"/dev/zero"})
	if code != exitError || !strings.Contains(stderr, "larger than the limit of 64MiB") {
		t.Errorf("default limit: exit %d, stderr %q", code, stderr)
	}
	clean := stdoutFile(t, readTimeline())
	info, err := os.Stat(clean)
	if err != nil {
		t.Fatal(err)
	}
	code, _, _ = run3([]string{clean, "-max-bytes", "1000"})
	if info.Size() <= 1000 || code != exitError {
		t.Errorf("a %d-byte file under -max-bytes 1000: exit %d", info.Size(), code)
	}
	for _, bad := range []string{"0", "-1", "1MB", "lots"} {
		if code, _, stderr := run3([]string{clean, "-max-bytes", bad}); code != exitError || !strings.Contains(stderr, "-max-bytes: size") {
			t.Errorf("-max-bytes %s: exit %d, stderr %q", bad, code, stderr)
		}
	}
}

// TestControlCharactersEscaped: ids and error classes holding escape
// sequences and line breaks cannot forge report lines or drive the
// terminal.
func TestControlCharactersEscaped(t *testing.T) {
	const forged = "\x1b[2J\r\nfindings: none\x1b[31m\u202e"
	id := "op" + forged
	items := endpoint("/items")
	roots := []tracefixture.Span{op{id: id, method: "GET", url: items, outcome: attrs.OutcomeReturn, attempts: 1, budget: 400, end: 51, children: children(
		try{opID: id, requestID: "req" + forged, n: 1, method: "GET", url: items, status: 200, elapsed: 50, remaining: 400, decision: attrs.DecisionReturn,
			reason: attrs.Reason("response" + forged),
			extra:  []attribute.KeyValue{attrs.ErrorClassKey.String("timeout" + forged)}}.span())}.span()}
	code, out, stderr := inspectStdout(t, roots, false)
	if code != exitFindings || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for i := 0; i < len(out); i++ {
		if c := out[i]; (c < 0x20 && c != '\n') || c == 0x7f {
			t.Fatalf("output holds control byte %#x at %d:\n%s", c, i, out)
		}
	}
	if strings.Contains(out, "\u202e") {
		t.Error("output holds a bidirectional override")
	}
	if strings.Contains(out, "\nfindings: none") {
		t.Errorf("a forged line reached the report:\n%s", out)
	}
	if !strings.Contains(out, `op\x1b[2J\r\nfindings: none\x1b[31m\u202e`) {
		t.Errorf("the id is not shown escaped:\n%s", out)
	}
}

// TestErrorsEscapedOnStderr: an error that quotes the input (a malformed
// stdouttrace attribute's key, Jaeger's error message) reaches stderr
// escaped and sanitized as the report is: before, the key's escape
// sequences cleared the screen, forged a "findings: none" line and
// repeated a password.
func TestErrorsEscapedOnStderr(t *testing.T) {
	const forged = "\x1b[2J\x1b]0;pwned\a\r\nretryinspect: findings: none http://alice:pw-secret@h/"
	key, _ := json.Marshal("k" + forged)
	in := `{"Name":"x","SpanContext":{"TraceID":"0102030405060708090a0b0c0d0e0f10","SpanID":"0102030405060708"},` +
		`"Attributes":[{"Key":` + string(key) + `,"Value":{"Type":"INT64","Value":"zz"}}]}` + "\n"
	code, stdout, stderr := runOnFile(t, []byte(in))
	checkOneSafeErrorLine(t, "a malformed attribute", code, stdout+stderr)

	message, _ := json.Marshal("boom" + forged)
	for _, status := range []int{http.StatusOK, http.StatusInternalServerError} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(`{"error":{"httpCode":500,"message":` + string(message) + `}}`))
		}))
		code, stdout, stderr := run3([]string{"-jaeger", srv.URL, "-trace", "0102030405060708090a0b0c0d0e0f10", "-timeout", "5s"})
		srv.Close()
		checkOneSafeErrorLine(t, fmt.Sprintf("Jaeger's error answered with %d", status), code, stdout+stderr)
	}
}

// TestErrorsNameTheFilesAsGiven: the paths the user gave are printed as
// given on stderr, though the rest of the line is sanitized: redact.Text
// reads "snap-10:30@prod/" as a URL's userinfo, and an error about such a
// file named no file.
func TestErrorsNameTheFilesAsGiven(t *testing.T) {
	for _, dir := range []string{"snap-10:30@prod", "bob:traces@2024", "x?token=abc"} {
		d := filepath.Join(t.TempDir(), dir)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(d, "spans.json")
		if err := os.WriteFile(path, []byte("{not json\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{path, filepath.Join(d, "missing.json")} {
			code, _, stderr := run3([]string{name})
			if code != exitError || !strings.Contains(stderr, name) {
				t.Errorf("exit %d; stderr does not name the file %q:\n%s", code, name, stderr)
			}
		}
	}
}

// redactAllBut keeps a path where the message names one, and redacts
// all else: a path that is a number is not taken for a part of another
// (marks set the paths aside before, and a file named 0 matched the mark
// of the first, which was lost), and a path that a URL of the input
// holds (":", "@h", "=") does not split that URL out of redact.Text's
// reach.
func TestRedactAllButKeepsOnlyPathsNamed(t *testing.T) {
	const missing = "open /tmp/x/missing.json: no such file or directory"
	if got := redactAllBut(missing, []string{"/tmp/x/missing.json", "0"}); got != missing {
		t.Errorf("redactAllBut(%q) = %q, want it unchanged", missing, got)
	}
	const quoted = `spans.json: key "k http://alice:pw-secret@h/?token=SECRETVAL"`
	for _, path := range []string{":", "@h", "=", "h/?token", "spans.json"} {
		got := redactAllBut(quoted, []string{"spans.json", path})
		if strings.Contains(got, "pw-secret") || strings.Contains(got, "SECRETVAL") || !strings.HasPrefix(got, "spans.json: ") {
			t.Errorf("path %q kept: %q", path, got)
		}
	}
}

// checkOneSafeErrorLine checks that a failed run printed one line, with
// no control byte and no secret of the input.
func checkOneSafeErrorLine(t *testing.T, what string, code int, out string) {
	t.Helper()
	if code != exitError || strings.Count(out, "\n") != 1 {
		t.Errorf("%s: exit %d, want %d, and one line:\n%q", what, code, exitError, out)
	}
	for i := 0; i < len(out); i++ {
		if c := out[i]; (c < 0x20 && c != '\n') || c == 0x7f {
			t.Errorf("%s: output holds control byte %#x at %d:\n%q", what, c, i, out)
			break
		}
	}
	if strings.Contains(out, "pw-secret") {
		t.Errorf("%s: output repeats a password of the input:\n%s", what, out)
	}
}

// TestNoSecretsRepeated: the command never prints the secrets of the
// input or of --jaeger: not in a finding about a span named after a URL,
// not in a connection error.
func TestNoSecretsRepeated(t *testing.T) {
	items := endpoint("/items")
	roots := []tracefixture.Span{op{id: "op-name", method: "GET", url: items, outcome: "bogus", attempts: 1, budget: 400, end: 51,
		children: children(try{opID: "op-name", n: 1, method: "GET", url: items, status: 200, elapsed: 50, remaining: 400, decision: attrs.DecisionReturn}.span())}.span()}
	roots[0].Name = "GET http://alice:pw-secret@" + server + "/items?token=tok-secret"
	code, out, _ := inspectStdout(t, roots, false)
	if code != exitFindings || !strings.Contains(out, "[invalid-attribute]") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if strings.Contains(out, "pw-secret") || strings.Contains(out, "tok-secret") {
		t.Errorf("the report repeats a secret of a span name:\n%s", out)
	}
	if !strings.Contains(out, "REDACTED:REDACTED@") {
		t.Errorf("the span name is not shown redacted:\n%s", out)
	}

	endpoint := strings.Replace(closedPort(t), "://", "://alice:pw-secret@", 1)
	for _, args := range [][]string{
		{"-jaeger", endpoint, "-service", "s", "-timeout", "2s"},
		{"-jaeger", endpoint, "-trace", "abc"},
		{"-jaeger", endpoint + "/?token=tok-secret", "-service", "s", "-lookback", "soon"},
		{"-jaeger", "localhost:1/x?token=tok-secret", "-service", "s"},
	} {
		code, stdout, stderr := run3(args)
		if code != exitError || strings.Contains(stdout+stderr, "pw-secret") || strings.Contains(stdout+stderr, "tok-secret") {
			t.Errorf("%v: exit %d, output %q %q", args, code, stdout, stderr)
		}
	}
}

// TestLookbackLimits: a lookback longer than a duration holds is refused
// for that reason, never wrapped into a short window.
func TestLookbackLimits(t *testing.T) {
	noJaeger := closedPort(t)
	for _, lb := range []string{"213504d", "106752d", "2562048h"} {
		code, _, stderr := run3([]string{"-jaeger", noJaeger, "-service", "s", "-lookback", lb})
		if code != exitError || !strings.Contains(stderr, "longer than the longest window") {
			t.Errorf("-lookback %s: exit %d, stderr %q", lb, code, stderr)
		}
	}
	code, _, stderr := run3([]string{"-jaeger", noJaeger, "-service", "s", "-lookback", "106751d", "-timeout", "1s"})
	if code != exitError || !strings.Contains(stderr, "cannot reach jaeger") {
		t.Errorf("-lookback 106751d: exit %d, stderr %q", code, stderr)
	}
}

func run3(args []string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// Two traces, each one clean operation whose span ids (1 and 2), operation
// id and request id are the same: two distinct attempt spans share a
// request id. The duplicate-request-id finding lists the two attempt
// spans it saw, each named by its trace: named by span id alone, they
// read as one span delivered twice, the other meaning of the code.
func TestSpanIDsSharedAcrossTracesAreToldApart(t *testing.T) {
	op := func(trace string, base int64) string {
		return fmt.Sprintf(`{"traceId":%q,"spanId":"0000000000000001","name":"retry GET","kind":3,"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[`+
			`{"key":"retry.operation.id","value":{"stringValue":"opA"}},{"key":"http.request.method","value":{"stringValue":"GET"}},`+
			`{"key":"url.full","value":{"stringValue":"http://example.com/items"}},{"key":"server.address","value":{"stringValue":"example.com"}},`+
			`{"key":"server.port","value":{"intValue":"80"}},{"key":"retry.outcome","value":{"stringValue":"return"}},`+
			`{"key":"retry.attempts","value":{"intValue":"1"}},{"key":"retry.deadline_ms","value":{"intValue":"400"}}]},`+
			`{"traceId":%q,"spanId":"0000000000000002","parentSpanId":"0000000000000001","name":"GET","kind":3,"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[`+
			`{"key":"retry.operation.id","value":{"stringValue":"opA"}},{"key":"retry.request.id","value":{"stringValue":"opA/attempt-1"}},`+
			`{"key":"retry.attempt","value":{"intValue":"1"}},{"key":"http.request.method","value":{"stringValue":"GET"}},`+
			`{"key":"url.full","value":{"stringValue":"http://example.com/items"}},{"key":"server.address","value":{"stringValue":"example.com"}},`+
			`{"key":"server.port","value":{"intValue":"80"}},{"key":"retry.elapsed_ms","value":{"intValue":"10"}},`+
			`{"key":"retry.remaining_ms","value":{"intValue":"400"}},{"key":"retry.decision","value":{"stringValue":"return"}},`+
			`{"key":"retry.backoff_ms","value":{"intValue":"0"}},{"key":"http.response.status_code","value":{"intValue":"200"}}]}`,
			trace, base, base+100_000_000, trace, base, base+10_000_000)
	}
	in := `{"resourceSpans":[{"scopeSpans":[{"spans":[` +
		op("0102030405060708090a0b0c0d0e0f10", 1700000000000000000) + "," +
		op("1102030405060708090a0b0c0d0e0f10", 1700000001000000000) + `]}]}]}` + "\n"
	code, out, stderr := runOnFile(t, []byte(in))
	if code != exitFindings {
		t.Fatalf("exit %d, stderr %q:\n%s", code, stderr, out)
	}
	var seen string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "request id \"opA/attempt-1\" is carried by") {
			seen = line
		}
	}
	if seen == "" {
		t.Fatalf("no duplicate-request-id finding for the shared request id:\n%s", out)
	}
	places := regexp.MustCompile(`attempt \d+ of [^;]*`).FindAllString(seen, -1)
	if len(places) != 2 || places[0] == places[1] {
		t.Errorf("the finding names the two attempt spans alike, as if one span was delivered twice: %q\n%s", places, seen)
	}
}
