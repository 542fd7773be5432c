// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package otelretry is an http.RoundTripper that retries HTTP requests
// within one deadline, refuses to resend writes whose outcome is unknown,
// and records every operation and attempt with OpenTelemetry so that each
// retry can be read back and checked field by field.
//
// Wrap an existing client:
//
//	client := &http.Client{Transport: otelretry.NewTransport(http.DefaultTransport,
//		otelretry.WithMaxAttempts(3),
//		otelretry.WithDeadline(400*time.Millisecond),
//		otelretry.WithBackoff(otelretry.ConstantBackoff(40*time.Millisecond)))}
//	ctx = otelretry.WithOperationID(ctx, "op-42") // at the operation boundary
//	resp, err := client.Do(req.WithContext(ctx))
//
// # Spans
//
// One RoundTrip is one operation: an INTERNAL span ("retry GET") that
// carries, from its start, retry.operation.id, http.request.method, a
// sanitized url.full, server.address and server.port, and at its end
// retry.deadline_ms, retry.attempts, retry.outcome and, unless the outcome
// is return, error.type.
//
// Each network attempt is one CLIENT span, a child of the operation span:
// otelhttp's client span (named "GET", as the HTTP semantic conventions
// name client spans, with otelhttp's HTTP attributes), which also carries
// the attempt event: retry.operation.id, retry.request.id, retry.attempt,
// http.response.status_code or retry.error_class (never both),
// retry.elapsed_ms, retry.remaining_ms (the operation's time left before
// the call), retry.decision and retry.reason, retry.retry_after_ms,
// retry.backoff_ms, http.request.resend_count, error.type and
// retry.wire.writes. Trace context is injected from it. With
// WithoutClientSpans the attempt span is the transport's own INTERNAL span
// and the base's own CLIENT span nests under it. A slog record (WithLogger)
// and an OpenTelemetry log event named retry.attempt (WithLoggerProvider)
// carry the same fields; the log events add one retry.operation record
// per operation. Attribute names live in package attrs.
//
// # Decisions
//
// After each attempt one pure function decides (attrs.Decision), and the
// attempt span says why (attrs.Reason):
//
//   - a 2xx or 3xx response (or 101): return;
//   - a write that timed out or whose connection broke after it may have
//     been sent: check_state. It is not resent; RoundTrip returns an error
//     matching ErrOutcomeUnknown, unless a StateCheckFunc (WithStateCheck)
//     resolves it. A write in flight when the caller's deadline passes ends
//     deadline_exceeded, reason caller, and is unknown too;
//   - a request that is safe to repeat (GET, HEAD, OPTIONS, TRACE, methods
//     added with WithIdempotentMethods, an Idempotency-Key under
//     WithIdempotencyKeyContract, or Intent.Repeatable) that got 408, 429,
//     502, 503, 504 or a transport error, or any request whose error proves
//     it was not processed (connection refused, DNS, TLS handshake, dial
//     failure, a cut before the base reported a connection, or a
//     classifier's NotProcessed): retry, unless the pause
//     would reach the deadline (deadline_exceeded), no attempt is left
//     (max_attempts), the body cannot be replayed (stop) or the retry
//     budget refuses (budget_exhausted: see Budget);
//   - anything else: stop; a canceled caller: canceled.
//
// A Classifier (WithClassifier), the request's Intent (WithIntent), a
// PrepareFunc (WithPrepareAttempt) and an AnswerBackoff shape the policy;
// none of them can resend a write whose outcome is unknown or lift the
// budget. An Intent may set the request's own deadline, attempt limit and
// attempt timeout, higher or lower than the Transport's; the context's
// deadline still applies when it is earlier.
//
// # Time
//
// The operation deadline is the earliest of the context's deadline,
// start+WithDeadline (or Intent.Deadline) and, for a redirect hop, the
// first hop's deadline, on the monotonic clock. No attempt starts and no
// pause begins that cannot end before it. When the caller's deadline ends
// the operation, RoundTrip returns once the caller's context is done, so a
// loop above that stops on ctx.Err() makes no other call in it.
// WithAttemptTimeout (or Intent.AttemptTimeout) cuts only what the policy
// could retry: for a request it may repeat, or a write a state check
// resolves, it bounds the wait for each attempt's response headers (at
// most the time left); for any other write, only getting a connection and
// writing the headers, since a cut after that would leave the outcome
// unknown and could not be retried. An attempt cut before the base
// reported a connection was not sent, and is retried. The body of the
// response handed to the caller belongs to the caller's context alone, so
// streams and slow downloads are not cut. A discarded response body is
// drained only within the pause before the next attempt.
//
// # net/http and other layers
//
// net/http resends on its own a request it deems replayable when a
// keep-alive connection dies; for a write the policy does not treat as
// repeatable, the transport refuses that resend once the request was
// written, and every write on the wire is counted (retry.wire.writes).
// http.Client's Timeout is the caller's deadline; it flattens the error,
// so read the outcome from a Results slot (WithResults), which no layer
// above can rewrite. The hops of a redirect
// chain share the operation id and keep counting attempts
// (retry.redirects marks them); an operation that repeats an earlier one
// under the same context (an outer retry layer) carries
// retry.operation.repeat.
//
// # Results
//
// When the last attempt received a response, RoundTrip returns that
// response, whatever the outcome (a 503 after max_attempts is returned as the
// 503 the server sent). Otherwise it returns an *Error with the outcome, the
// reason, the operation id, the number of attempts and the last cause; it
// is a net.Error whose Timeout is false for a write whose outcome is
// unknown, so that retryers above do not resend it.
// A base, a hook or the telemetry (a span processor, a log exporter, a
// metric view, a slog handler) that panics has what the operation holds
// released (buffers, bodies, the response being handed over) and its spans
// ended, with a panic event, and the panic goes on.
//
// # Secrets
//
// URLs are recorded with userinfo as REDACTED:REDACTED and every query
// value replaced by REDACTED, on every span, log record and error message,
// including the messages of a base's *url.Error. Headers, cookies and
// bodies are never recorded.
package otelretry
