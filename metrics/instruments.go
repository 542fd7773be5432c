// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"errors"
	"reflect"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
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

// newInstruments creates the instruments on m, and returns the errors of
// those it could not create joined.
func newInstruments(m metric.Meter) (instruments, error) {
	var in instruments
	var errs [7]error
	in.operations, errs[0] = int64Counter(m, "retry.operations", "{operation}",
		"Logical operations completed, by terminal outcome.")
	in.attempts, errs[1] = int64Counter(m, "retry.attempts", "{attempt}",
		"Network attempts made, by the client's decision after each.")
	in.operationAttempts, errs[2] = int64Histogram(m, "retry.operation.attempts", "{attempt}",
		"Network attempts per logical operation.", attemptBuckets())
	in.operationDuration, errs[3] = durationHistogram(m, "retry.operation.duration",
		"Duration of logical operations, backoff included.")
	in.attemptDuration, errs[4] = durationHistogram(m, "retry.attempt.duration",
		"Duration of single network attempts, until response headers or failure.")
	in.backoffDuration, errs[5] = durationHistogram(m, "retry.backoff.duration",
		"Pauses taken before retries.")
	in.throttled, errs[6] = int64Counter(m, "retry.throttled", "{request}",
		"Requests a client-side throttle refused before they started: first attempts, retries and hedges.")
	return in, errors.Join(errs[:]...)
}

func int64Counter(m metric.Meter, name, unit, desc string) (metric.Int64Counter, error) {
	if m == nil {
		return noop.Int64Counter{}, nil
	}
	i, err := m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit(unit))
	return made[metric.Int64Counter](i, err, noop.Int64Counter{})
}

func int64Histogram(m metric.Meter, name, unit, desc string, buckets []float64) (metric.Int64Histogram, error) {
	if m == nil {
		return noop.Int64Histogram{}, nil
	}
	i, err := m.Int64Histogram(name, metric.WithDescription(desc), metric.WithUnit(unit),
		metric.WithExplicitBucketBoundaries(buckets...))
	return made[metric.Int64Histogram](i, err, noop.Int64Histogram{})
}

// durationHistogram creates one of the three duration histograms, in
// seconds with durationBuckets.
func durationHistogram(m metric.Meter, name, desc string) (metric.Float64Histogram, error) {
	if m == nil {
		return noop.Float64Histogram{}, nil
	}
	i, err := m.Float64Histogram(name, metric.WithDescription(desc), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(durationBuckets()...))
	return made[metric.Float64Histogram](i, err, noop.Float64Histogram{})
}

// made is the instrument the Meter made, with its error, or the no-op
// fallback when it made none. A Meter may return a working instrument with
// an error: the SDK's does when one of its readers cannot aggregate the
// instrument, and the instrument records for the others. Thrown away for
// a no-op, it took the data from every reader for one reader's fault. With
// an error, an instrument that is a nil pointer (an adapter's `return c,
// err`) is none: it would panic on the first record.
func made[T any](i T, err error, fallback T) (T, error) {
	if any(i) == nil || (err != nil && nilPointer(i)) {
		return fallback, err
	}
	return i, err
}

// nilPointer reports whether v holds a nil pointer.
func nilPointer(v any) bool {
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}
