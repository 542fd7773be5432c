// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// printTables refuses an operation retryinspect did not read from the
// spans, rather than print it without its attempt table.
func TestPrintTablesRefusesAnOperationRetryinspectDidNotRead(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	_, span := tp.Tracer("demo-test").Start(t.Context(), "GET")
	span.End()
	rep, err := inspectSpans(t.Context(), rec.Ended())
	if err != nil {
		t.Fatal(err)
	}
	s := summary{Operations: []operationRecord{{OperationID: "op-1", Scenario: "unread", Method: "GET", spanID: "00f067aa0ba902b7"}}}
	if err := printTables(io.Discard, s, rep); err == nil || !strings.Contains(err.Error(), "did not read operation op-1") {
		t.Errorf("printTables of an operation retryinspect did not read: %v; want it refused", err)
	}
}
