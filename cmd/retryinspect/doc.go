// Command retryinspect reads the spans of otelretry operations back and
// checks them against the retry attempt contract, so that the diagnostics
// of an incident are run, not remembered.
//
// Usage:
//
//	retryinspect --stdout FILE|-        [--json]   stdouttrace JSON (a file, or - for stdin)
//	retryinspect --otlp FILE|-          [--json]   OTLP JSON lines (Collector file exporter)
//	retryinspect --jaeger URL --service NAME [--lookback 1h] [--limit N] [--json]
//	retryinspect --jaeger URL --trace ID [--json]
//
// Reads back the spans of otelretry operations, prints each operation with
// its attempts in order, a summary and the findings. Exits 0 when clean, 1
// when there are findings, 2 on usage or input errors.
//
// # Inputs
//
// Exactly one input is required:
//
//   - --stdout FILE: the stream of span objects that
//     go.opentelemetry.io/otel/exporters/stdout/stdouttrace writes, compact or
//     pretty-printed (WithPrettyPrint); "-" reads standard input.
//   - --otlp FILE: OTLP JSON as the Collector's file exporter writes it, one
//     ExportTraceServiceRequest per line; "-" reads standard input.
//   - --jaeger URL: the Jaeger query service's HTTP API. With --service NAME
//     it searches /api/traces over --lookback (default 1h; 30m, 2d, ...) for
//     at most --limit traces (default 100); with --trace ID it reads
//     /api/traces/ID. --timeout (default 10s) bounds the request.
//
// A malformed input is reported with its line and column and exit status 2,
// as are an unreachable endpoint and an input without any span. Spans that
// break the contract are never an input error: they become findings.
//
// # Output
//
// For each operation (one operation span, or attempts found without one):
// its id, method, URL (redacted again for display), outcome, trace and
// span ids, start, budget and recorded attempt count; then its attempts
// ordered by retry.attempt and start time, with request id, status or error
// class, start relative to the operation, elapsed, remaining budget,
// decision, Retry-After and backoff. State checks appear between the
// attempts they separate.
//
// The summary gives the share of each decision, error class and status
// code over all attempts (decisions describe the client, error classes and
// statuses the failures: they are never folded together), the count and
// share of each outcome over the operations, the retry ratio (attempts that
// decided retry / attempts) and the deadline ratio (operations that ended
// deadline_exceeded / operations).
//
// --json prints the same report as one JSON document with the keys spans,
// operations, summary and findings.
//
// Example, on the contract's fixed read timeline:
//
//	retryinspect: 1 operation, 3 attempts in 10 spans (1 operation, 3 attempt, 0 state check, 6 without retry attributes; 0 duplicate deliveries)
//
//	operation op-read  GET http://127.0.0.1:8080/items  outcome return
//	  trace 00000000000000000000000000000001  span 0000000000000001  start 2026-01-02T03:04:05.000Z  budget 400ms  attempts 3
//	  #  REQUEST ID         RESULT      AT      ELAPSED  REMAINING  DECISION  RETRY-AFTER  BACKOFF
//	  1  op-read/attempt-1  status 503  +0ms    80ms     400ms      retry     -            40ms
//	  2  op-read/attempt-2  status 503  +120ms  80ms     280ms      retry     -            40ms
//	  3  op-read/attempt-3  status 200  +240ms  50ms     160ms      return    -            -
//
//	summary: 1 operation, 3 attempts
//	  decisions       return 1 (33.3%), retry 2 (66.7%)
//	  error classes   none
//	  status codes    200 1 (33.3%), 503 2 (66.7%)
//	  outcomes        return 1 (100.0%)
//	  retry ratio     0.667 (2 of 3 attempts)
//	  deadline ratio  0.000 (0 of 1 operation)
//
//	findings: none
//
// # Spans
//
// Attribute names come from package attrs. A span with retry.attempt is an
// attempt; a span named state_check or with retry.state_check.result is a
// state check; a span with retry.outcome or retry.attempts (and no
// retry.attempt) is an operation. Every other span (otelhttp client and
// server spans, handlers) is only counted and scanned for URLs. An attempt
// belongs to the nearest operation span above it; attempts whose operation
// span is missing are grouped by trace and operation id.
//
// # Findings
//
// Each finding names the operation, trace and span, what was seen and what
// to check next. The codes are stable:
//
//	status-and-error-class     an attempt records both http.response.status_code and retry.error_class
//	no-status-or-error-class   an attempt records neither
//	remaining-grows            retry.remaining_ms grows from one attempt to the next (wall clock mixed with monotonic)
//	retry-without-next         the last attempt decided retry and the operation outcome does not explain it
//	                           (only deadline_exceeded, canceled and budget_exhausted end an operation between attempts)
//	operation-id-split         attempts of one operation carry different operation ids: an attempt or state check whose
//	                           operation span has another id, or attempts without an operation span under several ids in one trace
//	operation-id-reused        one operation id on several operation spans (the id is not made per operation)
//	duplicate-request-id       one attempt span delivered more than once, or several attempt spans sharing a request id
//	unsafe-resend              a method other than GET, HEAD, OPTIONS and TRACE sent again after an attempt that does not
//	                           prove the request never left (anything but connection_refused, dns, tls: e.g. a timeout,
//	                           connection_reset or a 503), with no retry.idempotency_contract=true on the operation and
//	                           no state check answering not_applied between the two calls
//	unredacted-url             a URL attribute on any span (url.*, *.url, *.target: url.full, url.query, http.url, ...)
//	                           carries userinfo or a query value other than REDACTED; the secret is not repeated
//	attempt-after-deadline     an attempt started after operation start + retry.budget_ms (1ms tolerance), or with
//	                           retry.remaining_ms <= 0
//	attempt-numbering          retry.attempt values of an operation are not 1, 2, ... n
//	attempt-count-mismatch     retry.attempts differs from the number of attempt spans (lost spans)
//	missing-operation-span     attempts or state checks without their operation span (unsampled, unended, unflushed,
//	                           or in another trace)
//	missing-attribute          a span lacks an attribute the contract requires
//	invalid-attribute          an attribute has the wrong type or a value outside its closed vocabulary
//
// Several operations in one trace, each under its own operation span, are
// legitimate and raise nothing.
//
// # Tests
//
// The command is the function run(args, stdout, stderr) int, which tests
// call directly. Golden outputs live in testdata/golden; after an intended
// change of the output, run
//
//	go test ./cmd/retryinspect -update
package main
