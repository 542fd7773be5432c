// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command demo runs otelretry against a local flaky server and prints, for
// every operation, the attempt events read back from the spans (the table
// retryinspect prints), then a summary computed from the retry metrics
// (failed attempts counted by their error class or status), then where the
// telemetry went. It also writes retryinspect's HTML report of its spans
// (timelines of every operation's attempts, an overview, the findings),
// whichever exporter the spans went to, to -html FILE. Without -html, and
// without -traces for the spans, it writes them to temporary files, which
// it removes at exit.
//
// The server (127.0.0.1, instrumented with otelhttp) is another service,
// flaky-server: its spans carry a resource of their own, and each sits
// under the attempt that called it, in the attempt's trace (the W3C
// trace context crosses, OTEL_PROPAGATORS choosing the propagators). It
// plays the negative
// paths of the retry contract: first-call success; 503, 503, 200; a
// deadline that runs out; GET timeouts up to the attempt limit; a POST that
// times out (check_state, one call); a Retry-After longer than the deadline;
// state checks that resolve an unknown write either way; a retry budget
// that refuses; and a slow read whose hedge, sent after 50 ms, answers
// first (the stalled attempt ends superseded).
//
// Telemetry follows the standard environment, through contrib's autoexport
// and autoprop: OTEL_TRACES_EXPORTER (otlp, console, none),
// OTEL_METRICS_EXPORTER (otlp, console, prometheus, none),
// OTEL_LOGS_EXPORTER (otlp, console, none),
// OTEL_EXPORTER_OTLP_PROTOCOL (grpc, http/protobuf),
// OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_PROPAGATORS, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_METRICS_EXEMPLAR_FILTER (default
// trace_based). With none of the exporter variables set, the spans go as
// stdouttrace JSON to -traces FILE (-traces - for stdout after the report;
// a temporary file without it), the metrics stay in the report and no log
// events are made; OTEL_EXPORTER_OTLP_ENDPOINT alone selects OTLP
// (http/protobuf) for all three: traces, metrics and log events.
//
//	go run ./examples/demo
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 go run ./examples/demo
//	OTEL_EXPORTER_OTLP_PROTOCOL=grpc OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4317 go run ./examples/demo
//
// -repeat N runs the scenario set N times, back to back, or one every
// -every DURATION: a service that keeps running, which the dashboards
// read (they count increases, and a run that exits at once exports its
// metrics once, as it ends, into series whose first sample holds them):
//
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 OTEL_METRIC_EXPORT_INTERVAL=5000 go run ./examples/demo -repeat 60 -every 5s
//
// An interrupt (Ctrl-C) ends such a run after the sets it played, the one
// it cut included (an operation it cut ended canceled): they are reported
// and their telemetry flushed. Without -every, an interrupt ends the demo
// at once, with an error.
//
// Exit status: 0 when it ran (a run with -every that an interrupt ended
// included), 1 when it failed (a telemetry setup step, an endpoint it
// refuses, an -html or -summary-json file in a directory that does not
// exist, found before it plays; an interrupt without -every), 2 on a bad
// flag.
package main
