// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
)

// An attempt's CLIENT span carries server.port where the URL writes none,
// as the operation span does and the semantic conventions require:
// otelhttp leaves the scheme's default out, and otelretry writes it (a
// reviewer's find: docs/telemetry.md promised it, and the span had none).
// otelhttp's own http.client.request.duration still has none for such a
// URL, as docs/telemetry.md says; one that writes its port has it.
func TestAnAttemptSpanCarriesTheDefaultServerPort(t *testing.T) {
	for _, c := range []struct {
		url          string
		port         int64
		portInMetric bool
	}{
		{"https://api.test/x", 443, false},
		{"http://api.test/x", 80, false},
		{"https://api.test:8443/x", 8443, true},
		// The default written (a reviewer's find: otelhttp leaves it out
		// all the same, and otelretry wrote it only where the URL did not).
		{"https://api.test:443/x", 443, false},
		{"http://api.test:80/x", 80, false},
		{"http://api.test:/x", 80, false},
	} {
		t.Run(c.url, func(t *testing.T) { attemptSpanServerPort(t, c.url, c.port, c.portInMetric) })
	}
}

func attemptSpanServerPort(t *testing.T, url string, port int64, portInMetric bool) {
	h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	op := h.operation(t)
	if v := attrOf(op, attrs.ServerPortKey); v.AsInt64() != port {
		t.Fatalf("operation span server.port = %v, want %d", v.Emit(), port)
	}
	n := 0
	for _, s := range h.ended() {
		if s.SpanKind() != trace.SpanKindClient {
			continue
		}
		n++
		if v, ok := spantestAttr(s, attrs.ServerPortKey); !ok || v != strconv.FormatInt(port, 10) {
			t.Errorf("attempt span %q has server.port %q (present %v), want %d", s.Name(), v, ok, port)
		}
	}
	if n != 2 {
		t.Fatalf("%d attempt CLIENT spans, want 2", n)
	}

	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "http.client.request.duration" {
				continue
			}
			for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				seen = true
				if _, ok := p.Attributes.Value(attrs.ServerPortKey); ok != portInMetric {
					t.Errorf("http.client.request.duration point %v: server.port present %v, want %v", p.Attributes.Encoded(attribute.DefaultEncoder()), ok, portInMetric)
				}
			}
		}
	}
	if !seen {
		t.Fatal("no http.client.request.duration points")
	}
}
