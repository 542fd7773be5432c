// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package e2e holds the end-to-end tests of otelretry against real programs
// on 127.0.0.1, started by scripts/stack.sh: Jaeger v2, Prometheus (with
// exemplar storage), the Collector of collector-config.yaml, and the tiered
// deployment of deploy/tiered/ (an agent Collector load-balancing traces by
// trace id over two tail-sampling Collectors).
//
//   - TestStackEndToEnd: the demo (examples/demo) through the Collector:
//     span trees and attributes in Jaeger (read back by retryinspect too,
//     whose HTML report of them goes to artifacts/retryinspect-e2e.html;
//     the demo's own report of its spans is checked too), exemplars
//     leading to their traces, the demo's totals in Prometheus.
//   - TestTieredPipeline: a long-lived client in miniature (the traffic
//     generator, generator_test.go: otelretry with the OTLP exporters)
//     sends a warm-up, then 1320 operations of a known mix over at least
//     four scrape intervals through the agent. Every expression of the
//     Grafana dashboard, evaluated over exactly the measured window, must
//     equal the increase the SDK recorded (tolerance 1e-3 relative);
//     exemplar trace ids must lead to Jaeger; tail sampling must keep
//     every interesting operation whole, plain successes within binomial
//     bounds of the configured share, and no trace split across samplers.
//   - TestDemoOTLPProtocols: the demo with OTEL_EXPORTER_OTLP_PROTOCOL grpc
//     and http/protobuf reaches Jaeger and Prometheus.
//   - TestExportFailureDoesNotBreakRequests: a dead or hanging exporter
//     changes no outcome and adds no latency.
//
// Every expectation about the shape of a span tree (names, kinds,
// parent/child, counts per operation) is in checkSpanTree
// (spantree_test.go); everything else finds spans by their attributes.
// config_test.go checks the committed configuration without the stack:
// the sampling policies against package attrs, the dashboard's linter
// conventions, the Grafana provisioning.
//
// The stack tests are skipped unless OTELRETRY_E2E=1; scripts/e2e.sh
// installs and starts the stack, runs them with the endpoints it wrote to
// its env file and stops the stack again. With OTELRETRY_E2E=1 a missing
// endpoint is a failure.
//
// Environment (written by scripts/stack.sh up):
//
//	OTELRETRY_E2E=1                   run the stack tests
//	OTELRETRY_OTLP_ENDPOINT           the Collector's OTLP/HTTP endpoint (http://127.0.0.1:14318)
//	OTELRETRY_OTLP_GRPC_ENDPOINT      the Collector's OTLP/gRPC endpoint (http://127.0.0.1:14317)
//	OTELRETRY_AGENT_OTLP_ENDPOINT     the agent's OTLP/HTTP endpoint (http://127.0.0.1:15318)
//	OTELRETRY_SAMPLERS                the samplers' names (sampler-1 sampler-2)
//	OTELRETRY_PLAIN_SUCCESS_PERCENT   the share of plain successes they keep (10)
//	OTELRETRY_DECISION_WAIT           their decision_wait (5s)
//	OTELRETRY_SCRAPE_INTERVAL         Prometheus' scrape interval (2s)
//	OTELRETRY_JAEGER_URL              Jaeger's query HTTP API (http://127.0.0.1:26686)
//	OTELRETRY_PROMETHEUS_URL          Prometheus (http://127.0.0.1:19090)
//	OTELRETRY_VICTORIALOGS_URL        VictoriaLogs, the log store (http://127.0.0.1:19428)
//	OTELRETRY_DEMO_BIN                optional: a prebuilt demo binary instead of building ./examples/demo
//	OTELRETRY_E2E_REPEAT              optional: the demo's -repeat (default 3)
package e2e
