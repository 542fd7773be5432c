// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
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
