// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
)

// docs/retryinspect.md: /api/traces JSON does not say whether a parent was
// remote, so an attempt whose parent the file lacks is reported as one
// whose parent was lost (missing-operation-span; the formats that mark a
// parent remote tell it apart: TestOTLPRemoteParent).
func TestAJaegerUIFileCannotTellARemoteParent(t *testing.T) {
	const trace = "4c895c31b8f60720fbf0d5070813d45b"
	attempt := `{"key":"retry.operation.id","type":"string","value":"op-1"},{"key":"retry.request.id","type":"string","value":"op-1/attempt-1"},` +
		`{"key":"retry.attempt","type":"int64","value":1},{"key":"http.request.method","type":"string","value":"GET"},` +
		`{"key":"http.response.status_code","type":"int64","value":200},{"key":"retry.decision","type":"string","value":"return"},` +
		`{"key":"retry.elapsed_ms","type":"int64","value":3},{"key":"retry.remaining_ms","type":"int64","value":1000},` +
		`{"key":"span.kind","type":"string","value":"client"}`
	ui := `{"data":[{"traceID":"` + trace + `","spans":[{"traceID":"` + trace + `","spanID":"0000000000000002","operationName":"GET",` +
		`"references":[{"refType":"CHILD_OF","traceID":"` + trace + `","spanID":"0000000000000001"}],"startTime":1796620787957806,` +
		`"duration":3000,"tags":[` + attempt + `],"logs":[],"processID":"p1"}],"processes":{"p1":{"serviceName":"checkout"}}}]}`
	code, out, errOut := runOnFile(t, []byte(ui))
	if code != exitFindings || !strings.Contains(out, "missing-operation-span") || !strings.Contains(out, "their parent span is not in the input") {
		t.Errorf("exit %d, stderr %q, want the parent lost:\n%s", code, errOut, out)
	}
}
