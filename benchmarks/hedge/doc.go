// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command hedge is the hedging benchmark (issue 36): the same seeded
// Poisson traffic, open loop, offered through each hedging configuration
// in turn to one loopback server whose service time has a long tail.
//
// Server. Each request's service time is drawn independently, from a
// source seeded by the run's seed, the operation and the request's ordinal
// within it (as when a hedge lands on another replica): a fast answer of
// -fast-min plus an exponential of mean -fast-mean, and with probability
// -stall-prob a stalled one, -stall-factor times a fast draw. The first
// request of an operation therefore takes the same time under every
// configuration of a repetition, and a hedge draws afresh. The server
// counts the requests of each operation and its busy time: the service
// time actually spent, which stops when the client goes away.
//
// Phases, by operation (an operation belongs to the phase it arrives in,
// and all its requests are served under that phase's distribution):
//   - warmup: the tail distribution, not judged; it opens connections and
//     gives an adaptive delay observations to learn from;
//   - tail: the tail distribution, -tail operations;
//   - brownout: every request stalled (-stall-factor times a fast draw),
//     -brownout operations, a few seconds at -rate.
//
// Configurations (-configs), each an http.RoundTripper around a fresh
// http.Transport, every operation a GET bounded by -deadline through
// context.WithTimeout:
//   - no-hedging: the plain transport, the reference of every ratio;
//   - failsafe-p95: failsafe-go's hedgepolicy through its failsafehttp
//     round tripper, one hedge after a fixed delay at the tail
//     distribution's true p95 (computed from the distribution, printed);
//   - failsafe-p95-budget: the same with failsafe-go's budget at a maximum
//     rate of -budget-share (its minimum concurrency left at its default);
//   - otelretry-p95: otelretry.NewTransport with WithHedging, one hedge
//     after the same fixed delay, a hedge rate (MaxShare) of -budget-share;
//   - otelretry-adaptive: the same with the adaptive delay (Adaptive,
//     Quantile 0.95, no Delay): the p95 of the time to response headers it
//     observed, which it must find by itself. Until it has observed 20
//     answers its delay is the longest answer seen (MaxDelay, 2 s, before
//     the first); it learns from its own traffic in the warm-up phase,
//     which every configuration runs alike (-warmup 0: none).
//
// Sweep (issue 44). -sweep runs, instead, no-hedging and families of
// configurations, each member named by its parameter (and -configs may
// name any member): failsafe-d<delay>, failsafe-go's hedgepolicy after a
// fixed delay, no budget; failsafe-budget-d<delay>, the same with its
// budget; otelretry-d<delay>, otelretry after the same fixed Delay;
// otelretry-q<quantile>, otelretry's adaptive delay at that Quantile. A
// member that hedges after a fixed delay gets a rate (otelretry's MaxShare,
// failsafe-go's budget's max rate) of three times the share of service
// times longer than the delay less a millisecond (the client's own time in
// the tail), at most 1; an adaptive member twice 1 - quantile: at least
// the share of operations its delay passes, so that the rate does not bind
// in the tail phase and the delay alone sets the extra load there, as it
// does for failsafe-go without its budget. The default sweep: the delays
// 4.5, 5, 5.5, 6, 7 and 8 ms (failsafe-go with its budget at 5, 6 and
// 8 ms), the quantiles 0.85, 0.9, 0.95 and 0.98. Diagnostic families,
// run when -configs names them: otelretry-nobudget-d, otelretry-rate1-d
// and otelretry-rate1-nobudget-d (no retry budget, a MaxShare of 1, both).
// After the table, the run prints each family's curve, phase by phase
// (p99.9 against extra requests, each the median over the repetitions),
// and compares each otelretry family with each of failsafe-go's at equal
// extra load: at every whole percent from 1 % to 10 %, every tenth above,
// and at either curve's points, where both curves reach, each p99.9 interpolated
// linearly between the sweep points around it.
// -plot FILE draws the curves (SVG).
//
// Both otelretry configurations keep the default retry budget (hedges pass
// it as retries do; every answer here is a 200, so it refuses none) and
// set WithDeadline(-deadline) and no-op tracer and meter providers.
//
// Repetitions. -reps repetitions, interleaved: every configuration runs
// once in each repetition, one after another (never at the same time: the
// machine has few cores), in an order rotated by one at each repetition so
// that none always runs first. Repetition r uses seed -seed+r for its
// arrivals and service times, the same for every configuration.
//
// Report, per configuration and phase: p50, p95, p99 and p99.9 of the
// operation latency (from its start until the body was read or it failed;
// exact nearest-rank percentiles over sorted samples), the share of extra
// requests (server requests / operations - 1), the share of operations
// slower than the hedge delay, the hedge delay in effect as the server sees
// it (hedge_ms: the median, over the operations that sent a second request,
// of the time between the arrivals of the first and the second), and the
// server's busy time; then the ratios to no-hedging in the same repetition
// and phase (p50, p99, p99.9, server requests, busy time). Every figure is
// the median over the repetitions; a ratio is the median of the
// per-repetition ratios. The table says how many samples rank above p99.9
// in one repetition, and what each configuration's whole turn cost the
// process: connections dialled (a hedge's loser, cancelled in flight,
// closes its HTTP/1.1 connection), CPU time, and the load generator's worst
// lag behind its schedule (a lag over 20 ms is flagged: the process was
// starved of CPU). -json FILE
// writes the same, with each repetition's values.
//
// Run it from the benchmarks module: go run ./hedge (about 4 min with
// the five configurations above), go run ./hedge -sweep -plot FILE (its
// 20 configurations, 5 repetitions: about 16 min per 3), or go run
// ./hedge -smoke (seconds;
// figures are meaningless).
package main
