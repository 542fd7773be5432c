// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command retryinspect reads the spans of retry operations back and checks
// them against the retry attempt contract, so that the diagnostics of an
// incident are run, not remembered. It reads otelretry's spans and those of
// any implementation that records the contract's attempt event.
//
// Usage:
//
//	retryinspect [flags] FILE...
//	retryinspect [flags] -jaeger URL -service NAME
//	retryinspect [flags] -jaeger URL -trace ID
//	retryinspect [flags] -victorialogs URL [-service NAME]
//	retryinspect [flags] -victorialogs URL -trace ID
//
// Reads back the spans of retry operations (this library's or any that
// records the retry attempt contract), or the retry.attempt and
// retry.operation log events of WithLoggerProvider, from files, from
// Jaeger's API or from VictoriaLogs' query API; prints each operation with
// its attempts in order, a summary, a headline per dependency, the notes
// and the findings. With -html FILE it also writes the report as one
// self-contained HTML page (-html - writes it to stdout instead of the
// text). Exits 0 when clean, 1 when
// there are findings (or notes, with -strict), 2 on usage or input errors.
// Flags may come before, between or after the files (after "--" every
// argument is a file; a flag given twice takes its last value, but
// -stdout and -otlp, each of which names one more file); -h lists them.
// An existing -o or -html file is replaced only once both are written, so
// a run that fails writing leaves it as it was and removes the files it
// made (each is renamed into place in turn: a second rename that fails,
// which in one directory is rare, leaves the first replaced).
//
// # Inputs
//
// One kind of input is required: files, or one backend.
//
//   - FILE...: each file is read as what its content is, told from its
//     first JSON value (-format stdouttrace, otlp or jaeger names it
//     instead); "-" reads standard input. The JSON the stdouttrace exporter
//     (go.opentelemetry.io/otel/exporters/stdout/stdouttrace) writes,
//     compact or pretty-printed (WithPrettyPrint); or OTLP JSON as the
//     Collector's file exporter writes it, one ExportTraceServiceRequest per
//     line, or one ExportLogsServiceRequest per line (the log events, see
//     Log events below); or an answer of Jaeger's saved to a file: the
//     JSON of its /api/traces, which the Jaeger UI shows as a trace's
//     "Trace JSON" and takes as a JSON file (adjusted by Jaeger: a span
//     delivered twice shows once; "Trace JSON (unadjusted)" is the trace
//     as stored; it does not say whether a span's parent was remote, so
//     an attempt whose parent another service recorded and the file
//     lacks reads as one whose parent was lost), or of its /api/v3.
//     Several files are read as one input, of spans or of log records,
//     not both.
//   - -jaeger URL: Jaeger's /api/v3 HTTP API (Jaeger v2, and v1.35 or
//     later), which answers OTLP JSON. With -service NAME it searches
//     /api/v3/traces over -lookback (default 1h; 30m, 2d, ... up to about
//     292 years) for at most -limit traces (default 100); with -trace ID it
//     reads /api/v3/traces/ID. -timeout (default 10s) bounds the request.
//     Credentials in the URL are sent as basic authentication and never
//     printed: messages and the report show the URL with its userinfo
//     masked whole (REDACTED:REDACTED: a user name may be a token).
//   - -victorialogs URL: VictoriaLogs' /select/logsql/query, for the log
//     events it stored from OTLP (JSON lines, one stored record each). It
//     asks for the records carrying retry.operation.id: of -trace ID, or
//     over -lookback (default 1h), of one service.name with -service,
//     at most -limit records (default 5000; an answer that holds that many
//     is reported on standard error, as operations may be cut). -timeout
//     and the URL's credentials are as for -jaeger.
//
// The flags of v0.3, -stdout FILE and -otlp FILE, still read FILE as
// stdouttrace JSON or OTLP JSON for one more release; each says on
// standard error that it is deprecated.
//
// OTLP JSON, from a file or from Jaeger, is decoded by the Collector's own
// decoder (go.opentelemetry.io/collector/pdata), in one place.
//
// -max-bytes (default 64MiB; KiB, MiB, GiB or bytes) bounds what is read
// from each file, standard input or one answer of a backend, so that a
// wrong path (/dev/zero) or an endless body fails fast instead of
// exhausting memory.
//
// # Log events
//
// With WithLoggerProvider the transport emits one retry.attempt record per
// attempt (the attempt span's attributes, in its context, timed at the
// attempt's end) and one retry.operation record per operation (its outcome,
// reason, attempts, time limit, id, method, URL, server and
// retry.operation.duration_ms, in the operation span's context, timed at
// its start). Read from them, the report is the one the spans of the same
// run give: an operation per retry.operation record, an attempt per
// retry.attempt record, joined by trace and operation id (by time between
// the hops of a redirect chain). The event name is the record's event name
// or its event.name attribute; records of other events are counted, not
// read. An attempt starts retry.elapsed_ms before its record's time.
//
// What only the span tree tells becomes a needs-spans note, never a false
// finding: attempts without their operation record (a lost operation span,
// or none recorded), a write sent again after check_state (the state
// check's answer is on its span), a write's retry.operation.repeat whose
// earlier operations are not found under its operation id (they may share
// its parent span), a write that began within a millisecond of the end of
// an earlier failed one of its id (records give ends in whole
// milliseconds: a resend, or a fan-out). A retry with no next attempt is checked as from spans
// (the retry.operation record carries retry.abandoned_attempt too). Span ids are not checked
// for reuse, and outer-layer-resend compares operations by operation id
// only (the parent span is not in a record). VictoriaLogs stores every value as
// text: the reader gives the contract's integer and boolean attributes
// their type back, so a type the emitter got wrong shows only in OTLP.
//
// A malformed input is reported with its line and column and exit status 2,
// as are a span with a timestamp outside years 0 to 9999, an unreachable
// endpoint, an input over the size limit and an input without any span.
// Spans that break the contract are never an input error: they become
// findings.
//
// # Output
//
// For each operation (one operation span, or attempts found without one):
// its id, method, URL (redacted again for display), outcome, trace and
// span ids, start, time limit (retry.deadline_ms) and recorded attempt
// count, the redirect hop (retry.redirects) and repeat count
// (retry.operation.repeat) when recorded, and the hedges it sent and
// refused (its span's hedge_sent and hedge_refused events) when any; then
// its attempts ordered by retry.attempt and start time, with request id,
// status or error class, start relative to the operation, elapsed, time
// remaining, decision, reason (retry.reason, a column shown when an
// attempt records one), hedge (a column shown when an attempt is a hedge
// or was hedged: "of 1" for a hedge of attempt 1, retry.hedge.of;
// "alongside 1" for an attempt that records none but started while
// attempt 1 was in flight; "hedged after 50ms",
// retry.hedge.sent_after_ms), Retry-After and backoff. State checks
// appear between the attempts they separate.
//
// The summary gives the share of each decision, error class and status
// code over all attempts (decisions describe the client, error classes and
// statuses the failures: they are never folded together), the count and
// share of each outcome over the operations, the retry ratio (attempts that
// decided retry / attempts) and the deadline ratio (operations that ended
// deadline_exceeded / operations; a write the deadline cut in flight ends
// check_state, its outcome unknown, and counts under that outcome, not
// here, as the metrics count it).
//
// Then a headline per dependency, the service the operations call, the
// one with the most operations that did not return first: how many did
// not return and how, what its failed attempts got, the load its retries
// and hedges added (attempts per operation), the retries the budget
// refused and its findings (each once, however many of its operations a
// finding names), e.g. "inventory.internal: 45 of 49 operations did not
// return: 30 max_attempts, 14 budget_exhausted, 1 deadline_exceeded; all
// failed attempts 503; 2.24× load; the budget refused 14 retries". A
// dependency that hedged or refused a hedge adds its hedge rate
// (operations that sent a hedge / operations), its hedge win rate
// (operations whose winning attempt was a hedge / hedged operations) and
// its hedge_refused events by reason (see Hedged operations); a superseded
// attempt is not a failed one: another attempt won (one superseded by the
// operation's end, reason operation_ended, is: no attempt won). The text, JSON and
// HTML reports give each headline word for word.
//
// A dependency is named by what the spans say of the service called,
// best first: service.peer.name (semantic conventions v1.43) on the
// operation span or an attempt span; peer.service, the attribute it
// replaced; the service.name of the server's span under an attempt, when
// the trace holds it and it is not the caller's own; else server.address
// and server.port, the port left out when it is the default of the URL's
// scheme, as the URL's host, otelretry's retry budget key by default,
// leaves it out; else, on spans without server.address (the attempts' log
// records, their operation's record lost), url.full's host. The method is no part of it: the budget is shared by a
// host's methods.
//
// -json prints the same report as one JSON document with the keys spans,
// operations (each with its dependency), summary, dependencies (each with
// its name, where the name came from, its figures and its headline; its
// hedging only where there are hedges), notes and findings (hedging adds
// hedge_of, hedge_sent_after_ms and overlaps to attempts and hedge_events
// to operations, only where there are hedges). -o FILE writes the text or
// JSON report to FILE instead of stdout.
//
// # HTML report
//
// -html FILE writes the same report as one self-contained HTML page, for
// a browser, besides the text (or -json) on stdout; -html - writes the
// page to stdout instead of the text (and excludes -json). The exit status
// is the same. The page loads nothing: inline CSS and SVG, no script, and a
// Content Security Policy that forbids any request. It shows:
//
//   - first, the headline of each dependency, as the text report gives it;
//   - the figures, and a legend that stays in view: one colour per decision
//     and per outcome (an outcome has the colour of the terminal decision of
//     its name), one for any other value;
//   - an incident overview: all operations on one time axis, one lane per
//     dependency, busiest first: with up to 80 operations each is a bar
//     coloured by outcome, with a tick at each extra attempt (a retry or a
//     hedge), and the lane's count of them; with more, each lane is a
//     histogram of first and extra attempts over time, on one scale,
//     so that a storm on one dependency stands out; under it, on the same
//     axis, a strip of the retry ratio over time (the share of the attempts
//     started in each stretch that decided retry) with a mark wherever the
//     retry budget refused a retry (budget_exhausted);
//   - the findings and notes in the words of the text report, each linked
//     to the timelines of the operations it names;
//   - a timeline per group of identical operations (the same method, route,
//     that is the URL without its query, outcome and findings, the same
//     decision, result and hedge attempt by attempt), with their count and
//     list, the groups with findings first, then those that did not return,
//     then the rest, each in time order. A timeline draws the group's first
//     operation on its own time axis, from its start to about its end: its
//     attempts as a waterfall, each a bar from its start for its elapsed
//     time, coloured by its decision and labelled with its result, decision
//     and reason (and, for a hedge, the attempt it hedges); attempts that
//     overlap in time (a hedge and the attempt it hedged) are parallel
//     lanes: a row each, on one band per round of attempts in flight
//     together, with a dotted link from the attempt hedged down to its
//     hedge where it was sent, and a superseded attempt faded with a dashed
//     outline (the legend explains these only on a page with hedges); the
//     pause before an attempt as a dashed gap; the time left before each call
//     (retry.remaining_ms) in the left column and as a thin line towards the
//     deadline, a vertical line when it falls near the operation's end, else
//     a marker past the axis; and for an operation cut by its deadline, the
//     time left after its last call (only a stop mark when the deadline is
//     past the axis) and the pause (Retry-After or backoff) that would have
//     crossed the deadline. Each timeline has the text report's attempt
//     table below it;
//   - distributions of attempts per operation, outcomes, decisions,
//     reasons, status codes and error classes.
//
// Labels are placed where they fit in their drawing, and shortened only
// when they fit nowhere (the tooltip and the table hold them whole). With
// more than 200 timelines it draws the first 200 and summarizes the
// operations of the others; with more than 500 findings it lists 500 and
// counts all by code.
//
// The text report escapes control characters, bidirectional formatting
// characters and invalid UTF-8 in everything it prints from the input (the
// HTML report shows the same escaped text, escaped again for HTML), and
// no message repeats a URL's secrets: URLs, and URLs inside span names and
// values, are shown sanitized (userinfo REDACTED:REDACTED, query values
// REDACTED) by the sanitizer the library records them with. Other text is
// shown as the input holds it: a token a producer wrote into a value
// outside a URL (an Authorization value in an error's text) is the
// producer's leak, which the report repeats.
//
// Example, on the contract's fixed read timeline:
//
//	retryinspect: 1 operation, 3 attempts in 7 spans (1 operation, 3 attempt, 0 state check, 3 without retry attributes; 0 duplicate deliveries)
//
//	operation op-read-v2  GET http://127.0.0.1:8080/items  outcome return
//	  trace 00000000000000000000000000000001  span 0000000000000001  start 2026-01-02T03:04:05.000Z  deadline 400ms  attempts 3
//	  #  REQUEST ID            RESULT      AT      ELAPSED  REMAINING  DECISION  REASON            RETRY-AFTER  BACKOFF
//	  1  op-read-v2/attempt-1  status 503  +0ms    80ms     400ms      retry     retryable_status  -            40ms
//	  2  op-read-v2/attempt-2  status 503  +120ms  80ms     280ms      retry     retryable_status  -            40ms
//	  3  op-read-v2/attempt-3  status 200  +240ms  50ms     160ms      return    response          -            -
//
//	summary: 1 operation, 3 attempts
//	  decisions       return 1 (33.3%), retry 2 (66.7%)
//	  error classes   none
//	  status codes    200 1 (33.3%), 503 2 (66.7%)
//	  outcomes        return 1 (100.0%)
//	  retry ratio     0.667 (2 of 3 attempts)
//	  deadline ratio  0.000 (0 of 1 operation)
//
//	dependencies: 1 (by the service they call)
//	  127.0.0.1:8080: all 1 operation returned; all failed attempts 503; 3× load
//
//	findings: none
//
// # Spans
//
// Attribute names come from package attrs, but for the dependency's name,
// read from semconv's service.peer.name, peer.service or service.name.
// Spans are told apart by their
// retry.* attributes, never by name or kind (an attempt span may be the
// transport's own span or otelhttp's CLIENT span named "GET"): a span with
// retry.attempt is an attempt; a span with retry.state_check.result (or
// named state_check, with retry.operation.id) is a state check (the JSON
// report gives its retry.state_check.attempt, the attempt it checked, as
// its attempt); a span with
// retry.outcome or retry.attempts (and no retry.attempt) is an operation.
// Every other span (HTTP client and server spans, handlers) is only counted
// and scanned for URLs. An attempt belongs to the nearest operation span
// above it; attempts without one are grouped by trace and operation id.
//
// The time limit is read from retry.deadline_ms, or from retry.budget_ms,
// its name before v0.2.0, so that older traces still read.
//
// # Hedged operations
//
// A hedged operation (otelretry's WithHedging, or another implementation's
// hedges) has attempts that overlap in time: a hedge is sent while the
// attempt it hedges is still in flight. Attempts are ordered by number,
// which is the order they started in, and overlapping ones are never out
// of order: numbering, remaining time and the deadline are checked as for
// any attempts. An attempt is a hedge when it records the attempt it
// hedges (retry.hedge.of) or when it started while an earlier attempt of
// its operation was in flight, whatever it records. A superseded attempt
// (decision superseded, reason other_attempt: another attempt won, and it
// was canceled; or operation_ended: the caller or a deadline ended the
// operation with no answer) ends nothing, and a retry that another attempt in flight
// carries on (reason in_flight, or any retry that ended while another
// attempt was in flight) needs no pause (no retry.backoff_ms note) and no
// next attempt. The attempt an operation ended on is the last one but
// those: in a hedged operation, the winner (the first answer whose verdict
// is not retry), or the retry of the last round of attempts; it is the one
// retry-without-next, the result of outer-layer-resend and the win rate
// look at. A hedge of a request that may not be sent twice is a finding
// (unsafe-hedge): the repeatability rule is unsafe-resend's. The
// hedge_sent and hedge_refused events are on the operation span only:
// read from log records, hedges sent are told by the attempts alone, and
// the refused ones, with their reasons, by the retry.operation record's
// retry.hedge.refused.
//
// # Notes and findings
//
// The contract's minimal attempt event is: retry.operation.id,
// retry.request.id, retry.attempt, http.request.method,
// http.response.status_code XOR retry.error_class, retry.elapsed_ms,
// retry.remaining_ms and retry.decision. An operation span, when there is
// one, needs retry.operation.id and retry.outcome; a state check
// retry.operation.id and retry.state_check.result.
//
// A finding is a violation of the contract or a pattern of its diagnostic
// matrix: it makes the run exit 1. A note is an absence the contract
// allows: an attribute this library records that another implementation
// may leave out, or no operation span at all. Notes are printed (counted,
// with the first span of each kind) and fail the run only with -strict, so
// that a trace carrying the minimal attempt event and no matrix pattern
// exits 0 whoever recorded it.
//
// The note codes:
//
//	missing-optional-attribute a span lacks an attribute the contract does not require: on an operation span
//	                           http.request.method, url.full, server.address, retry.attempts or retry.deadline_ms
//	                           (or retry.budget_ms); on an attempt that decided retry (but reason in_flight),
//	                           retry.backoff_ms. Checks that need it are skipped
//	no-operation-span          attempts without an operation span above them whose parent spans are present (or that are
//	                           roots): the implementation records none. Operation-level checks are skipped
//	needs-spans                read from log records, a check needs the span tree: attempts without their retry.operation
//	                           record, a write sent after check_state, a write's repeat marker with no earlier
//	                           operation of its id, a write begun within a millisecond of an earlier one's end;
//	                           read the traces
//
// Each finding names the operation, trace and span, what was seen and what
// to check next. The finding codes are stable:
//
//	status-and-error-class     an attempt records both http.response.status_code and retry.error_class
//	no-status-or-error-class   an attempt records neither
//	remaining-grows            retry.remaining_ms grows from one attempt to the next (wall clock mixed with monotonic)
//	retry-without-next         the attempt the operation ended on (the last, but a superseded attempt or a retry another
//	                           attempt in flight carried on) decided retry and the operation outcome does not explain it
//	                           (only deadline_exceeded, canceled and budget_exhausted end an operation between attempts)
//	operation-id-split         attempts of one operation carry different operation ids: an attempt or state check whose
//	                           operation span has another id, or attempts without an operation span under several ids in
//	                           one trace that count on from each other (an id whose first attempt is not attempt 1)
//	operation-id-reused        one operation id on several operation spans (the id is not made per operation); the later
//	                           hops of a redirect chain (retry.redirects) and repeats the transport counted
//	                           (retry.operation.repeat) may share it
//	duplicate-request-id       one attempt span delivered more than once, or several attempt spans sharing a request id
//	span-id-reused             one span id delivered again with differing content (parent, name, kind, times,
//	                           attributes or events); the first copy is analyzed
//	unsafe-resend              a method other than GET, HEAD, OPTIONS and TRACE sent again after an attempt that does not
//	                           prove the request was not processed (anything but connection_refused, dns, tls,
//	                           refused_stream, or a retry the transport recorded with reason not_processed,
//	                           server_retry or classifier: e.g. a timeout, connection_reset or a 503), with no
//	                           retry.idempotency_contract=true and no idempotency key (retry.idempotency_key.source:
//	                           generated or caller) on the operation, and no state check answering not_applied between
//	                           the two calls
//	unsafe-hedge               a hedge of a request that may not be sent twice: an attempt that records retry.hedge.of,
//	                           or started while an earlier attempt of its operation was in flight, of a method other than
//	                           GET, HEAD, OPTIONS and TRACE with no retry.idempotency_contract=true on the operation
//	                           (Intent.Repeatable, WithIdempotentMethods or an idempotency key record it) and no
//	                           retry.idempotency_key.source
//	outer-layer-resend         an operation repeats an earlier one of the same non-idempotent request (same method, not
//	                           GET, HEAD, OPTIONS or TRACE, and same sanitized URL, no retry.idempotency_contract=true
//	                           and no retry.idempotency_key.source: a repeat under the same key is safe)
//	                           under the same parent span or the same operation id (in any trace), after the earlier one
//	                           did not end with a 1xx-3xx status and made an attempt (not one the throttle refused); or
//	                           it carries retry.operation.repeat > 0 and no earlier
//	                           operation of its id is in the input. A layer above the retry transport (go-retryablehttp
//	                           stacked over it, an application loop) sent it again. Never raised on a later hop of a
//	                           redirect chain (retry.redirects: a 307 or 308 resends a POST by design)
//	unredacted-url             a URL attribute on any span (url.*, *.url, *.target: url.full, url.query, http.url, ...)
//	                           carries userinfo or a query value other than REDACTED; the secret is not repeated
//	attempt-after-deadline     an attempt started after operation start + retry.deadline_ms (1ms tolerance), or with
//	                           retry.remaining_ms < 0 (0 is under 1 ms left); a time limit beyond what a duration holds never wraps
//	attempt-numbering          retry.attempt values of an operation are not 1, 2, ... n (on a later redirect hop or a
//	                           counted repeat, which may go on counting: not consecutive; of operations of one id in
//	                           flight together, whose numbers interleave: not 1, 2, ... n between them)
//	attempt-count-mismatch     retry.attempts differs from the number of attempt spans (lost spans)
//	missing-operation-span     attempts or state checks whose operation span was lost: their parent span is not in the
//	                           input (unsampled, unended, unflushed), or the operation span with their id is in another
//	                           trace
//	missing-attribute          a span lacks an attribute of the minimal attempt event (or an operation span its id or
//	                           outcome)
//	invalid-attribute          an attribute has the wrong type, a value outside its closed vocabulary, a negative count
//	                           or duration, or a retry.attempt that is not a positive integer (NaN, infinite, fractional)
//
// Several operations in one trace, each under its own operation span or
// each counting its attempts from 1, are legitimate and raise nothing.
//
// Analysis takes time and memory linear in the number of spans (plus
// sorting), whatever their nesting, parent cycles included; see
// BenchmarkAnalyze in internal/inspect.
//
// # Tests
//
// The command is the function run(args, stdout, stderr) int, which tests
// call directly. Golden outputs live in testdata/golden; after an intended
// change of the output, run, in cmd/retryinspect (a module of its own),
//
//	go test . -update
//
// The readers are also tested on real captures of Jaeger and the
// Collector, in internal/read/testdata; its README says how they were
// taken and how to take them again.
package main
