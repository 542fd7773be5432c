// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
)

func TestVictoriaLogsRecord(t *testing.T) {
	line := `{"_time":"2000-01-01T00:00:00.2Z","_msg":"retry attempt","_stream":"{event_name=\"retry.attempt\",host.name=\"a\\\"b,c\",service.name=\"checkout\"}",` +
		`"_stream_id":"0f","event_name":"retry.attempt","host.name":"a\"b,c","service.name":"checkout","scope.name":"otelretry","scope.version":"0.3.0",` +
		`"severity_number":"13","severity_text":"WARN","trace_id":"4B000000000000000000000000000001","span_id":"5a00000000000004",` +
		`"retry.attempt":"2","retry.elapsed_ms":"80","retry.idempotency_contract":"true","retry.idempotency_key.replayed":"true","retry.decision":"retry","retry.remaining_ms":"x1"}`
	spans, err := VictoriaLogs(strings.NewReader(line), "in", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := spans[0]
	end := time.Date(2000, 1, 1, 0, 0, 0, 200e6, time.UTC)
	if !s.Log || s.Name != "retry.attempt" || s.TraceID != "4b000000000000000000000000000001" || s.SpanID != "5a00000000000004" ||
		!s.End.Equal(end) || !s.Start.Equal(end.Add(-80*time.Millisecond)) {
		t.Errorf("record %+v", s)
	}
	want := []model.Attribute{
		{Key: "retry.attempt", Value: model.Int(2)},
		{Key: "retry.decision", Value: model.String("retry")},
		{Key: "retry.elapsed_ms", Value: model.Int(80)},
		{Key: "retry.idempotency_contract", Value: model.Bool(true)},
		{Key: "retry.idempotency_key.replayed", Value: model.Bool(true)},
		{Key: "retry.remaining_ms", Value: model.String("x1")}, // not an integer: the inspector reports it
	}
	if len(s.Attributes) != len(want) {
		t.Fatalf("attributes %+v, want %+v (resource, scope and severity fields dropped)", s.Attributes, want)
	}
	for i := range want {
		if s.Attributes[i] != want[i] {
			t.Errorf("attribute %d: %+v, want %+v", i, s.Attributes[i], want[i])
		}
	}
}

func TestLogReaderErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"vl no time", `{"event_name":"retry.attempt"}`, "in:1:1: _time: missing"},
		{"vl bad time", `{"_time":"yesterday"}`, `in:1:10: _time: invalid time "yesterday"`},
		{"vl bad trace id", `{"_time":"","trace_id":"xyz"}`, `in:1:24: trace_id: invalid trace id "xyz"`},
		{"vl array", `[]`, "in:1:1: not a VictoriaLogs log entry"},
		{"vl given otlp", `{"resourceLogs":[]}`, "in:1:1: not a VictoriaLogs log entry: no _time (is this OTLP JSON? give it as a file)"},
		{"otlp logs bad span id", `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"spanId":"12"}]}]}]}`, "in:1:1: "},
		{"otlp logs after traces", "{\"resourceSpans\":[]}\n{\"resourceLogs\":[]}", "in:2:1: this input holds both traces"},
		{"otlp neither", `{}`, "in:1:1: not an OTLP trace request: no resourceSpans, nor an OTLP logs request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if strings.HasPrefix(tc.name, "vl") {
				_, err = VictoriaLogs(strings.NewReader(tc.in), "in", 0)
			} else {
				_, err = OTLP(strings.NewReader(tc.in), "in", 0)
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want %q...", err, tc.want)
			}
		})
	}
}

func TestVictoriaLogsTooLarge(t *testing.T) {
	_, err := VictoriaLogs(strings.NewReader(strings.Repeat(" ", 11)), "in", 10)
	if _, ok := err.(*TooLargeError); !ok {
		t.Errorf("error %v, want a *TooLargeError", err)
	}
}
