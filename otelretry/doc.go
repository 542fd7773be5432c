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
// One RoundTrip is one operation: an INTERNAL span ("retry GET") with
// retry.operation.id, http.request.method, a sanitized url.full,
// server.address, retry.budget_ms, and at the end retry.attempts and
// retry.outcome. Each network call is a child INTERNAL span ("attempt GET")
// carrying the attempt event: retry.operation.id, retry.request.id,
// retry.attempt, http.request.method, http.response.status_code or
// retry.error_class (never both), retry.elapsed_ms, retry.remaining_ms
// (budget before the call), retry.decision, retry.retry_after_ms,
// retry.backoff_ms and http.request.resend_count. The otelhttp CLIENT span
// of the call is a child of its attempt span, and trace context is injected
// per attempt. Attribute names live in package attrs.
//
// # Decisions
//
// After each attempt the client decides (attrs.Decision):
//
//   - a 2xx or 3xx response: return;
//   - an idempotent request (GET, HEAD, OPTIONS, TRACE, methods added with
//     WithIdempotentMethods, or an Idempotency-Key under
//     WithIdempotencyKeyContract) that got 408, 429, 502, 503, 504 or a
//     transport error, or any request whose error proves it never left
//     (connection refused, DNS, TLS handshake, dial failure): retry, unless
//     the remaining budget cannot cover the pause (deadline_exceeded), no
//     attempts are left (max_attempts), the body cannot be replayed (stop) or
//     the retry budget refuses (budget_exhausted: failed retries may add at
//     most 10% to a host's first attempts, see Budget);
//   - a write that timed out or whose connection broke: check_state. It is
//     not resent; RoundTrip returns an error matching ErrOutcomeUnknown,
//     unless a StateCheckFunc (WithStateCheck) resolves it;
//   - anything else: stop; a canceled context: canceled.
//
// The pause before a retry is max(backoff, Retry-After). The operation
// deadline is the earlier of the context deadline and start+WithDeadline on
// the monotonic clock; no attempt starts and no pause begins that cannot end
// before it, and each attempt's timeout is the smaller of WithAttemptTimeout
// and the budget left.
//
// # Results
//
// When the last attempt received a response, RoundTrip returns that
// response, whatever the outcome (a 503 after max_attempts is returned as the
// 503 the server sent). Otherwise it returns an *Error with the outcome, the
// operation id, the number of attempts and the last cause.
//
// # Secrets
//
// URLs are recorded without userinfo and with every query value replaced by
// REDACTED, on the retry spans and on otelhttp's client span. Headers,
// cookies and bodies are never recorded.
package otelretry
