// Command storm is the retry-storm benchmark: one loopback server with a
// fixed capacity goes through scripted phases (healthy, brownout, outage
// answering 503, outage hanging, recovery) while an open-loop client offers
// the same traffic through each retry configuration in turn. It prints, per
// configuration and phase, the operations offered, the attempts the server
// received for them, the amplification (attempts / operations), the success
// ratio, the p50/p99 operation latency and the time to recover, then one
// machine-readable line per configuration:
//
//	storm config=<name> amplification_outage=<x> success_brownout=<y> recovery_s=<z>
//
// Run it from the benchmarks module: go run ./storm (about 100 s), or
// go run ./storm -smoke (a few seconds; figures are meaningless).
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
//     window still failed.
package main
