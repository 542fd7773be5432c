// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"errors"
	"strings"
	"testing"
)

// pdata reads a repeated key of OTLP JSON's nesting as one array, the
// second's elements after the first's; an error inside the second is
// reported where it is, under the index pdata gave it (it was reported at
// the start of the input, or under the first array's element of that
// index).
func TestAnErrorUnderARepeatedOTLPKeyIsReportedWhereItIs(t *testing.T) {
	const good = `{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"ok"}`
	for _, tc := range []struct {
		name, in, marker, path string
	}{
		{"pdata refuses, a repeated resourceSpans",
			`{"resourceSpans":[{"scopeSpans":[{"spans":[` + good + `]}]}],` +
				`"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"nothex","spanId":"0102030405060708"}]}]}]}`,
			`"nothex"`, "resourceSpans[1].scopeSpans[0].spans[0].traceId"},
		{"pdata refuses, a repeated scopeSpans",
			`{"resourceSpans":[{"scopeSpans":[{"spans":[` + good + `]}],` +
				`"scopeSpans":[{"spans":[` + good + `,{"traceId":"nothex","spanId":"0102030405060708"}]}]}]}`,
			`"nothex"`, "resourceSpans[0].scopeSpans[1].spans[1].traceId"},
		{"a span without a trace id, a repeated resourceSpans",
			`{"resourceSpans":[{"scopeSpans":[{"spans":[` + good + `]}]}],` +
				`"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"0102030405060708","name":"second"}]}]}]}`,
			`{"spanId":"0102030405060708","name":"second"}`, "resourceSpans[1].scopeSpans[0].spans[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OTLP(strings.NewReader(tc.in), "in.json", 0)
			var pe *PositionError
			col := strings.Index(tc.in, tc.marker) + 1
			if !errors.As(err, &pe) || pe.Line != 1 || pe.Col != col || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %v, want it at 1:%d under %s", err, col, tc.path)
			}
		})
	}
}

// The logs reader places a record's error by the same walk (called
// directly: no record that pdata reads fails the reader's own checks).
func TestARecordUnderARepeatedResourceLogsIsPlacedWhereItIs(t *testing.T) {
	in := `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"eventName":"a"}]}]}],` +
		`"resourceLogs":[{"scopeLogs":[{"logRecords":[{"eventName":"second"}]}]}]}`
	err := locateRecord([]byte(in), [3]int{1, 0, 0}, errors.New("bad"))
	var oe *offsetError
	if want := strings.Index(in, `{"eventName":"second"}`); !errors.As(err, &oe) || oe.off != want {
		t.Errorf("error %v at %+v, want it at offset %d", err, oe, want)
	}
}
