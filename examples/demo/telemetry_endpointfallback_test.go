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
// by the OTLP trace exporter (envconfig.WithURL reports the error and sets
// nothing), which then sends to OTEL_EXPORTER_OTLP_ENDPOINT. The demo
// refuses it, as it refuses any value the exporter would not send to as
// written, but said the exporter would "send to its default, localhost": a
// target other than the real one (a reviewer's find).
func TestAnUnparsableSignalEndpointNamesTheSharedOneAsWhereItWouldGo(t *testing.T) {
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.URL.Path:
		default:
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	cleanEnv(t, map[string]string{
		"OTEL_TRACES_EXPORTER":               "otlp",
		"OTEL_METRICS_EXPORTER":              "none",
		"OTEL_LOGS_EXPORTER":                 "none",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://[::1", // no URL
		"OTEL_EXPORTER_OTLP_ENDPOINT":        srv.URL,
		"OTEL_EXPORTER_OTLP_TIMEOUT":         "2000",
	})

	// The real exporter sends to the shared endpoint.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	if err := exp.ExportSpans(ctx, []sdktrace.ReadOnlySpan{tracetest.SpanStub{Name: "s"}.Snapshot()}); err != nil {
		t.Fatalf("exporter: %v", err)
	}
	select {
	case p := <-got:
		if p != "/v1/traces" {
			t.Fatalf("exporter sent to %q", p)
		}
	default:
		t.Fatal("the exporter did not reach the shared endpoint")
	}

	if err := checkOTLPEndpoints(); err == nil || !strings.Contains(err.Error(), "send to OTEL_EXPORTER_OTLP_ENDPOINT's endpoint instead") {
		t.Errorf("checkOTLPEndpoints() = %v; want it refused, saying the trace exporter sends to OTEL_EXPORTER_OTLP_ENDPOINT's endpoint", err)
	}
}

// The same for the log exporter (otlploghttp v0.23's getenv goes on to the
// next key when conv fails).
func TestAnUnparsableLogsEndpointNamesTheSharedOneAsWhereItWouldGo(t *testing.T) {
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.URL.Path:
		default:
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	cleanEnv(t, map[string]string{
		"OTEL_TRACES_EXPORTER":             "none",
		"OTEL_METRICS_EXPORTER":            "none",
		"OTEL_LOGS_EXPORTER":               "otlp",
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://[::1",
		"OTEL_EXPORTER_OTLP_ENDPOINT":      srv.URL,
		"OTEL_EXPORTER_OTLP_TIMEOUT":       "2000",
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	exp, err := autoexport.NewLogExporter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	var rec sdklog.Record
	if err := exp.Export(ctx, []sdklog.Record{rec}); err != nil {
		t.Fatalf("exporter: %v", err)
	}
	select {
	case p := <-got:
		if p != "/v1/logs" {
			t.Fatalf("exporter sent to %q", p)
		}
	default:
		t.Fatal("the exporter did not reach the shared endpoint")
	}
	if err := checkOTLPEndpoints(); err == nil || !strings.Contains(err.Error(), "send to OTEL_EXPORTER_OTLP_ENDPOINT's endpoint instead") {
		t.Errorf("checkOTLPEndpoints() = %v; want it refused, saying the log exporter sends to OTEL_EXPORTER_OTLP_ENDPOINT's endpoint", err)
	}
}

// Over gRPC the log exporter (otlploggrpc v0.23, convEndpoint) dials the
// URL's host only: for a gRPC target such as "dns:///127.0.0.1:PORT" or
// "127.0.0.1:PORT"-less forms with a scheme, u.Host is "" and the exporter
// never reaches the target. checkOTLPEndpoints's godoc says a gRPC target
// "is used as written", which holds for the trace and metric exporters
// only: the demo accepted it for logs and reported logs as sent there (a
// reviewer's find). It is refused for logs.
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
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	exp, err := autoexport.NewLogExporter(ctx)
	if err == nil {
		exportCtx, stop := context.WithCancel(ctx)
		go func() {
			select {
			case <-accepted:
			case <-exportCtx.Done():
			}
			stop()
		}()
		var rec sdklog.Record
		_ = exp.Export(exportCtx, []sdklog.Record{rec})
		stop()
		_ = exp.Shutdown(context.Background())
	}
	reached := false
	select {
	case <-accepted:
		reached = true
	default:
	}
	ln.Close()
	<-done

	checkErr := checkOTLPEndpoints()
	desc := describe(envLogsExporter, "LOGS")
	if !reached && checkErr == nil {
		t.Errorf("the log exporter (gRPC) never dialled %s (it takes the URL's host, \"\"), yet checkOTLPEndpoints() = nil and the report says logs went to %q",
			target, desc.String())
	}
	if reached && checkErr != nil {
		t.Errorf("reached, but refused: %v", checkErr)
	}
}
