// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A job creates two orders, one after the other, under one
// WithOperationID, each a POST of its own to one URL. The first one's
// answer is lost (the attempt timeout cuts it) and the state check says
// it was applied: the operation ends return, the stored 201 handed to the
// caller. The second order is sent once and answered 201. Nothing was
// resent by a layer above: the spans of the run give no finding
// (docs/retryinspect.md, outer-layer-resend: "never after an operation
// ... whose state check found the write applied"). The log records of the
// same run must give "the same findings as the spans" (docs/retryinspect.md,
// "From the log events"); what only the spans tell may be a needs-spans
// note, "never a false finding": the records read the first operation's
// return after its check_state as the applied write it was.
func TestLogsOfAWriteAStateCheckFoundAppliedGiveNoResend(t *testing.T) {
	var spans, logs []byte
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		tp := spanWriter(t, &out)
		exp := &otlpJSONExporter{}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
		base := scripted.New(scripted.Step{Hang: true}, scripted.Step{Status: http.StatusCreated})
		client := &http.Client{Transport: otelretry.NewTransport(base,
			otelretry.WithTracerProvider(tp), otelretry.WithLoggerProvider(lp),
			otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithStateCheck(foundApplied))}
		ctx, handler := tp.Tracer("app").Start(t.Context(), "handler", trace.WithSpanKind(trace.SpanKindServer))
		sendTwoOrders(t, otelretry.WithOperationID(ctx, "job-1"), client, base)
		handler.End()
		tp.Shutdown(context.Background())
		lp.Shutdown(context.Background())
		spans, logs = out.Bytes(), exp.buf.Bytes()
	})
	if r := analyzeWith(t, spans, read.Stdout); len(r.Findings) != 0 {
		t.Fatalf("setup: the spans give findings %v; want none", r.Findings)
	}
	for _, in := range []struct {
		name   string
		data   []byte
		decode func(io.Reader, string, int64) ([]model.Span, error)
	}{
		{"otlp logs", logs, read.OTLP},
		{"victorialogs", toVictoriaLogs(t, logs), read.VictoriaLogs},
	} {
		for _, f := range analyzeWith(t, in.data, in.decode).Findings {
			if f.Code == inspect.CodeOuterLayerResend {
				t.Errorf("%s: the spans give no finding; the log records of the same run give %s: %s", in.name, f.Code, f.Seen)
			}
		}
	}
	if code, out, _ := runOnFile(t, logs); code != exitClean {
		t.Errorf("retryinspect on the log records: exit %d, want %d (the spans': clean):\n%s", code, exitClean, grepLines(out, "["))
	}
}
