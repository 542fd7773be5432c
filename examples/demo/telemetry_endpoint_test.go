// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// An OTLP endpoint the exporters would drop for their default (localhost)
// is refused, naming its variable and never its value: "127.0.0.1:PORT",
// without a scheme, was reported as where the spans, metrics and logs
// went, while they went to localhost:4318 and the demo exited 0 (a
// reviewer's find).
func TestAnOTLPEndpointTheExportersWouldDropIsRefused(t *testing.T) {
	for _, c := range []struct{ key, value, protocol string }{
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:4318", ""},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "::not a url", ""},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://[::1", ""},
		{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "ftp://u:secret@127.0.0.1/", ""},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:4317", "grpc"}, // no URL, no target: dropped by gRPC's too
	} {
		cleanEnv(t, map[string]string{c.key: c.value, "OTEL_EXPORTER_OTLP_PROTOCOL": c.protocol})
		var out bytes.Buffer
		err := run(t.Context(), options{repeat: 1, html: filepath.Join(t.TempDir(), "r.html")}, &out)
		if err == nil || !strings.Contains(err.Error(), c.key) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s=%q: err %v; want one naming the variable, not its value", c.key, c.value, err)
		}
	}
}

// The report gives an endpoint's password as REDACTED: it printed the
// variable as written (a reviewer's note).
func TestTheReportGivesNoEndpointPassword(t *testing.T) {
	cleanEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:secret@127.0.0.1:1", "OTEL_EXPORTER_OTLP_TIMEOUT": "200"})
	var out bytes.Buffer
	if err := run(t.Context(), options{repeat: 1, html: filepath.Join(t.TempDir(), "r.html")}, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "secret") || !strings.Contains(out.String(), "127.0.0.1:1") {
		t.Errorf("the report gives the endpoint's password, or no endpoint:\n%s", out.String())
	}
}

// The refusal says what the exporters would do with the endpoint, case by
// case: an endpoint with another scheme is not dropped, and each exporter
// picks TLS or not for it by its own rule (reviewers' notes: every case
// said "drop it", then the other scheme's said "over TLS" for all).
func TestAnOTLPEndpointsRefusalSaysWhatTheExporterWouldDo(t *testing.T) {
	for _, c := range []struct {
		endpoint string
		grpc     bool
		want     string
	}{
		{"127.0.0.1:4318", false, "drop it and send to its default, localhost"},
		{"localhost:4318", false, "nowhere to send"},
		{"ftp://127.0.0.1:4318", false, "a rule of their own"},
		{"127.0.0.1:4317", true, "drop it and send to its default, localhost"},
		{"localhost:4317", true, ""},
		{"grpc://127.0.0.1:4317", true, "no resolver for"},
		{"foo://collector.test", true, "no resolver for"},
		{"http:///v1/traces", true, "naming no host"},
		{"unix:///run/otel.sock", true, ""},
		{"//127.0.0.1:4317", true, ""},
		{"http://127.0.0.1:4318", false, ""},
		{"https://collector.example:4318/otlp", false, ""},
	} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.endpoint, "OTEL_LOGS_EXPORTER": "none"}
		if c.grpc {
			env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "grpc"
		}
		cleanEnv(t, env)
		got := ""
		if err := checkOTLPEndpoints(); err != nil {
			got = err.Error()
		}
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%q (grpc %v): %q, want one saying %q", c.endpoint, c.grpc, got, c.want)
		}
	}
}

// The premise of the other scheme's case, on the exporters themselves:
// the trace exporter sends to ftp:// over TLS, to unix:// in plain HTTP,
// and the log exporter to grpc:// in plain HTTP
// (TestTheOTLPExportersSendAnotherSchemeInPlainHTTPToo).
func TestTheOTLPExporterSendsAnotherSchemeOverTLS(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.URL.Path:
		default:
		}
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://"+srv.Listener.Addr().String()+"/v1/traces")
	exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithTLSClientConfig(srv.Client().Transport.(*http.Transport).TLSClientConfig),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	_, span := tp.Tracer("t").Start(t.Context(), "s")
	span.End()
	if err := tp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-got:
		if p != "/v1/traces" {
			t.Errorf("the exporter sent to %q", p)
		}
	default:
		t.Error("the exporter sent nothing to the TLS server")
	}
}

// plainServer is a plain-HTTP (no TLS) server that reports each path it
// is sent to.
func plainServer(t *testing.T) (*httptest.Server, chan string) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.URL.Path:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// TestTheOTLPExportersSendAnotherSchemeInPlainHTTPToo: the log exporter
// takes every scheme but https for plain HTTP, and the trace exporter
// unix:// too, so the refusal of such an endpoint does not say "over TLS"
// (a reviewer's find: it did, for every exporter and scheme).
func TestTheOTLPExportersSendAnotherSchemeInPlainHTTPToo(t *testing.T) {
	t.Run("logs, grpc://", logsEndpointOfAnotherSchemeInPlainHTTP)
	t.Run("traces, unix://", tracesUnixEndpointInPlainHTTP)
}

func logsEndpointOfAnotherSchemeInPlainHTTP(t *testing.T) {
	srv, got := plainServer(t)
	v := "grpc://" + srv.Listener.Addr().String() + "/v1/logs"
	cleanEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": v})
	exp, err := otlploghttp.New(t.Context(), otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	var r otellog.Record
	r.SetBody(attribute.StringValue("x"))
	lp.Logger("t").Emit(t.Context(), r)
	_ = lp.Shutdown(t.Context())
	select {
	case p := <-got:
		t.Logf("otlploghttp sent to %s over plain HTTP", p)
	default:
		t.Fatal("premise: the log exporter sent nothing to the plain-HTTP server")
	}
	err = checkOTLPEndpoints()
	if err == nil {
		t.Fatal("not refused")
	}
	if strings.Contains(err.Error(), "over TLS") {
		t.Errorf("refusal: %v\nbut the logs exporter sent to that endpoint over plain HTTP, not TLS", err)
	}
}

func tracesUnixEndpointInPlainHTTP(t *testing.T) {
	srv, got := plainServer(t)
	v := "unix://" + srv.Listener.Addr().String() + "/v1/traces"
	cleanEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": v})
	exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	_, span := tp.Tracer("t").Start(t.Context(), "s")
	span.End()
	_ = tp.Shutdown(t.Context())
	select {
	case p := <-got:
		t.Logf("otlptracehttp sent to %s over plain HTTP", p)
	default:
		t.Fatal("premise: the trace exporter sent nothing to the plain-HTTP server")
	}
	err = checkOTLPEndpoints()
	if err == nil {
		t.Fatal("not refused")
	}
	if strings.Contains(err.Error(), "over TLS") {
		t.Errorf("refusal: %v\nbut the trace exporter sent to that endpoint over plain HTTP, not TLS", err)
	}
}
