// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"errors"

	"go.opentelemetry.io/otel/metric"

	"github.com/otelretry/otelretry-go/internal/meterguard"
)

// attemptBuckets returns the bucket boundaries of retry.operation.attempts:
// attempts per operation are small integers.
func attemptBuckets() []float64 { return []float64{0, 1, 2, 3, 4, 5, 6, 8, 10} }

// durationBuckets returns the bucket boundaries of the duration
// histograms, in seconds: the OpenTelemetry HTTP semantic conventions'
// boundaries, which end at 10 s, then 15, 30, 60 and 120 s. An operation
// runs up to its deadline (30 s by default), and a write whose timeout
// cannot be followed up waits that long too: past the last finite bucket,
// histogram_quantile could only answer 10 s.
func durationBuckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 15, 30, 60, 120}
}

// instruments are the seven instruments a Recorder records on, as the
// package documentation lists them. Each is a usable no-op when the Meter
// is nil or returned none, so telemetry never breaks the request path.
type instruments struct {
	operations        metric.Int64Counter     // operations by terminal outcome
	attempts          metric.Int64Counter     // network calls by the decision after each
	operationAttempts metric.Int64Histogram   // network calls per operation
	operationDuration metric.Float64Histogram // the operation's start (RoundTrip called) to its end, pauses and state checks included
	attemptDuration   metric.Float64Histogram // one network call
	backoffDuration   metric.Float64Histogram // pauses between attempts
	throttled         metric.Int64Counter     // requests a client-side throttle refused
}

// newInstruments creates the instruments on m, guarded (a no-op in place
// of one m does not make), and returns the errors of those it could not
// create joined.
func newInstruments(m metric.Meter) (instruments, error) {
	m = meterguard.Meter(m)
	var in instruments
	var errs [7]error
	in.operations, errs[0] = m.Int64Counter("retry.operations", metric.WithUnit("{operation}"),
		metric.WithDescription("Logical operations completed, by terminal outcome."))
	in.attempts, errs[1] = m.Int64Counter("retry.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Network attempts made, by the client's decision after each."))
	in.operationAttempts, errs[2] = m.Int64Histogram("retry.operation.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Network attempts per logical operation."),
		metric.WithExplicitBucketBoundaries(attemptBuckets()...))
	in.operationDuration, errs[3] = durationHistogram(m, "retry.operation.duration",
		"Duration of logical operations, backoff included.")
	in.attemptDuration, errs[4] = durationHistogram(m, "retry.attempt.duration",
		"Duration of single network attempts, until response headers or failure.")
	in.backoffDuration, errs[5] = durationHistogram(m, "retry.backoff.duration",
		"Pauses taken before retries.")
	in.throttled, errs[6] = m.Int64Counter("retry.throttled", metric.WithUnit("{request}"),
		metric.WithDescription("Requests a client-side throttle refused before they started: first attempts, retries and hedges."))
	return in, errors.Join(errs[:]...)
}

// durationHistogram creates one of the three duration histograms, in
// seconds with durationBuckets.
func durationHistogram(m metric.Meter, name, desc string) (metric.Float64Histogram, error) {
	return m.Float64Histogram(name, metric.WithDescription(desc), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(durationBuckets()...))
}
