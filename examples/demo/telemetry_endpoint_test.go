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

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
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
// case: an endpoint with another scheme is not dropped but sent to over
// TLS (a reviewer's note: every case said "drop it").
func TestAnOTLPEndpointsRefusalSaysWhatTheExporterWouldDo(t *testing.T) {
	for _, c := range []struct {
		endpoint string
		grpc     bool
		want     string
	}{
		{"127.0.0.1:4318", false, "drop it and send to its default, localhost"},
		{"localhost:4318", false, "nowhere to send"},
		{"ftp://127.0.0.1:4318", false, "over TLS"},
		{"127.0.0.1:4317", true, "drop it and send to its default, localhost"},
		{"localhost:4317", true, ""},
		{"http://127.0.0.1:4318", false, ""},
		{"https://collector.example:4318/otlp", false, ""},
	} {
		got := otlpEndpointProblem(c.endpoint, c.grpc)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%q (grpc %v): %q, want one saying %q", c.endpoint, c.grpc, got, c.want)
		}
	}
}

// The premise of the TLS case, on the exporter itself: over http/protobuf,
// an endpoint of another scheme is sent to, over TLS.
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
