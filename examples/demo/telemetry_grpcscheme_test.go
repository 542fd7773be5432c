// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// reached reports whether export, run with ctx, made the exporter open a
// connection to ln.
func reached(t *testing.T, ln net.Listener, export func(ctx context.Context) error) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	accepted := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err == nil {
			close(accepted)
			c.Close()
		}
	}()
	exportCtx, stop := context.WithCancel(ctx)
	go func() {
		select {
		case <-accepted:
		case <-ctx.Done():
		}
		stop()
	}()
	_ = export(exportCtx)
	ok := false
	select {
	case <-accepted:
		ok = true
	default:
	}
	ln.Close()
	<-done
	return ok
}

// "grpc://127.0.0.1:PORT" over gRPC: the trace and metric exporters take a
// URL whose scheme is no http or https as a gRPC target, as written, which
// grpc-go cannot resolve; the check accepted it and the report said the
// spans and metrics went there (a reviewer's find). It is refused.
func TestAGRPCTargetOfASchemeGRPCCannotResolveIsRefused(t *testing.T) {
	for _, c := range []struct{ signal, scheme string }{
		{"TRACES", "http"}, {"METRICS", "http"}, // controls: reached and accepted
		{"TRACES", "grpc"}, {"METRICS", "grpc"},
	} {
		signal := c.signal
		t.Run(signal+"/"+c.scheme, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			endpoint := c.scheme + "://" + ln.Addr().String()
			env := map[string]string{
				"OTEL_TRACES_EXPORTER":                       "none",
				"OTEL_METRICS_EXPORTER":                      "none",
				"OTEL_LOGS_EXPORTER":                         "none",
				"OTEL_" + signal + "_EXPORTER":               "otlp",
				"OTEL_EXPORTER_OTLP_PROTOCOL":                "grpc",
				"OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT": endpoint,
				"OTEL_EXPORTER_OTLP_INSECURE":                "true",
				"OTEL_EXPORTER_OTLP_" + signal + "_INSECURE": "true",
				"OTEL_EXPORTER_OTLP_TIMEOUT":                 "2000",
				"OTEL_EXPORTER_OTLP_" + signal + "_TIMEOUT":  "2000",
			}
			cleanEnv(t, env)
			checkErr := checkOTLPEndpoints()

			var export func(ctx context.Context) error
			var shutdown func(context.Context) error
			if signal == "TRACES" {
				exp, err := autoexport.NewSpanExporter(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				shutdown = exp.Shutdown
				export = func(ctx context.Context) error {
					return exp.ExportSpans(ctx, []sdktrace.ReadOnlySpan{tracetest.SpanStub{Name: "s"}.Snapshot()})
				}
			} else {
				r, err := autoexport.NewMetricReader(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
				c, err := mp.Meter("review").Int64Counter("c")
				if err != nil {
					t.Fatal(err)
				}
				c.Add(t.Context(), 1)
				shutdown = mp.Shutdown
				export = mp.ForceFlush
			}
			got := reached(t, ln, export)
			_ = shutdown(context.Background())
			if checkErr == nil && !got {
				t.Errorf("OTEL_EXPORTER_OTLP_%s_ENDPOINT=%q over gRPC: accepted by checkOTLPEndpoints (the report says %q), but the real exporter never reached %s",
					signal, endpoint, describe("OTEL_"+signal+"_EXPORTER", signal).String(), ln.Addr())
			}
			if checkErr != nil && got {
				t.Errorf("refused %q, which the exporter reached: %v", endpoint, checkErr)
			}
		})
	}
}

// The log exporter over gRPC dials a URL's host for grpc://, https:// and
// a scheme-less "//host:port": each is accepted and reached.
func TestTheLogExporterOverGRPCTakesAURLOfAnyScheme(t *testing.T) {
	for _, scheme := range []string{"grpc://", "https://", "http://", "//"} {
		t.Run(scheme, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			endpoint := scheme + ln.Addr().String()
			cleanEnv(t, map[string]string{
				"OTEL_TRACES_EXPORTER":             "none",
				"OTEL_METRICS_EXPORTER":            "none",
				"OTEL_LOGS_EXPORTER":               "otlp",
				"OTEL_EXPORTER_OTLP_PROTOCOL":      "grpc",
				"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": endpoint,
				"OTEL_EXPORTER_OTLP_TIMEOUT":       "2000",
			})
			checkErr := checkOTLPEndpoints()
			exp, err := autoexport.NewLogExporter(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var rec sdklog.Record
			got := reached(t, ln, func(ctx context.Context) error { return exp.Export(ctx, []sdklog.Record{rec}) })
			_ = exp.Shutdown(context.Background())
			if (checkErr == nil) != got {
				t.Errorf("%q: check error %v, reached %v", endpoint, checkErr, got)
			}
		})
	}
}
