// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command metastable is the metastable-failure benchmark (issue 43): an
// overload that outlasts its trigger. The same seeded traffic goes
// through each retry configuration in turn, against a loopback server
// that, like a real one, keeps working on requests whose client has given
// up; the benchmark measures whether goodput comes back once the trigger
// is gone, and how soon.
//
// Server. -workers workers (4) serve one request each at a time, for
// -service (10 ms), behind a FIFO queue bounded at -queue (1,000). A
// request above the bound is refused at once (503); every request the
// queue accepted is served in its turn, even when its client has gone (its
// request context done, as net/http reports a closed connection): that is
// abandoned work, counted in seconds of service. The workers keep to their
// schedule, not to their timers: a request starts when its worker was free
// and the request had arrived, so a timer that fires late on a busy
// machine delays an answer, not the server's capacity.
//
// Run. Poisson arrivals at -rate (300 operations a second, 75 % of the
// capacity of 400), seeded: every configuration gets the same arrival
// times. -before (5 s) of steady load; then the trigger, -trigger (2 s)
// during which only -trigger-workers (1) of the workers serve (a capacity
// drop; -trigger-rate sets a burst instead or as well); then -after
// (25 s) at the steady load, for the server to recover or not. Each
// operation is a GET bounded by -deadline (1 s, context.WithTimeout), each
// attempt by -attempt-timeout (200 ms), in every configuration.
// Configurations run one after another, each against its own server and
// fresh transports; -clients N splits the traffic across N clients, each
// with its own retry state.
//
// Configurations:
//   - no-retry: one attempt;
//   - naive: 3 attempts, a constant pause of -naive-backoff (10 ms), no budget;
//   - retryablehttp: go-retryablehttp, 3 attempts, its defaults otherwise
//     (a wait of 1 s to 30 s before a retry, which a 1 s deadline cuts);
//   - failsafehttp: failsafe-go's failsafehttp retry policy, 3 attempts
//     (no delay by default);
//   - failsafehttp-throttler: the same with failsafe-go's adaptivethrottler
//     outermost, at its defaults (failure-rate threshold 0.1 over a 1-minute
//     window, at most 0.9 of executions rejected): it counts each
//     operation's outcome after the retries;
//   - aws-quota and grpc-throttle: otelretry's default bounds (3 attempts,
//     full-jitter backoff from 100 ms to 2 s, no pause the deadline would
//     cut) in a plain loop with the AWS SDKs' standard retry quota (500
//     tokens, 5 per retry, 10 after a timeout, 1 back per success without
//     retry) or gRPC's retry throttling (gRFC A6: maxTokens 10, tokenRatio
//     0.1);
//   - otelretry: at its defaults, but for the deadline and attempt timeout
//     above;
//   - otelretry-throttle: otelretry with its client-side throttle
//     (WithThrottle: K 2, at most 0.9 refused) over a window of
//     -throttle-window (500 ms, a quarter of the trigger).
//
// Figures, per configuration:
//   - goodput, in operations per second: the operations that arrived in a
//     period and succeeded (a 200 and its body within the deadline), over
//     the period's length; before, during and after the trigger, and over
//     the run's last -tail (5 s);
//   - recovery: the time from the trigger's end until goodput is back at
//     -target (90 %, a share within (0, 1]) of its level before, for the
//     load offered: the earliest offset t such that every window of
//     -window (1 s, stepped by -step) starting at t or later has a success
//     share of at least 90 % of the share before the trigger; "none" when
//     the last window still fails, when no operation arrived from there on,
//     or when the after period holds no window;
//   - amp: the requests the server received per operation offered (NaN in
//     a run that offered none);
//   - unsent: the operations that sent no request (refused by a client-side
//     throttle);
//   - abandoned_s: the server's work on requests whose client had gone by
//     the time it finished them, in seconds, and against no-retry's;
//     work_s: all its work; refused: requests refused at once, the queue
//     full; queued: requests still queued when the run ended.
//
// Then one machine-readable line per configuration:
//
//	metastable config=<name> goodput_before=<x> goodput_during=<x> goodput_after=<x> goodput_end=<x> recovery_s=<s|none> amplification=<x> abandoned_work_s=<s>
//
// -plot FILE writes goodput over time, one panel per configuration, as
// SVG. Run it from the benchmarks module: go run ./metastable (4 min 57 s
// on 2 cores), or go run ./metastable -smoke (about a second per
// configuration; figures are meaningless). A configuration whose load generator fell more
// than 20 ms behind its schedule is flagged.
package main
