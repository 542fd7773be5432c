// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestOTLPExporter sends one span with the OTLP/HTTP trace exporter
// (otlptracehttp.WithHTTPClient) through otelretry into the stack's real
// Collector, behind a counting proxy that answers the first export 503.
// The exporter's own retries are off, so otelretry is the only retry
// layer. An export is a POST: by default otelretry does not retry it (stop,
// 1 request, the export fails); the OTLP protocol defines an export
// answered 503 as safe to send again, so the exporter's own transport may
// declare POST idempotent (WithIdempotentMethods), and the export is
// retried and accepted by the Collector (return, 2 requests). The
// transport records its own spans into a separate in-memory provider, so
// that exporting never exports its own telemetry.
func TestOTLPExporter(t *testing.T) {
	collector := stackEndpoint(t, envOTLP)
	for _, tc := range []struct {
		name     string
		opts     []otelretry.Option
		received int
		want     wantOp
	}{
		{name: "post_not_repeatable", received: 1,
			want: wantOp{method: http.MethodPost, outcome: attrs.OutcomeStop,
				attempts: []wantAttempt{{status: 503, decision: attrs.DecisionStop}}}},
		{name: "post_idempotent", opts: []otelretry.Option{otelretry.WithIdempotentMethods(http.MethodPost)}, received: 2,
			want: wantOp{method: http.MethodPost, outcome: attrs.OutcomeReturn, contract: true, attempts: []wantAttempt{
				{status: 503, decision: attrs.DecisionRetry}, {status: 200, decision: attrs.DecisionReturn}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel := newTelemetry(t) // the transport's own spans
			px := newProxy(t, tel, collector, unavailable)
			rt := tel.transport(t, append([]otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(10 * time.Millisecond))}, tc.opts...)...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			exp, err := otlptracehttp.New(ctx,
				otlptracehttp.WithEndpointURL(px.URL+"/v1/traces"),
				otlptracehttp.WithHTTPClient(&http.Client{Transport: rt}),
				otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
			)
			if err != nil {
				t.Fatal(err)
			}

			// The application's span: another provider, recorded in memory
			// and exported once.
			app := tracetest.NewSpanRecorder()
			appTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(app),
				sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "otelretry-realclients"))))
			_, span := appTP.Tracer("realclients").Start(ctx, "exported "+tc.name)
			span.End()
			exportErr := exp.ExportSpans(ctx, app.Ended())
			if err := exp.Shutdown(ctx); err != nil {
				t.Error(err)
			}
			if err := appTP.Shutdown(ctx); err != nil {
				t.Error(err)
			}

			if ok := tc.want.outcome == attrs.OutcomeReturn; (exportErr == nil) != ok {
				t.Errorf("export error %v, want success: %v", exportErr, ok)
			}
			spans := tel.finished(px.server)
			if got := px.received.Load(); got != int64(tc.received) {
				t.Errorf("proxy received %d exports, want %d", got, tc.received)
			}
			var wantUpstream []int
			if tc.received == 2 {
				wantUpstream = []int{http.StatusOK} // the retry, accepted by the Collector
			}
			if got := px.upstreamStatuses(); !slices.Equal(got, wantUpstream) {
				t.Errorf("the Collector answered %v, want %v", got, wantUpstream)
			}
			ops := operations(t, spans)
			if len(ops) != 1 {
				t.Fatalf("%d operation spans, want 1", len(ops))
			}
			ops[0].check(t, spans, tc.want)
		})
	}
}
