// Package e2e holds the end-to-end tests of otelretry against real programs:
// the demo (examples/demo) sends its traces and metrics through an
// OpenTelemetry Collector (collector-config.yaml) into Jaeger v2 and
// Prometheus, started on 127.0.0.1 by scripts/stack.sh.
//
// The tests are skipped unless OTELRETRY_E2E=1; scripts/e2e.sh installs and
// starts the stack, runs them with the endpoints it wrote to its env file and
// stops the stack again. With OTELRETRY_E2E=1 a missing endpoint is a failure.
//
// Environment:
//
//	OTELRETRY_E2E=1                 run the tests
//	OTELRETRY_OTLP_ENDPOINT         the Collector's OTLP/HTTP endpoint (http://127.0.0.1:14318)
//	OTELRETRY_JAEGER_URL            Jaeger's query HTTP API (http://127.0.0.1:26686)
//	OTELRETRY_PROMETHEUS_URL        Prometheus (http://127.0.0.1:19090)
//	OTELRETRY_DEMO_BIN              optional: a prebuilt demo binary instead of building ./examples/demo
//	OTELRETRY_E2E_REPEAT            optional: the demo's -repeat (default 3)
//
// The Prometheus part reads every PromQL expression of
// deploy/grafana/dashboards/otelretry.json, substitutes the dashboard
// variables ($job with this run's service name; $__range, $__rate_interval
// and $__interval with one window that covers the whole run) and compares the
// instant-query result at "now" with the value computed from the demo's
// summary JSON.
package e2e
