// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// A worker that continues an upstream service's trace (a message's
// traceparent, no server span of its own) records attempts whose parent
// is remote: in the upstream's output, not lost. Another team's layer
// with no operation span (a note, docs/retryinspect.md) was reported as
// a lost operation span (missing-operation-span, exit 1); the stdouttrace
// exporter writes "Remote":true for such a parent.
func TestAttemptsUnderARemoteParentAreNotALostOperationSpan(t *testing.T) {
	var out bytes.Buffer
	tp := spanWriter(t, &out)
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xab, 1}, SpanID: trace.SpanID{0xcd, 1}, TraceFlags: trace.FlagsSampled, Remote: true}))
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for n, decision := range []attrs.Decision{attrs.DecisionRetry, attrs.DecisionReturn} {
		at := start.Add(time.Duration(n) * 100 * time.Millisecond)
		_, span := tp.Tracer("team-b/retry").Start(ctx, "GET", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(at),
			trace.WithAttributes(attrs.OperationIDKey.String("team-b-1"), attrs.RequestIDKey.String("team-b-1/"+strconv.Itoa(n+1)),
				attrs.AttemptKey.Int(n+1), attrs.HTTPRequestMethodKey.String("GET"), attrs.HTTPResponseStatusCodeKey.Int(503-303*n),
				attrs.ElapsedMsKey.Int(40), attrs.RemainingMsKey.Int(1000-100*n), decision.Attribute(),
				attrs.ServerAddressKey.String("inventory.internal")))
		span.End(trace.WithTimestamp(at.Add(40 * time.Millisecond)))
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, report, errOut := runOnFile(t, out.Bytes())
	if code != exitClean || strings.Contains(report, "[missing-operation-span]") || !strings.Contains(report, "[no-operation-span]") {
		t.Errorf("exit %d (stderr %q); want 0, with the note no-operation-span and no missing-operation-span:\n%s", code, errOut, report)
	}
}
