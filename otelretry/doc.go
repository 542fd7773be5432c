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
// retry.backoff_ms, http.request.resend_count, error.type,
// retry.wire.writes and, for a request that carries an idempotency key,
// retry.idempotency_key.source and retry.idempotency_key.replayed. Trace
// context is injected from it. With
// WithoutClientSpans the attempt span is the transport's own INTERNAL span
// and the base's own CLIENT span nests under it. A slog record (WithLogger)
// and an OpenTelemetry log event named retry.attempt (WithLoggerProvider)
// carry the same fields; the log events add one retry.operation record
// per operation. Attribute names live in package attrs.
//
// # Decisions
//
// After each attempt one pure function decides (attrs.Decision), and the
// attempt span says why (attrs.Reason). The request is judged first, in
// two frozen stages: before any preparation, from the caller's request,
// its Intent and the options; then on the first attempt's prepared
// request (an idempotency key under WithIdempotencyKeyContract). The
// first row that matches decides.
//
// The rows, in order (generated from the decision table; see docs/decisions.md):
//
//   - 1. before a call, the caller canceled (any): canceled, no call made,
//     reason caller
//   - 2. before a call, the caller's deadline passed (any):
//     deadline_exceeded, no call made, reason caller
//   - 3. before a call, no time left for the call a retry planned (work
//     after the decision took it); an attempt_abandoned event on the
//     operation span (any): deadline_exceeded, no call made, reason overrun
//   - 4. before a call, no time left (any): deadline_exceeded, no call
//     made, reason deadline
//   - 5. before the first call, the client-side throttle (WithThrottle)
//     refused the operation's first attempt (the admission asks nothing
//     else of a first attempt) (any): throttled, no call made, reason
//     throttle
//   - 6. once prepared, GetBody failed (an error, or no body and no error)
//     (any): stop, no call made (a repeatable write whose outcome is
//     unresolved: check_state, reason unknown_write [2]), reason
//     not_replayable
//   - 7. once prepared, the PrepareAttemptFunc failed, or changed the
//     method, the host or (after the first attempt) the idempotency-key
//     contract's headers, or made a header or trailer net/http's Transport
//     refuses (checked with net/http's Transport as the base, over http or
//     https, where the fields were sendable before the hook, or for a
//     hedge), or made a hedge that asks to switch protocols (an Upgrade the
//     Connection field names) (any): stop, no call made (a repeatable write
//     whose outcome is unresolved: check_state, reason unknown_write [2]),
//     reason prepare_failed
//   - 8. once prepared, two different idempotency keys in the contract's
//     headers (the caller's, or one a PrepareAttemptFunc added beside the
//     generated key) (any): stop, no call made, reason key_conflict
//   - 9. after an attempt, anything, after another attempt of the operation
//     (a hedge, or the attempt it hedged) won, or ended it with no answer
//     (the caller gone or no time left: operation_ended, no attempt won):
//     it was canceled (any): superseded: its answer discarded; it ends
//     nothing, reason other_attempt / operation_ended
//   - 10. after an attempt, no response, and the caller canceled
//     (repeatable [1] / not): canceled; a write in flight matches
//     ErrOutcomeUnknown, reason caller
//   - 11. after an attempt, no response, and the caller's deadline passed
//     (repeatable [1] / not): deadline_exceeded, no state check; a write in
//     flight matches ErrOutcomeUnknown, reason caller
//   - 12. after an attempt, 2xx, 3xx, 101 (any): return, reason response
//   - 13. after an attempt, a failed answer after the caller canceled
//     (any): canceled (the answer is returned), reason caller
//   - 14. after an attempt, a failed answer after the caller's deadline
//     passed (any): deadline_exceeded (the answer is returned), reason
//     caller
//   - 15. after an attempt, no response, and nothing proves it unsent
//     (neither the error nor a Classifier's NotProcessed, row 17): a
//     timeout, a broken connection, a cut by a layer below (its own
//     cancellation), any failure after the headers reached the wire
//     (httptrace), or any failure before a base other than net/http's
//     Transport reported anything through httptrace (a custom one; any
//     below a layer); nothing proves a write unsent whose own body, or a
//     copy a layer below took with GetBody, broke as it was read, whatever
//     its error or a Classifier says (a protocol's code in it may be the
//     body's) (write, not repeatable [1]): check_state: not resent, reason
//     unknown_write
//   - 16. after an attempt, the classifier says NotRetryable (any): stop,
//     reason classifier
//   - 17. after an attempt, the classifier says NotProcessed (no response)
//     (any): retry [2], reason classifier
//   - 18. after an attempt, the classifier says Retryable (repeatable [1],
//     or proved unsent): retry [2], reason classifier
//   - 19. after an attempt, the classifier says Retryable (not repeatable):
//     stop, reason not_idempotent
//   - 20. after an attempt, the service says its answer must not be
//     retried: a should-retry header (Stripe-Should-Retry, X-Should-Retry,
//     or those WithShouldRetryHeaders names in their place; the first that
//     says true or false) is false (any): stop (the answer is returned),
//     reason server_no_retry
//   - 21. after an attempt, 409 Conflict: a request with the same key is
//     still being processed (the idempotency-key draft) (carries an
//     idempotency key [3]): retry [2], after Retry-After where given,
//     reason key_in_progress
//   - 22. after an attempt, 422 Unprocessable Content: the key was used
//     before with another payload (the draft) (carries an idempotency key
//     [3]): stop (the answer is returned): never resent, reason key_reused
//   - 23. after an attempt, the service says the request may be repeated: a
//     should-retry header is true (repeatable [1], or any with
//     WithShouldRetryWrites (recorded as evidence)): retry [2], reason
//     server_retry
//   - 24. after an attempt, net/http's Transport (the base, or below a
//     layer that wraps it, such as otelhttp's under WithoutClientSpans)
//     refused the request itself, before asking for a connection: a header
//     or trailer, the method (when no HTTP/2 connection to the host is
//     pooled: the request then goes, and is answered) or the host it does
//     not accept (below a wrapper, which a base of one's own may be, not a
//     missing host), or a scheme no protocol is registered for; or, on a
//     connection known to speak HTTP/2, before writing the headers, a field
//     HTTP/2 forbids and HTTP/1 sends (a Connection other than one close or
//     keep-alive, an Upgrade other than chunked, a Transfer-Encoding other
//     than one chunked, as net/http reads them; a Transfer-Encoding,
//     Trailer or Content-Length trailer), a Host it does not accept, a
//     :path it cannot make (with an ASCII host; a non-ASCII host's :path is
//     retried) or a header list over the peer's advertised limit (the
//     caller's request: sent again, it is refused again; or an otelretry
//     Transport below that NewTransport did not make) (any): stop, not
//     charged to the retry budget (the host saw nothing); with another
//     attempt in flight (a hedge its PrepareAttemptFunc made unsendable in
//     a way its preparation does not check: another scheme), retry
//     (in_flight): the race goes on, reason invalid_request
//   - 25. after an attempt, the client could not verify the server's TLS
//     certificate (crypto/tls's CertificateVerificationError, or an error
//     of crypto/x509's: an unknown authority, another host's name, expired
//     or otherwise invalid; a Classifier may still retry it) (the same
//     certificate fails again) (any): stop (nothing was sent); with another
//     attempt in flight (a hedge's new connection met it), retry
//     (in_flight): the race goes on, reason certificate
//   - 26. after an attempt, an error that proves the request never left:
//     connection refused, DNS, TLS handshake, dial (a proxy's refusal of
//     its CONNECT too, which each retry meets again); a cut before the base
//     reported a connection; a failed first write on a reused HTTP/1
//     connection (httptrace); net/http's "server closed idle connection" on
//     a connection the trace saw it take (its text alone, from a base of
//     one's own, proves nothing) (any): retry [2], reason not_processed
//   - 27. after an attempt, any other transport error (repeatable [1]):
//     retry [2], reason retryable_error
//   - 28. after an attempt, any other transport error (not repeatable):
//     stop, reason not_idempotent
//   - 29. after an attempt, 408, 429, 502, 503, 504 (WithRetryableStatuses)
//     (repeatable [1]): retry [2] (a 429 without Retry-After holds its
//     host's retries for the budget's Pushback, 1 s by default: a shorter
//     pause ends budget_exhausted, reason pushback), reason
//     retryable_status
//   - 30. after an attempt, 408, 429, 502, 503, 504 (WithRetryableStatuses)
//     (not repeatable): stop (the answer is returned), reason
//     not_idempotent
//   - 31. after an attempt, any other status (any): stop (the answer is
//     returned), reason status
//   - 32. after a state check, the state check says applied (any): return
//     (the stored response), reason state_applied
//   - 33. after a state check, the caller gave up during the check (or its
//     delay); the operation's own deadline passing there is not this row:
//     the check's answer decides (row 34; or row 36, whose resend [2] ends
//     deadline_exceeded, the write known not applied) (any): canceled /
//     deadline_exceeded; unknown unless not_applied, reason caller
//   - 34. after a state check, unknown, an answer outside the set, or an
//     error (any): check_state, reason state_unknown
//   - 35. after a state check, not_applied, and the intent forbids retries
//     (any): stop, reason intent
//   - 36. after a state check, not_applied (any): retry [2], with no pause,
//     reason state_not_applied
//   - 37. at the hedge delay, the caller canceled (any): no hedge, reason
//     caller
//   - 38. at the hedge delay, the caller's deadline passed (any): no hedge,
//     reason caller
//   - 39. at the hedge delay, an attempt in flight past the hedge delay (a
//     write, even under an idempotency-key contract (only safe methods and
//     Intent{Repeatable: true} are hedged; writes do not race at all, and
//     record nothing: the rule stands should one reach decide)): no hedge,
//     reason not_idempotent
//   - 40. at the hedge delay, an attempt in flight past the hedge delay (a
//     body that cannot be replayed): no hedge, reason not_replayable
//   - 41. at the hedge delay, an attempt in flight past the hedge delay
//     (Intent{NoRetry: true} (which does not race either, and records
//     nothing: the rule stands should one reach decide)): no hedge, reason
//     intent
//   - 42. at the hedge delay, no attempt left (hedges count as attempts);
//     not reached: no hedge delay is armed then, and nothing is recorded
//     (any): no hedge, reason attempt_limit
//   - 43. at the hedge delay, the operation was admitted MaxHedges hedges;
//     not reached: no hedge delay is armed then, and nothing is recorded
//     (any): no hedge, reason hedge_limit
//   - 44. at the hedge delay, no time left (any): no hedge, reason deadline
//   - 45. at the hedge delay, the retry budget refuses: a hold, a full host
//     table, or too few tokens for the host to keep more than half once the
//     hedge takes one (the hedge the rate lent is given back) (any): no
//     hedge, reason budget, pushback or host_limit
//   - 46. at the hedge delay, the client-side throttle (WithThrottle)
//     refuses it (its budget token and its hedge are given back) (any): no
//     hedge, reason throttle
//   - 47. at the hedge delay, the dependency's hedge rate (MaxShare) has no
//     hedge left (asked before the budget, which is then not asked: a hedge
//     it refuses takes no token the hedges admitted with it would count)
//     (any): no hedge, reason hedge_limit
//
// [1] Repeatable: GET, HEAD, OPTIONS, TRACE, methods added with
// WithIdempotentMethods, an idempotency key [3], or Intent.Repeatable. [2] Within the limits,
// in order: the pause (the largest of the Backoff's, Retry-After, the
// classifier's hint and what is left of the hints the race's earlier
// failures got while a hedge was in flight) must end before the deadline
// (deadline_exceeded, reason deadline); an attempt must be left
// (max_attempts); the body must be replayable (stop, not_replayable); the
// retry budget must allow it (budget_exhausted, reason budget, pushback or
// host_limit). While time is left and another attempt of the operation is
// in flight (a hedge), that attempt is the retry (retry, reason in_flight,
// no pause). [3] Carries an idempotency key: one WithIdempotencyKeys
// generated, or one in a header of WithIdempotencyKeyContract (or of
// WithIdempotencyKeys) the caller set; either makes the request
// repeatable [1].
//
// A Classifier (WithClassifier), the request's Intent (WithIntent), a
// PrepareAttemptFunc (WithPrepareAttempt) and a Backoff (WithBackoff) shape the
// policy; none of them can resend a write whose outcome is unknown or
// lift the budget. An Intent may set the request's own deadline, attempt
// limit and attempt timeout, higher or lower than the Transport's; the
// context's deadline still applies when it is earlier.
//
// # Writes under an idempotency key
//
// WithIdempotencyKeys gives every write that carries no idempotency key one
// per operation (128 bits from crypto/rand, the same on every attempt, set
// before the PrepareAttemptFunc runs), in the IETF draft's Idempotency-Key
// (DraftIdempotencyKey) or a header of the user's: the write is then
// repeatable, so an answer lost after it was sent is sent again under the
// same key instead of ending check_state, a 409 is retried after a pause
// and a 422 stops. Under one WithOperationID, a layer above that sends the
// operation again reuses its key. The server must store answers by key
// (docs/decisions.md says what else); writes are still never hedged.
//
// # Time
//
// The operation deadline is the earliest of the context's deadline,
// start+WithDeadline (or Intent.Deadline) and, for a redirect hop, the
// first hop's deadline, on the monotonic clock. No pause begins that would
// end at or after it, and no attempt starts once it has passed (one started
// with little time left runs under the deadline, which cuts it). When the
// caller's deadline ends
// the operation, RoundTrip returns once the caller's context is done, so a
// loop above that stops on ctx.Err() makes no other call in it.
// WithAttemptTimeout (or Intent.AttemptTimeout) cuts only what the policy
// could retry: for a request it may repeat, or a write a state check
// resolves where its WithStateCheckDelay still fits after the cut, it
// bounds the wait for each attempt's response headers (at most the time
// left); for any other write, only getting a connection,
// since a cut after that (an HTTP/2 stream awaited on the connection
// included) would leave the outcome unknown and could not be retried. An attempt cut before the base
// reported a connection was not sent, and is retried. The body of the
// response handed to the caller belongs to the caller's context alone, so
// streams and slow downloads are not cut (a state check's stored response
// excepted: its hook's context ends at the deadline). A discarded response body is
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
// above can rewrite; slots nest, and a call a hook makes is an operation
// of its own, reported to the slots the hook added. The hops of a redirect
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
// is a net.Error whose Timeout says whether the operation ended for lack
// of time, by its outcome, and is false for a write whose outcome is
// unknown, so that retryers above do not resend it.
// A base, a hook or the telemetry (a span processor, a log exporter, a
// metric view, a slog handler, the error handler of otel.SetErrorHandler,
// which otelretry calls on the request path for a report it makes once per
// Transport) that panics has what the operation holds
// released (buffers, bodies, the response being handed over) and its spans
// ended, with a panic event, and the panic goes on. So does a panic of an
// error's own methods (Unwrap, Is, As, Timeout, or an Error that printed
// once): otelretry reads an error a base or a hook returns with errors.Is
// and errors.As, as the caller would, and an Unwrap that returns its own
// error loops there as it would in errors.Is. Two kinds real clients make
// are kept from harm: a typed nil in an error's tree (quic-go's
// *http3.Error in some of its chains) is never read, and an error that
// cannot print itself is recorded with a text of otelretry's. A Meter
// that makes no instrument, or is a nil pointer, is a no-op; a
// TracerProvider that breaks the API's contract (a nil Tracer, a Start
// that returns no span) is not guarded: otelhttp, which makes the client
// spans, would fail on it as well.
//
// # Secrets
//
// URLs are recorded with userinfo as REDACTED:REDACTED and every query
// value replaced by REDACTED, on every span, log record and error message,
// including the messages of a base's *url.Error and of a response body's
// read error that names a URL. A request whose URL carries a userinfo, a
// query or a fragment in URL.Host (which no base sends) is refused before
// any telemetry; a path there, a unix socket's, is sent. Header
// values, cookies and bodies are never recorded (the one exception, an
// idempotency key's value, only where an option asks for it): a malformed
// retry hint is recorded by its header's name and what was wrong with it.
package otelretry
