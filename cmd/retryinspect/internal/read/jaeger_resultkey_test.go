// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package read

import (
	"errors"
	"strings"
	"testing"
)

// CHANGELOG (Fixed, cmd/retryinspect): a field's error "follows the key the
// reader decoded now: encoding/json's last of any case". The /api/v3 reader
// decodes "result" with encoding/json (the last of any case), and placed
// the error from the first "result" spelled exactly (a reviewer's find);
// it follows the one decoded now.
func TestAJaegerV3ResultKeyIsReportedAtTheValueRead(t *testing.T) {
	bad := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01"}]}]}]}`
	for _, tc := range []struct{ name, in string }{
		{"repeated", `{"result":{"resourceSpans":[]},` + "\n" + `"result":` + bad + `}`},
		{"another case", `{"result":{"resourceSpans":[]},` + "\n" + `"Result":` + bad + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := strings.Index(tc.in, `"01"`)
			wantLine, wantCol := strings.Count(tc.in[:at], "\n")+1, at-strings.LastIndex(tc.in[:at], "\n")
			_, _, err := File(strings.NewReader(tc.in), "in.json", FormatAuto, 0)
			var pe *PositionError
			if !errors.As(err, &pe) || pe.Line != wantLine || pe.Col != wantCol {
				t.Errorf("error %v, want it at %d:%d (the traceId of the result decoded)", err, wantLine, wantCol)
			}
		})
	}
}
