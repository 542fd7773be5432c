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

func TestFromStdout(t *testing.T) {
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
	var page bytes.Buffer
	res, err := FromStdout(&page, &spans, "demo spans")
	if err != nil {
		t.Fatal(err)
	}
	if res != (Result{Operations: 1, Attempts: 1, Notes: 1}) || !strings.HasPrefix(page.String(), "<!DOCTYPE html>") || !strings.Contains(page.String(), "demo spans") {
		t.Errorf("result %+v, page:\n%.300s", res, page.String())
	}
	if _, err := FromStdout(&page, strings.NewReader(""), "empty"); err == nil || err.Error() != "no spans in empty" {
		t.Errorf("an empty input: %v", err)
	}
	if _, err := FromStdout(&page, strings.NewReader("{"), "broken"); err == nil {
		t.Error("a malformed input gave no error")
	}
}
