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

// A malformed field deep in a pretty-printed saved Jaeger answer is
// reported at its line and column, as doc.go promises and the /api/v3
// reader does (a reviewer's find: every error of a span was reported at
// the start of the answer, 1:1).
func TestAMalformedSavedJaegerSpanIsReportedWhereItIs(t *testing.T) {
	good := uiSpan("153bebe0c7d842d5", "", "", "")
	for _, tc := range []struct {
		name, span string
		// marker is the offending value as indented; an element (a
		// tag) is reported at its '{', the last before the marker.
		marker  string
		element bool
		lone    bool
	}{
		{"span id", uiSpan("nothex", "", "", ""), `"nothex"`, false, false},
		{"duration", strings.Replace(good, `"duration":35`, `"duration":"thirty"`, 1), `"thirty"`, false, false},
		{"a tag", uiSpan("01", "", `{"key":"a","type":"string","value":"x"},{"key":"b","type":"int64","value":"two"}`, ""), `"two"`, true, false},
		{"a parent's span id", uiSpan("01", `{"refType":"CHILD_OF","traceID":"4c895c31b8f60720fbf0d5070813d45b","spanID":"nothexid"}`, "", ""), `"nothexid"`, false, false},
		{"a log's time", uiSpan("01", "", "", `{"timestamp":-1,"fields":[]}`), `-1`, false, false},
		{"a lone trace's span", uiSpan("nothex", "", "", ""), `"nothex"`, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := uiAnswer(good, good, tc.span)
			if tc.lone {
				doc = uiTrace("", "")
				doc = strings.Replace(doc, `"spans":[`, `"spans":[`+tc.span+`,`, 1)
			}
			var b bytes.Buffer
			if err := json.Indent(&b, []byte(doc), "", "  "); err != nil {
				t.Fatal(err)
			}
			in := b.String()
			at := strings.Index(in, tc.marker)
			if tc.element {
				at = strings.LastIndex(in[:at], "{")
			}
			wantLine := strings.Count(in[:at], "\n") + 1
			wantCol := at - strings.LastIndex(in[:at], "\n")
			_, _, err := File(strings.NewReader(in), "in.json", FormatAuto, 0)
			var pe *PositionError
			if !errors.As(err, &pe) || pe.Line != wantLine || pe.Col != wantCol {
				t.Errorf("error %v, want it at %d:%d", err, wantLine, wantCol)
			}
		})
	}
}
