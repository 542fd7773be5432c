// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// AttemptBuckets returns the bucket boundaries of retry.operation.attempts:
// attempts per operation are small integers. Each call returns a new
// slice.
func AttemptBuckets() []float64 { return []float64{0, 1, 2, 3, 4, 5, 6, 8, 10} }

// DurationBuckets returns the bucket boundaries of the duration
// histograms: the OpenTelemetry HTTP semantic conventions' boundaries, in
// seconds. Each call returns a new slice.
func DurationBuckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
}

// Operations is the retry.operations counter: operations by terminal outcome.
type Operations struct{ metric.Int64Counter }

// NewOperations creates the retry.operations instrument. On error it
// returns a usable no-op instrument and the error.
func NewOperations(m metric.Meter, opt ...metric.Int64CounterOption) (Operations, error) {
	if m == nil {
		return Operations{noop.Int64Counter{}}, nil
	}
	i, err := m.Int64Counter(Operations{}.Name(), append([]metric.Int64CounterOption{
		metric.WithDescription(Operations{}.Description()), metric.WithUnit(Operations{}.Unit()),
	}, opt...)...)
	if err != nil {
		return Operations{noop.Int64Counter{}}, err
	}
	return Operations{i}, nil
}

// Inst returns the underlying instrument.
func (o Operations) Inst() metric.Int64Counter { return o.Int64Counter }

// Name is the instrument name.
func (Operations) Name() string { return "retry.operations" }

// Unit is the instrument unit.
func (Operations) Unit() string { return "{operation}" }

// Description is the instrument description.
func (Operations) Description() string {
	return "Logical operations completed, by terminal outcome."
}

// Attempts is the retry.attempts counter: network calls by decision.
type Attempts struct{ metric.Int64Counter }

// NewAttempts creates the retry.attempts instrument. On error it returns a
// usable no-op instrument and the error.
func NewAttempts(m metric.Meter, opt ...metric.Int64CounterOption) (Attempts, error) {
	if m == nil {
		return Attempts{noop.Int64Counter{}}, nil
	}
	i, err := m.Int64Counter(Attempts{}.Name(), append([]metric.Int64CounterOption{
		metric.WithDescription(Attempts{}.Description()), metric.WithUnit(Attempts{}.Unit()),
	}, opt...)...)
	if err != nil {
		return Attempts{noop.Int64Counter{}}, err
	}
	return Attempts{i}, nil
}

// Inst returns the underlying instrument.
func (a Attempts) Inst() metric.Int64Counter { return a.Int64Counter }

// Name is the instrument name.
func (Attempts) Name() string { return "retry.attempts" }

// Unit is the instrument unit.
func (Attempts) Unit() string { return "{attempt}" }

// Description is the instrument description.
func (Attempts) Description() string {
	return "Network attempts made, by the client's decision after each."
}

// OperationAttempts is the retry.operation.attempts histogram: the number of
// network calls each operation made.
type OperationAttempts struct{ metric.Int64Histogram }

// NewOperationAttempts creates the retry.operation.attempts instrument with
// AttemptBuckets. On error it returns a usable no-op instrument and the error.
func NewOperationAttempts(m metric.Meter, opt ...metric.Int64HistogramOption) (OperationAttempts, error) {
	if m == nil {
		return OperationAttempts{noop.Int64Histogram{}}, nil
	}
	i, err := m.Int64Histogram(OperationAttempts{}.Name(), append([]metric.Int64HistogramOption{
		metric.WithDescription(OperationAttempts{}.Description()), metric.WithUnit(OperationAttempts{}.Unit()),
		metric.WithExplicitBucketBoundaries(AttemptBuckets()...),
	}, opt...)...)
	if err != nil {
		return OperationAttempts{noop.Int64Histogram{}}, err
	}
	return OperationAttempts{i}, nil
}

// Inst returns the underlying instrument.
func (h OperationAttempts) Inst() metric.Int64Histogram { return h.Int64Histogram }

// Name is the instrument name.
func (OperationAttempts) Name() string { return "retry.operation.attempts" }

// Unit is the instrument unit.
func (OperationAttempts) Unit() string { return "{attempt}" }

// Description is the instrument description.
func (OperationAttempts) Description() string {
	return "Network attempts per logical operation."
}

// durationHistogram is the shape shared by the three duration instruments.
type durationHistogram struct{ metric.Float64Histogram }

func newDurationHistogram(m metric.Meter, name, desc string, opt []metric.Float64HistogramOption) (durationHistogram, error) {
	if m == nil {
		return durationHistogram{noop.Float64Histogram{}}, nil
	}
	i, err := m.Float64Histogram(name, append([]metric.Float64HistogramOption{
		metric.WithDescription(desc), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(DurationBuckets()...),
	}, opt...)...)
	if err != nil {
		return durationHistogram{noop.Float64Histogram{}}, err
	}
	return durationHistogram{i}, nil
}

// Inst returns the underlying instrument.
func (h durationHistogram) Inst() metric.Float64Histogram { return h.Float64Histogram }

// OperationDuration is the retry.operation.duration histogram: time from the
// operation's start (RoundTrip called, before its first attempt is
// prepared) to its end (its response handed over, or its error returned),
// attempts, pauses and state checks included.
type OperationDuration struct{ durationHistogram }

// NewOperationDuration creates the retry.operation.duration instrument. On
// error it returns a usable no-op instrument and the error.
func NewOperationDuration(m metric.Meter, opt ...metric.Float64HistogramOption) (OperationDuration, error) {
	h, err := newDurationHistogram(m, OperationDuration{}.Name(), OperationDuration{}.Description(), opt)
	return OperationDuration{h}, err
}

// Name is the instrument name.
func (OperationDuration) Name() string { return "retry.operation.duration" }

// Description is the instrument description.
func (OperationDuration) Description() string {
	return "Duration of logical operations, backoff included."
}

// AttemptDuration is the retry.attempt.duration histogram: one network call.
type AttemptDuration struct{ durationHistogram }

// NewAttemptDuration creates the retry.attempt.duration instrument. On error
// it returns a usable no-op instrument and the error.
func NewAttemptDuration(m metric.Meter, opt ...metric.Float64HistogramOption) (AttemptDuration, error) {
	h, err := newDurationHistogram(m, AttemptDuration{}.Name(), AttemptDuration{}.Description(), opt)
	return AttemptDuration{h}, err
}

// Name is the instrument name.
func (AttemptDuration) Name() string { return "retry.attempt.duration" }

// Description is the instrument description.
func (AttemptDuration) Description() string {
	return "Duration of single network attempts, until response headers or failure."
}

// BackoffDuration is the retry.backoff.duration histogram: pauses between
// attempts.
type BackoffDuration struct{ durationHistogram }

// NewBackoffDuration creates the retry.backoff.duration instrument. On error
// it returns a usable no-op instrument and the error.
func NewBackoffDuration(m metric.Meter, opt ...metric.Float64HistogramOption) (BackoffDuration, error) {
	h, err := newDurationHistogram(m, BackoffDuration{}.Name(), BackoffDuration{}.Description(), opt)
	return BackoffDuration{h}, err
}

// Name is the instrument name.
func (BackoffDuration) Name() string { return "retry.backoff.duration" }

// Description is the instrument description.
func (BackoffDuration) Description() string {
	return "Pauses taken before retries."
}
