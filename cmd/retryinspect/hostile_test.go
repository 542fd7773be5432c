// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"os"
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
