// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestFileDetectsTheFormat: a file is read as what its content is
// (stdouttrace spans, OTLP traces, OTLP logs, Jaeger's answers saved),
// and a named format is
// obeyed; content that is neither is refused at its first value, pointing
// at -format, and malformed content keeps its position.
func TestFileDetectsTheFormat(t *testing.T) {
	const (
		span    = `{"Name":"a","SpanContext":{"TraceID":"01","SpanID":"02"},"Parent":{},"SpanKind":1}`
		otlp    = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"x"}]}]}]}`
		logs    = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[]}]}]}`
		neither = `{"_time":"2026-01-02T03:04:05Z","_msg":"x"}`
	)
	for _, tc := range []struct {
		name, input string
		format      Format
		want        Format // the format read
		spans       int
		err         string
	}{
		{name: "stdouttrace stream", input: span + "\n" + span, format: FormatAuto, want: FormatStdouttrace, spans: 2},
		{name: "stdouttrace pretty, after blank lines", input: "\n\n  " + strings.ReplaceAll(span, ",", ",\n  "), format: FormatAuto, want: FormatStdouttrace, spans: 1},
		{name: "stdouttrace array", input: "[" + span + "]", format: FormatAuto, want: FormatStdouttrace, spans: 1},
		{name: "OTLP traces", input: otlp + "\n" + otlp, format: FormatAuto, want: FormatOTLP, spans: 2},
		{name: "OTLP logs", input: logs, format: FormatAuto, want: FormatOTLP},
		{name: "empty", input: " \n", format: FormatAuto, want: FormatAuto},
		{name: "named OTLP", input: otlp, format: FormatOTLP, want: FormatOTLP, spans: 1},
		{name: "named stdouttrace, given OTLP", input: otlp, format: FormatStdouttrace, err: "in:1:1: not a stdouttrace span: no SpanContext (is this OTLP JSON? give -format otlp)"},
		{name: "named OTLP, given stdouttrace", input: span, format: FormatOTLP, err: "in:1:1: not an OTLP trace request: no resourceSpans"},
		{name: "neither", input: "\n" + neither, format: FormatAuto,
			err: "in:2:1: neither stdouttrace JSON (no SpanContext), OTLP JSON (no resourceSpans or resourceLogs) nor a saved Jaeger answer (no data, traceID, spans or result): name the format with -format"},
		{name: "Jaeger /api/traces answer", input: uiTrace("{\"data\":[", "]}"), format: FormatAuto, want: FormatJaeger, spans: 1},
		{name: "Jaeger /api/traces trace alone", input: uiTrace("", ""), format: FormatAuto, want: FormatJaeger, spans: 1},
		{name: "Jaeger /api/traces: not found", input: `{"data":null,"total":0,"limit":0,"offset":0,"errors":[{"code":404,"msg":"trace not found"}]}`, format: FormatAuto, want: FormatJaeger},
		{name: "Jaeger /api/v3 answer", input: `{"result":` + otlp + `}`, format: FormatAuto, want: FormatJaeger, spans: 1},
		{name: "Jaeger /api/v3: not found", input: `{"error":{"httpCode":404,"message":"No traces found"}}`, format: FormatAuto, want: FormatJaeger},
		{name: "a log line with an error text", input: `{"_time":"2026-01-02T03:04:05Z","_msg":"x","error":"boom","data":"d"}`, format: FormatAuto,
			err: "in:1:1: neither stdouttrace JSON"},
		{name: "Jaeger /api/traces: one trace of two not found", input: uiTrace(`{"data":[`, `],"errors":[{"code":404,"msg":"trace not found","traceID":"ff"}]}`),
			format: FormatAuto, want: FormatJaeger, spans: 1},
		{name: "named jaeger, given OTLP", input: otlp, format: FormatJaeger, err: "in:1:1: not a saved Jaeger answer"},
		{name: "malformed", input: "{\"Name\": ]", format: FormatAuto, err: "in:1:10: invalid character ']'"},
		{name: "not JSON", input: "hello", format: FormatAuto, err: "in:1:1: invalid character 'h'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans, got, err := File(bytes.NewReader([]byte(tc.input)), "in", tc.format, 0)
			if tc.err != "" {
				var pe *PositionError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &pe) {
					t.Fatalf("error %v, want a *PositionError containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want || len(spans) != tc.spans {
				t.Errorf("read %d spans as %q (error %v), want %d as %q", len(spans), got, err, tc.spans, tc.want)
			}
		})
	}
	if _, _, err := File(strings.NewReader(span), "in", "yaml", 0); err == nil || !strings.Contains(err.Error(), `unknown format "yaml"`) {
		t.Errorf("an unknown format: %v", err)
	}
}

// uiTrace is one trace of Jaeger's /api/traces JSON holding one span,
// between before and after.
func uiTrace(before, after string) string {
	return before + `{"traceID":"0102030405060708090a0b0c0d0e0f10","spans":[{"traceID":"0102030405060708090a0b0c0d0e0f10",` +
		`"spanID":"0102030405060708","operationName":"x","references":[],"startTime":1796113586000000,"duration":5,` +
		`"tags":[],"logs":[],"processID":"p1"}],"processes":{"p1":{"serviceName":"s","tags":[]}}}` + after
}

// TestFileSizeLimit: detection reads no more than the limit.
func TestFileSizeLimit(t *testing.T) {
	_, _, err := File(strings.NewReader(strings.Repeat(" ", 2000)), "in", FormatAuto, 1000)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 1000 {
		t.Errorf("error %v, want a *TooLargeError at 1000 bytes", err)
	}
}
