// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package htmlreport

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// TestReadStdout: the spans of one operation give its HTML report, its
// text report, and its attempt table as the text report prints it.
func TestReadStdout(t *testing.T) {
	var spans bytes.Buffer
	root := tracefixture.Span{Name: "retry GET", End: time.Millisecond, Attrs: []attribute.KeyValue{
		attrs.OperationIDKey.String("op-1"), attrs.OutcomeKey.String(string(attrs.OutcomeReturn)),
	}, Children: []tracefixture.Span{{Name: "GET", End: time.Millisecond, Attrs: []attribute.KeyValue{
		attrs.OperationIDKey.String("op-1"), attrs.RequestIDKey.String("op-1/attempt-1"), attrs.AttemptKey.Int(1),
		attrs.HTTPRequestMethodKey.String("GET"), attrs.HTTPResponseStatusCodeKey.Int(200), attrs.ElapsedMsKey.Int(1),
		attrs.RemainingMsKey.Int(400), attrs.DecisionKey.String(string(attrs.DecisionReturn)),
	}}}}
	if err := tracefixture.WriteStdout(&spans, false, root); err != nil {
		t.Fatal(err)
	}
	rep, err := ReadStdout(&spans, "demo spans")
	if err != nil {
		t.Fatal(err)
	}
	var page, text, table bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if res := rep.Result(); res != (Result{Operations: 1, Attempts: 1, Notes: 1}) || !strings.HasPrefix(page.String(), "<!DOCTYPE html>") || !strings.Contains(page.String(), "demo spans") {
		t.Errorf("result %+v, page:\n%.300s", res, page.String())
	}
	// The attempt table of the operation, as the text report prints it.
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	found, err := rep.WriteAttempts(&table, rep.r.Operations[0].SpanID, "  ")
	if err != nil || !found || table.Len() == 0 || !strings.Contains(text.String(), table.String()) {
		t.Errorf("attempts (found %v, %v):\n%s\nnot in the text report:\n%s", found, err, table.String(), text.String())
	}
	if found, _ := rep.WriteAttempts(&table, "ffffffffffffffff", ""); found {
		t.Error("an unknown span id has an attempt table")
	}
	if _, err := ReadStdout(strings.NewReader(""), "empty"); err == nil || err.Error() != "no spans in empty" {
		t.Errorf("an empty input: %v", err)
	}
	if _, err := ReadStdout(strings.NewReader("{"), "broken"); err == nil {
		t.Error("a malformed input gave no error")
	}
}
