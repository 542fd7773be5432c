// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package overhead measures what otelretry adds to one HTTP request, side by
// side with the libraries a user would pick instead (go-retryablehttp,
// failsafe-go, otelhttp alone). The benchmarks live in overhead_test.go;
// ../compare.sh runs them and prints the ratios.
//
// Benchmarks:
//
//   - BenchmarkRoundTrip/case=*: an in-memory base transport answering a
//     canned 200, so only the wrappers' overhead is measured.
//   - BenchmarkRoundTripLoopback/case=*: the same through a real
//     http.Transport to an httptest server on 127.0.0.1.
//   - BenchmarkRetry3/case=*: the in-memory base answers 503, 503, 200 to the
//     three attempts of each operation; every retrying case is configured with
//     zero backoff.
//   - BenchmarkRoundTripParallel/case=*: otelretry's cases and
//     retryablehttp-deadline over the in-memory base, with operations in
//     flight on every core (b.RunParallel; -cpu sets how many): what a
//     Transport's shared state costs under contention.
//   - BenchmarkLogEvents/kind=*/case=*: the log events (WithLoggerProvider,
//     the SDK's batch processor over a discarding exporter) against the
//     baseline, the same transport without them emitting the same records
//     straight through the same SDK, with the SDK's or the no-op tracer and
//     meter providers (logs_test.go).
//
// Every case sends a GET, reads the whole body and closes it, and reports
// allocations. The SDK cases also report spans/op: the spans ended per
// operation.
//
// The case retryablehttp-otelhttp-content is the content floor: the peer
// retryablehttp-otelhttp writing by hand the span attributes and metric
// records otelretry-sdk writes for a success, and nothing else (a test holds
// the two to the same span attribute keys and metric labels). It splits the
// SDK path's ratio to its peer into the price of that content and the price
// of otelretry's own work: bounds, decisions, budget, wire-write counting.
package overhead
