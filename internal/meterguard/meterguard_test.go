// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package meterguard_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelretry/otelretry-go/internal/meterguard"
)

// nilMeter makes no instrument: it returns nil, with err (nil breaks the
// API's contract, and otelhttp kept such an instrument and panicked on it).
type nilMeter struct {
	noop.Meter
	err error
}

func (m nilMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return nil, m.err
}
func (m nilMeter) Int64UpDownCounter(string, ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	return nil, m.err
}
func (m nilMeter) Int64Histogram(string, ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	return nil, m.err
}
func (m nilMeter) Int64Gauge(string, ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	return nil, m.err
}
func (m nilMeter) Float64Counter(string, ...metric.Float64CounterOption) (metric.Float64Counter, error) {
	return nil, m.err
}
func (m nilMeter) Float64UpDownCounter(string, ...metric.Float64UpDownCounterOption) (metric.Float64UpDownCounter, error) {
	return nil, m.err
}
func (m nilMeter) Float64Histogram(string, ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return nil, m.err
}
func (m nilMeter) Float64Gauge(string, ...metric.Float64GaugeOption) (metric.Float64Gauge, error) {
	return nil, m.err
}

// recordOnEach makes one instrument of each synchronous kind on m and
// records on it, returning the errors the constructors returned.
func recordOnEach(m metric.Meter) []error {
	ctx := context.Background()
	var errs []error
	keep := func(err error) { errs = append(errs, err) }
	ic, err := m.Int64Counter("a")
	keep(err)
	ic.Add(ctx, 1)
	iu, err := m.Int64UpDownCounter("b")
	keep(err)
	iu.Add(ctx, 1)
	ih, err := m.Int64Histogram("c")
	keep(err)
	ih.Record(ctx, 1)
	ig, err := m.Int64Gauge("d")
	keep(err)
	ig.Record(ctx, 1)
	fc, err := m.Float64Counter("e")
	keep(err)
	fc.Add(ctx, 1)
	fu, err := m.Float64UpDownCounter("f")
	keep(err)
	fu.Add(ctx, 1)
	fh, err := m.Float64Histogram("g")
	keep(err)
	fh.Record(ctx, 1)
	fg, err := m.Float64Gauge("h")
	keep(err)
	fg.Record(ctx, 1)
	return errs
}

// A Meter that makes no instrument, with an error or without, leaves a
// no-op in its place, and its error is returned as it was.
func TestAnInstrumentNotMadeIsANoop(t *testing.T) {
	rejected := errors.New("rejected")
	for _, inner := range []metric.Meter{nilMeter{}, nilMeter{err: rejected}, nil} {
		var errs []error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%T%+v: recording panicked: %v", inner, inner, p)
				}
			}()
			errs = recordOnEach(meterguard.Meter(inner))
		}()
		want := error(nil)
		if m, ok := inner.(nilMeter); ok {
			want = m.err
		}
		for i, err := range errs {
			if err != want {
				t.Errorf("%T%+v: constructor %d returned %v, want %v", inner, inner, i, err, want)
			}
		}
	}
}

// nilMeterProvider returns no Meter at all.
type nilMeterProvider struct{ embedded.MeterProvider }

func (nilMeterProvider) Meter(string, ...metric.MeterOption) metric.Meter { return nil }

func TestAProviderWithoutAMeterIsANoop(t *testing.T) {
	for _, mp := range []metric.MeterProvider{nilMeterProvider{}, nil} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%T: recording panicked: %v", mp, p)
				}
			}()
			recordOnEach(meterguard.Provider(mp).Meter("x"))
		}()
	}
}

// An instrument the Meter made is the one handed out: the SDK's records
// through the guard as it does without it.
func TestAnInstrumentMadeIsKept(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	if errs := recordOnEach(meterguard.Provider(mp).Meter("x")); errors.Join(errs...) != nil {
		t.Fatal(errs)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) != 1 || len(rm.ScopeMetrics[0].Metrics) != 8 {
		t.Errorf("collected %+v, want the 8 instruments of scope x", rm.ScopeMetrics)
	}
}

// adapterCounter is an adapter's instrument over another library's; its
// constructor returns a nil *adapterCounter when it makes none.
type adapterCounter struct {
	embedded.Int64Counter
	inner metric.Int64Counter
}

func (c *adapterCounter) Add(ctx context.Context, v int64, o ...metric.AddOption) {
	c.inner.Add(ctx, v, o...)
}
func (c *adapterCounter) Enabled(context.Context) bool { return c.inner != nil }

type adapterMeter struct {
	noop.Meter
	err error
}

func (m adapterMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	var c *adapterCounter
	return c, m.err
}

// An instrument that is a nil pointer is none, with an error or without:
// it would panic on the first record.
func TestAnInstrumentThatIsANilPointerIsANoop(t *testing.T) {
	for _, err := range []error{nil, errors.New("rejected")} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("error %v: recording panicked: %v", err, p)
				}
			}()
			c, got := meterguard.Meter(adapterMeter{err: err}).Int64Counter("a")
			if got != err {
				t.Errorf("returned %v, want %v", got, err)
			}
			c.Add(context.Background(), 1)
		}()
	}
}
