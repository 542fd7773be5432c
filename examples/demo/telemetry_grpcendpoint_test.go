// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net"
	"testing"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A gRPC target the gRPC exporter uses as written ("dns:///host:port";
// otlpconfig's withEndpointForGRPC takes a value whose scheme is no http
// or https as the target) is not refused: the check took every OTLP
// endpoint for an http one (a reviewer's find).
func TestAGRPCTargetTheExporterUsesIsNotRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	endpoint := "dns:///" + ln.Addr().String()
	cleanEnv(t, map[string]string{
		"OTEL_TRACES_EXPORTER":        "otlp",
		"OTEL_LOGS_EXPORTER":          "none", // the log exporter dials a URL's host alone
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
		"OTEL_EXPORTER_OTLP_INSECURE": "true",
		"OTEL_EXPORTER_OTLP_TIMEOUT":  "2000",
	})

	// The real exporter reaches the listener with this value.
	got := reached(t, ln, func(ctx context.Context) error {
		exp, err := autoexport.NewSpanExporter(ctx)
		if err != nil {
			return err
		}
		defer exp.Shutdown(context.Background())
		return exp.ExportSpans(ctx, []sdktrace.ReadOnlySpan{tracetest.SpanStub{Name: "s"}.Snapshot()})
	})
	if !got {
		t.Fatalf("the gRPC exporter did not reach %s", endpoint)
	}

	if err := checkOTLPEndpoints(); err != nil {
		t.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT=%q, which the gRPC exporter reached: refused: %v", endpoint, err)
	}
}
