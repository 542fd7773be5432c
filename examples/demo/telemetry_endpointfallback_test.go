// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A signal's endpoint variable that does not parse as a URL is passed over
// by the OTLP exporters (the trace exporter's envconfig.WithURL reports the
// error and sets nothing; otlploghttp v0.23's getenv goes on to the next
// key), which then send to OTEL_EXPORTER_OTLP_ENDPOINT. The demo refuses
// it, as it refuses any value the exporter would not send to as written,
// but said the exporter would "send to its default, localhost": a target
// other than the real one (a reviewer's find).
func TestAnUnparsableSignalEndpointNamesTheSharedOneAsWhereItWouldGo(t *testing.T) {
	for _, c := range []struct {
		signal, path string
		export       func(ctx context.Context) error
	}{
		{"TRACES", "/v1/traces", func(ctx context.Context) error {
			exp, err := autoexport.NewSpanExporter(ctx)
			if err != nil {
				return err
			}
			defer exp.Shutdown(context.Background())
			return exp.ExportSpans(ctx, []sdktrace.ReadOnlySpan{tracetest.SpanStub{Name: "s"}.Snapshot()})
		}},
		{"LOGS", "/v1/logs", func(ctx context.Context) error {
			exp, err := autoexport.NewLogExporter(ctx)
			if err != nil {
				return err
			}
			defer exp.Shutdown(context.Background())
			return exp.Export(ctx, []sdklog.Record{{}})
		}},
	} {
		t.Run(c.signal, func(t *testing.T) {
			got := make(chan string, 4)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case got <- r.URL.Path:
				default:
				}
			}))
			defer srv.Close()
			env := map[string]string{
				"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none",
				"OTEL_" + c.signal + "_EXPORTER":               "otlp",
				"OTEL_EXPORTER_OTLP_" + c.signal + "_ENDPOINT": "http://[::1", // no URL
				"OTEL_EXPORTER_OTLP_ENDPOINT":                  srv.URL,
				"OTEL_EXPORTER_OTLP_TIMEOUT":                   "2000",
			}
			cleanEnv(t, env)

			// The real exporter sends to the shared endpoint.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if err := c.export(ctx); err != nil {
				t.Fatalf("exporter: %v", err)
			}
			select {
			case p := <-got:
				if p != c.path {
					t.Fatalf("exporter sent to %q", p)
				}
			default:
				t.Fatal("the exporter did not reach the shared endpoint")
			}

			if err := checkOTLPEndpoints(); err == nil || !strings.Contains(err.Error(), "send to OTEL_EXPORTER_OTLP_ENDPOINT's endpoint instead") {
				t.Errorf("checkOTLPEndpoints() = %v; want it refused, saying the exporter sends to OTEL_EXPORTER_OTLP_ENDPOINT's endpoint", err)
			}
		})
	}
}

// Over gRPC the log exporter (otlploggrpc v0.23, convEndpoint) dials the
// URL's host only: for a gRPC target such as "dns:///127.0.0.1:PORT", u.Host
// is "" and the exporter never reaches the target. checkOTLPEndpoints's
// godoc said a gRPC target "is used as written", which holds for the trace
// and metric exporters only: the demo accepted it for logs and reported
// logs as sent there (a reviewer's find). It is refused for logs.
func TestAGRPCTargetTheLogExporterCannotUseIsRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	target := "dns:///" + ln.Addr().String()
	cleanEnv(t, map[string]string{
		"OTEL_TRACES_EXPORTER":             "none",
		"OTEL_METRICS_EXPORTER":            "none",
		"OTEL_LOGS_EXPORTER":               "otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL":      "grpc",
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": target,
		"OTEL_EXPORTER_OTLP_TIMEOUT":       "1000",
	})
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")

	got := reached(t, ln, func(ctx context.Context) error {
		exp, err := autoexport.NewLogExporter(ctx)
		if err != nil {
			return err
		}
		defer exp.Shutdown(context.Background())
		return exp.Export(ctx, []sdklog.Record{{}})
	})
	checkErr := checkOTLPEndpoints()
	if !got && checkErr == nil {
		t.Errorf("the log exporter (gRPC) never dialled %s (it takes the URL's host, \"\"), yet checkOTLPEndpoints() = nil and the report says logs went to %q",
			target, describe(envLogsExporter, "LOGS").String())
	}
	if got && checkErr != nil {
		t.Errorf("reached, but refused: %v", checkErr)
	}
}
