// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const posTraceID = "0102030405060708090a0b0c0d0e0f10"

// posSpan is a stdouttrace span whose SpanContext object is sc.
func posSpan(sc, extra string) string {
	return `{"Name":"a","SpanContext":` + sc + `,"Parent":{"TraceID":"","SpanID":""},` + extra +
		`"StartTime":"2024-01-01T00:00:00Z","EndTime":"2024-01-01T00:00:01Z"}`
}

// indentedAt returns the pretty-printed doc and the line:column of the
// n-th (0-based) occurrence of marker in it.
func indentedAt(t *testing.T, doc, marker string, n int, crlf bool) (string, int, int) {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(doc), "", "  "); err != nil {
		t.Fatal(err)
	}
	in := b.String()
	if crlf {
		in = strings.ReplaceAll(in, "\n", "\r\n")
	}
	at := -1
	for i := 0; i <= n; i++ {
		j := strings.Index(in[at+1:], marker)
		if j < 0 {
			t.Fatalf("marker %q #%d not in %s", marker, n, in)
		}
		at += 1 + j
	}
	return in, strings.Count(in[:at], "\n") + 1, at - strings.LastIndex(in[:at], "\n")
}

func checkStdoutAt(t *testing.T, in string, line, col int) {
	t.Helper()
	_, err := Stdout(strings.NewReader(in), "in.json", 0)
	var pe *PositionError
	if !errors.As(err, &pe) || pe.Line != line || pe.Col != col {
		t.Errorf("error %v, want it at %d:%d", err, line, col)
	}
}

// A reader's error is reported at the field its path names, as the reader
// decoded it (a reviewer's finds, both against the first fix): encoding/json
// keeps the last of repeated keys, so the error points at the second
// TraceID, not at the valid first one.
func TestARepeatedKeyIsReportedAtTheValueRead(t *testing.T) {
	doc := posSpan(`{"TraceID":"`+posTraceID+`","TraceID":"nothex","SpanID":"0102030405060708"}`, "")
	in, line, col := indentedAt(t, doc, `"nothex"`, 0, false)
	checkStdoutAt(t, in, line, col)
}

// encoding/json matches struct fields in any case: a span written with
// "spanContext" is read, and its bad trace id is reported at its field, not
// at 1:1.
func TestAKeyInAnotherCaseIsReportedAtTheField(t *testing.T) {
	doc := strings.Replace(posSpan(`{"traceId":"nothex","SpanID":"0102030405060708"}`, ""), `"SpanContext"`, `"spanContext"`, 1)
	in, line, col := indentedAt(t, doc, `"nothex"`, 0, false)
	checkStdoutAt(t, in, line, col)
}

// An event's attribute whose key holds dots and brackets, in CRLF input,
// in a top-level array; an escaped key (a reviewer's cases, held).
func TestFieldPositionsOfNestedPaths(t *testing.T) {
	good := posSpan(`{"TraceID":"`+posTraceID+`","SpanID":"0102030405060708"}`, "")
	badEvent := posSpan(`{"TraceID":"`+posTraceID+`","SpanID":"0102030405060708"}`,
		`"Events":[{"Name":"e","Time":"2024-01-01T00:00:00Z","Attributes":[{"Key":"a.b[1]","Value":{"Type":"STRING","Value":"x"}},{"Key":"x.y [2] (\"z\")","Value":{"Type":"INT64","Value":"BADINT"}}]}],`)
	escaped := posSpan(`{"Trace\u0049D":"nothex","SpanID":"0102030405060708"}`, "")
	for _, tc := range []struct {
		name, doc, marker string
		n                 int
		crlf, element     bool
	}{
		{"event attribute", badEvent, `"BADINT"`, 0, false, true},
		{"event attribute crlf", badEvent, `"BADINT"`, 0, true, true},
		{"array", "[" + good + "," + good + "," + badEvent + "]", `"BADINT"`, 0, false, true},
		{"escaped key", escaped, `"nothex"`, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, line, col := indentedAt(t, tc.doc, tc.marker, tc.n, tc.crlf)
			if tc.element {
				// an attribute is reported at its '{'
				at := 0
				for l := 1; l < line; l++ {
					at += strings.Index(in[at:], "\n") + 1
				}
				at += col - 1
				at = strings.LastIndex(in[:at], "{")
				at = strings.LastIndex(in[:at], "{")
				line = strings.Count(in[:at], "\n") + 1
				col = at - strings.LastIndex(in[:at], "\n")
			}
			checkStdoutAt(t, in, line, col)
		})
	}
}

// fieldOffset stays inside its value and does not panic on any path (a
// reviewer's run, held).
func TestFieldOffsetStaysInside(t *testing.T) {
	raws := []string{`{"a":[1,[2,{"b":3}]],"a":{"c":[]}}`, `[[1,2],[3,[4]]]`, `{"a.b":{"c[1]":2}}`, `{"x":`, `[`, `{}`, `"s"`, "{\r\n \"a\" :\r\n [ 1 , 2 ]\r\n}"}
	paths := []string{"", "a", "a[1]", "a[1][1]", "a[1].b", "[1][1]", "[1]", "[-1]", "[99999999999999999999]", "a.b", "a.b.c[1]", "a[", "a[]", "a[1", ".", "..", "[1] (\"x\")", "a[0].c[0]"}
	for _, raw := range raws {
		for _, p := range paths {
			for _, q := range paths {
				err := &fieldError{path: p, err: &fieldError{path: q, err: errors.New("x")}}
				if off := fieldOffset([]byte(raw), err); off < 0 || off > len(raw) {
					t.Errorf("fieldOffset(%q, %q.%q) = %d, outside [0,%d]", raw, p, q, off, len(raw))
				}
			}
		}
	}
}

// A saved Jaeger answer whose span id key is spelled "spanId" is read
// (encoding/json matches keys case-insensitively); its bad id must be
// reported where it is, not at the start of the span.
func TestASavedJaegerKeyInAnotherCaseIsReportedWhereItIs(t *testing.T) {
	good := uiSpan("153bebe0c7d842d5", "", "", "")
	bad := strings.Replace(uiSpan("nothex", "", "", ""), `"spanID":"nothex"`, `"spanId":"nothex"`, 1)
	if !strings.Contains(bad, `"spanId"`) {
		t.Fatalf("no spanID key in %s", bad)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(uiAnswer(good, good, bad)), "", "  "); err != nil {
		t.Fatal(err)
	}
	in := b.String()
	at := strings.Index(in, `"nothex"`)
	wantLine, wantCol := strings.Count(in[:at], "\n")+1, at-strings.LastIndex(in[:at], "\n")
	_, _, err := File(strings.NewReader(in), "in.json", FormatAuto, 0)
	var pe *PositionError
	if !errors.As(err, &pe) || pe.Line != wantLine || pe.Col != wantCol {
		t.Errorf("error %v, want it at %d:%d", err, wantLine, wantCol)
	}
}

// VictoriaLogs' reader takes a repeated key's first value, spelled
// exactly: its error points there.
func TestAVictoriaLogsRepeatedKeyIsReportedAtTheValueRead(t *testing.T) {
	in := `{"_time":"yesterday","_time":"2026-01-02T03:04:05Z"}`
	_, err := VictoriaLogs(strings.NewReader(in), "in", 0)
	var pe *PositionError
	if !errors.As(err, &pe) || pe.Line != 1 || pe.Col != strings.Index(in, `"yesterday"`)+1 {
		t.Errorf("error %v, want it at the first _time, 1:%d", err, strings.Index(in, `"yesterday"`)+1)
	}
}
