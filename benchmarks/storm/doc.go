// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command storm is the retry-storm benchmark: one loopback server with a
// fixed capacity goes through scripted phases (healthy, brownout, outage
// answering 503, outage hanging, recovery) while an open-loop client offers
// the same traffic through each retry configuration in turn. It prints, per
// configuration and phase, the operations offered, the attempts the server
// received for them, the amplification (attempts / operations), the success
// ratio, the p50/p99 operation latency and the time to recover; then the
// fleet summary (the fewest operations k one client offered in the 503
// outage, marked "!" under 10; the amplification in that outage, marked
// "!" for a configuration on otelretry's default budget above
// docs/budget.md's bound (k+2)/k; the amplification in both outages; the
// brownout success and its difference from the no-retry client's, marked
// "!" when it is more than 0.01 below); an operation still running when
// the run stops waiting (its deadline + 5 s) counts as past its deadline,
// never a success; then one machine-readable line per configuration:
//
//	storm config=<name> clients=<n> amplification_outage=<x> success_brownout=<y> recovery_s=<z>
//
// Run it from the benchmarks module: go run ./storm (about 2.5 min), or
// go run ./storm -smoke (a few seconds; figures are meaningless).
//
// Fleet: -clients N splits the same offered load across N independent
// clients (operation i goes to client i mod N), each with its own
// transports and retry budget, as N replicas of a service would be.
//
// Configurations: no-retry; naive (3 attempts, constant pause, no budget);
// otelretry with its defaults; otelretry-hedging, the same with adaptive
// hedging (Hedging{Adaptive: true}: one hedge after the p95 of the time to
// response headers, at most 5 % of operations hedged, hedges admitted by
// the retry budget as retries are); otelretry-hedging-fixed, a hedge of
// every operation slower than 100 ms bounded by the retry budget alone;
// otelretry-verdict, against a server whose refusals are 500s saying
// X-Should-Retry: true (its retries the verdicts'); windowed-budget,
// grpc-throttle and
// aws-quota, which run otelretry's default bounds (3 attempts, full-jitter
// backoff 100 ms to 2 s, no pause past the deadline) in a plain retry loop
// with, respectively, otelretry's v0.1 budget (10% of first attempts or 10
// retries per 10 s window), gRPC's retry throttling (gRFC A6: maxTokens 10,
// tokenRatio 0.1) and the AWS SDKs' standard retry quota (500 tokens, 5 per
// retry, 10 after a timeout, refunded on success); go-retryablehttp and
// failsafe-go's HTTP round tripper, with and without its budget.
//
// Traffic: Poisson arrivals at -rate (seeded: every configuration gets the
// very same arrival times), each operation a GET bounded by -deadline
// (context.WithTimeout), the same for every configuration; -arrivals uniform
// uses a ticker instead. Configurations run one after another, each against
// its own server and a fresh http.Transport with the same settings.
//
// Definitions:
//   - An operation belongs to the phase in which it arrives; its attempts are
//     counted by the server (each request names its operation in the path),
//     so retries that land in the next phase still count for their operation.
//   - success: the operation returned 200 and its body within the deadline.
//   - latency: from the operation's start until it returned (success or not);
//     dropped operations (in-flight cap) have none.
//   - recovery_s: the earliest offset t from the start of the recovery phase
//     such that every sliding window [u, u+window) with u ≥ t (u on a grid of
//     -step, windows inside the phase, by arrival time) has a success ratio of
//     at least -target (0.99). 0 means no window failed; inf means the last
//     window still failed, or no operation arrived from there on (nothing
//     shows a recovery), or the phase is shorter than a window.
package main
