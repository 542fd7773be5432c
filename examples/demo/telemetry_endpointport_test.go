// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// An endpoint whose port no dial takes (99999, 65536, 0) parses as a URL
// with a scheme and a host: the demo reported it as where the spans,
// metrics and logs went and exited 0 while every export failed ("address
// 99999: invalid port"; a reviewer's find). It is refused, naming its
// variable, as docs/stack.md says of endpoints the exporters cannot use.
func TestAnOTLPEndpointWithAPortOutOfRangeIsRefused(t *testing.T) {
	for _, c := range []struct {
		endpoint string
		grpc     bool
		refused  bool
	}{
		{"http://127.0.0.1:99999", false, true},
		{"http://127.0.0.1:65536", false, true},
		{"http://127.0.0.1:0", false, true},
		{"http://127.0.0.1:99999", true, true},
		{"http://127.0.0.1:4318", false, false},
		{"https://collector.test", false, false},
		{"http://127.0.0.1:4317", true, false},
		// A gRPC target's port (a reviewer's find: only a URL's was read).
		{"dns:///127.0.0.1:99999", true, true},
		{"dns:///127.0.0.1:0", true, true},
		{"localhost:99999", true, true},
		{"dns:///127.0.0.1:4317", true, false},
		{"unix:///tmp/otlp.sock", true, false},
		// A socket's path holds no port, whatever its colons; a DNS
		// server's authority is not the target (a reviewer's finds).
		{"unix:///run/otel/collector:grpc.sock", true, false},
		{"unix:///tmp/otlp:99999", true, false},
		{"dns://127.0.0.53/collector.test:99999", true, true},
		{"dns://127.0.0.53/collector.test:4317", true, false},
		{"passthrough:///127.0.0.1:99999", true, true},
		{"dns:///[::1]:99999", true, true},
		// The opaque form grpc-go reads too (a reviewer's find).
		{"dns:127.0.0.1:99999", true, true},
		{"passthrough:127.0.0.1:99999", true, true},
		{"dns:127.0.0.1:0", true, true},
		{"dns:127.0.0.1:4317", true, false},
		{"http://[::1]:99999", false, true},
		{"http://[::1]:4318", false, false},
	} {
		if got := otlpEndpointProblem(c.endpoint, c.grpc, false); (got != "") != c.refused {
			t.Errorf("otlpEndpointProblem(%q, grpc %v) = %q; want refused %v", c.endpoint, c.grpc, got, c.refused)
		}
	}
	cleanEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:99999", "OTEL_EXPORTER_OTLP_TIMEOUT": "200"})
	var out bytes.Buffer
	err := run(t.Context(), options{repeat: 1, html: filepath.Join(t.TempDir(), "r.html")}, &out)
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_ENDPOINT") || !strings.Contains(err.Error(), "no TCP port") {
		t.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:99999: err %v; want a refusal naming the variable and the port", err)
	}
}
