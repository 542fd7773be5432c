// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command timeline replays the seed's fixed timeline through the real
// otelretry transport and prints the attempt events read back from the
// spans:
//
//   - read: deadline 400ms, backoff 40ms, 3 attempts; the dependency answers
//     503 (80ms), 503 (80ms), 200 (50ms). Expected: remaining 400 → 280 → 160,
//     decisions retry → retry → return, the real 200 returned.
//   - write: a POST whose answer does not come within 120ms. Expected: one
//     call, decision check_state, no second POST.
//
// The dependency is a scripted RoundTripper, so the only clock is the
// transport's. `go test ./examples/timeline` runs the same code on virtual
// time (testing/synctest) and checks the table to the millisecond; `go run`
// uses the real monotonic clock, where each timer overshoots by a fraction of
// a millisecond: the figures of a later attempt, after four timers, read a
// few milliseconds off (157 for 160).
package main
