// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"testing"
	"time"
)

// TestDemoOTLPProtocols runs the demo as a new user would, with the
// standard OTEL_EXPORTER_OTLP_PROTOCOL against the matching port of the
// Collector (gRPC on the gRPC port, http/protobuf on the HTTP one), and
// checks that its spans reach Jaeger and its metrics Prometheus.
func TestDemoOTLPProtocols(t *testing.T) {
	s := requireStack(t)
	// In parallel with the other stack tests, after the latency comparison
	// of TestExportFailureDoesNotBreakRequests, which runs alone.
	t.Parallel()
	for _, c := range []struct{ protocol, endpoint string }{
		{"grpc", s.otlpGRPC},
		{"http/protobuf", s.otlp},
	} {
		t.Run(c.protocol, func(t *testing.T) {
			t.Parallel()
			run := runDemo(t, c.endpoint, uniqueName("otelretry-e2e-proto"), []string{"OTEL_EXPORTER_OTLP_PROTOCOL=" + c.protocol})
			if got := run.summary.Traces; got.Exporter != "otlp" || got.Protocol != c.protocol {
				t.Errorf("the demo reports spans to %+v, want otlp over %s", got, c.protocol)
			}
			ops := len(run.summary.Operations)
			deadline := time.Now().Add(jaegerDeadline)
			var problem string
			for {
				problem = ""
				traces, err := fetchTraces(s.jaeger, run.service, 2*ops+100)
				if err != nil {
					problem = err.Error()
				} else {
					n := 0
					for _, o := range indexOperations(traces) {
						n += len(o.ops)
					}
					if n != ops {
						problem = fmt.Sprintf("%d operation spans in Jaeger, the demo made %d operations", n, ops)
					}
				}
				if problem == "" {
					got, err := promQuery(s.prometheus, fmt.Sprintf(`sum(%s{job=%q})`, promOperations, run.service), time.Time{})
					if err != nil {
						problem = err.Error()
					} else if len(got) != 1 || got[0].Value != float64(ops) {
						problem = fmt.Sprintf("Prometheus: %v operations, the demo made %d", got, ops)
					}
				}
				if problem == "" || time.Now().After(deadline) {
					break
				}
				time.Sleep(pollEvery)
			}
			if problem != "" {
				t.Fatalf("OTLP %s to %s: %s", c.protocol, c.endpoint, problem)
			}
			t.Logf("OTLP %s: %d operations in Jaeger and Prometheus", c.protocol, ops)
		})
	}
}
