// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command writes is the writes benchmark (issue 42): the same 2,000 POSTs,
// each a write of its own, sent through each configuration in turn to a
// loopback server that deduplicates writes by idempotency key as the IETF
// draft says, while faults on a seeded schedule lose answers.
//
// Server. It applies a write (POST /writes/<i>, a body that names it) and
// counts its applications. A request that carries an Idempotency-Key (an
// sf-string, or a bare value) is deduplicated: the server stores each
// answer by key with the request it answered (method, path, body),
// answers a request that comes again with the key by the stored answer
// (Idempotent-Replayed: true), 409 while the key's first request is still
// being processed (its Retry-After, whole seconds, lasts until that
// request's answer: one wait finds it stored), and 422 when the key comes with
// another payload. A request without a key is applied each time.
//
// Faults. The k-th request sent for write i meets a fault drawn from a
// source seeded by -seed, i and k, the same under every configuration:
//   - lost: the server applies the write, stores its answer, and closes
//     the connection without answering;
//   - 503: the server answers 503 before applying anything;
//   - slow: the server applies the write at once and answers after -slow,
//     longer than otelretry's attempt timeout;
//   - refused: the connection is refused (a dial to a loopback port
//     nothing listens on); the request never leaves.
//
// The fault is drawn by a round tripper below each configuration's
// retries (the network), which dials the refused connections itself and
// names any other fault in a header the server obeys. Keep-alives are off,
// so that no layer below it sends a request it did not see (net/http
// resends only on a reused connection).
//
// Configurations (-configs), each over a fresh http.Transport, every write
// bounded by -deadline on its context, under an operation id of its own
// (otelretry.WithOperationID) and with a Results slot:
//   - plain: the network itself, as an http.Client sends;
//   - retryablehttp: go-retryablehttp's RoundTripper at its defaults (4
//     retries of any error and of 5xx but 501, 1 s to 30 s apart), its
//     logger off;
//   - failsafehttp: failsafe-go's failsafehttp round tripper with
//     failsafehttp.NewRetryPolicyBuilder's retry policy (2 retries of any
//     error, 429 and 5xx but 501);
//   - otelretry: otelretry.NewTransport at its defaults (3 attempts, the
//     default retry budget) with WithDeadline(-deadline) and
//     WithAttemptTimeout(-attempt-timeout), no-op tracer and meter;
//   - otelretry-keys: the same with
//     WithIdempotencyKeys(DraftIdempotencyKey()).
//
// Report, per configuration: the writes the server applied once, twice or
// more (duplicates) and never; what the caller was told: a success (a
// 2xx), an error (an error, or another answer), or an unknown outcome
// (otelretry.ErrOutcomeUnknown, or its Results slot's OutcomeUnknown);
// the writes told an error that were applied all the same; the requests
// sent per write (refused connections included); the writes whose retry
// otelretry's retry budget refused (budget_exhausted); the faults drawn;
// the time the configuration took. Then the targets of otelretry-keys:
// no duplicate; every write it ended with a resend still allowed (its
// outcome not max_attempts, deadline_exceeded or budget_exhausted) applied
// once and answered a success; and, over the writes no budget refusal
// touched in either otelretry run, no more requests per write than
// otelretry without keys plus the requests sent after a write's first
// lost answer (no answer, a 5xx or a 409). Then go-retryablehttp's and
// failsafe-go's duplicates and otelretry's unknown outcomes without keys,
// and one machine-readable line per configuration:
//
//	writes config=<name> once=<n> dup=<n> never=<n> success=<n> error=<n> unknown=<n> budget=<n> requests_per_write=<x>
//
// Run it from the benchmarks module: go run ./writes (about a minute), or
// go run ./writes -smoke (a few seconds; figures are meaningless).
package main
