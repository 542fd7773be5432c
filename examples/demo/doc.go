// Command demo runs otelretry against a local flaky server and prints, for
// every operation, the attempt events read back from the spans, then a
// summary computed from the retry metrics.
//
// The server (127.0.0.1, instrumented with otelhttp) plays the negative
// paths of the retry contract: first-call success; 503, 503, 200; a
// deadline that runs out; GET timeouts up to the attempt limit; a POST that
// times out (check_state, one call); a Retry-After longer than the budget;
// state checks that resolve an unknown write either way; and a retry
// budget that refuses.
//
// Traces go to stdout as stdouttrace JSON (or -traces FILE), or over OTLP
// HTTP, together with metrics, when OTEL_EXPORTER_OTLP_ENDPOINT is set.
//
//	go run ./examples/demo
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 go run ./examples/demo
package main
