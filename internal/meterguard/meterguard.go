// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package meterguard

import (
	"reflect"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"
)

// Provider returns mp guarded: its Meters are guarded as Meter guards
// them. A nil mp, or a nil pointer, is the no-op provider.
func Provider(mp metric.MeterProvider) metric.MeterProvider {
	if mp == nil || nilPointer(mp) {
		return noop.NewMeterProvider()
	}
	if _, ok := mp.(noop.MeterProvider); ok {
		return mp // makes every instrument; kept as it is, so it is told as the no-op one
	}
	return provider{mp: mp}
}

type provider struct {
	embedded.MeterProvider
	mp metric.MeterProvider
}

func (p provider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return Meter(p.mp.Meter(name, opts...))
}

// Meter returns m guarded: each synchronous instrument m does not make is
// a no-op, returned with m's error. A nil m, or a nil pointer (an
// adapter's `return m` of a Meter it did not make), is the no-op Meter.
func Meter(m metric.Meter) metric.Meter {
	if m == nil || nilPointer(m) {
		return noop.Meter{}
	}
	if _, ok := m.(noop.Meter); ok {
		return m // makes every instrument; kept as it is, so that the Recorder tells it and records nothing
	}
	if g, ok := m.(meter); ok {
		return g
	}
	return meter{Meter: m}
}

// meter overrides the synchronous constructors, the ones a request
// records on; the asynchronous ones are called back by the SDK, off the
// request path, and pass through.
type meter struct{ metric.Meter }

func (m meter) Int64Counter(name string, o ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	i, err := m.Meter.Int64Counter(name, o...)
	return made[metric.Int64Counter](i, err, noop.Int64Counter{})
}

func (m meter) Int64UpDownCounter(name string, o ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	i, err := m.Meter.Int64UpDownCounter(name, o...)
	return made[metric.Int64UpDownCounter](i, err, noop.Int64UpDownCounter{})
}

func (m meter) Int64Histogram(name string, o ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	i, err := m.Meter.Int64Histogram(name, o...)
	return made[metric.Int64Histogram](i, err, noop.Int64Histogram{})
}

func (m meter) Int64Gauge(name string, o ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	i, err := m.Meter.Int64Gauge(name, o...)
	return made[metric.Int64Gauge](i, err, noop.Int64Gauge{})
}

func (m meter) Float64Counter(name string, o ...metric.Float64CounterOption) (metric.Float64Counter, error) {
	i, err := m.Meter.Float64Counter(name, o...)
	return made[metric.Float64Counter](i, err, noop.Float64Counter{})
}

func (m meter) Float64UpDownCounter(name string, o ...metric.Float64UpDownCounterOption) (metric.Float64UpDownCounter, error) {
	i, err := m.Meter.Float64UpDownCounter(name, o...)
	return made[metric.Float64UpDownCounter](i, err, noop.Float64UpDownCounter{})
}

func (m meter) Float64Histogram(name string, o ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	i, err := m.Meter.Float64Histogram(name, o...)
	return made[metric.Float64Histogram](i, err, noop.Float64Histogram{})
}

func (m meter) Float64Gauge(name string, o ...metric.Float64GaugeOption) (metric.Float64Gauge, error) {
	i, err := m.Meter.Float64Gauge(name, o...)
	return made[metric.Float64Gauge](i, err, noop.Float64Gauge{})
}

// made is the instrument the Meter made, with its error, or the no-op
// fallback when it made none. A Meter may return a working instrument with
// an error: the SDK's does when one of its readers cannot aggregate the
// instrument, and the instrument records for the others. Thrown away for
// a no-op, it took the data from every reader for one reader's fault. An
// instrument that is a nil pointer (an adapter's `return c, err`, with an
// error or without) is none: it would panic on the first record.
func made[T any](i T, err error, fallback T) (T, error) {
	if any(i) == nil || nilPointer(i) {
		return fallback, err
	}
	return i, err
}

// nilPointer reports whether v holds a nil pointer.
func nilPointer(v any) bool {
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}
