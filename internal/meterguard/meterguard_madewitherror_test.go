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

	"github.com/otelretry/otelretry-go/internal/meterguard"
)

// countingCounter is a working instrument: it counts what it is given.
type countingCounter struct {
	embedded.Int64Counter
	added *int64
}

func (c countingCounter) Add(_ context.Context, v int64, _ ...metric.AddOption) { *c.added += v }
func (c countingCounter) Enabled(context.Context) bool                          { return true }

// countingHistogram is a working histogram: it counts its records.
type countingHistogram struct {
	embedded.Float64Histogram
	records *int
}

func (h countingHistogram) Record(context.Context, float64, ...metric.RecordOption) { *h.records++ }
func (h countingHistogram) Enabled(context.Context) bool                            { return true }

// partialMeter makes working instruments and returns an error with them,
// as the SDK's Meter does when one of its readers cannot aggregate one.
type partialMeter struct {
	noop.Meter
	err     error
	added   *int64
	records *int
}

func (m partialMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return countingCounter{added: m.added}, m.err
}

func (m partialMeter) Float64Histogram(string, ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return countingHistogram{records: m.records}, m.err
}

// doc.go: "An instrument the Meter made is kept, even with an error: the
// SDK returns a working one with an error when one of its readers cannot
// aggregate it." The guard hands out that instrument, which records, and
// returns the Meter's error with it.
func TestAnInstrumentMadeWithAnErrorIsKeptWithItsError(t *testing.T) {
	partial := errors.New("one reader cannot aggregate this instrument")
	var added int64
	var records int
	m := meterguard.Meter(partialMeter{err: partial, added: &added, records: &records})

	c, err := m.Int64Counter("requests")
	if err != partial {
		t.Errorf("Int64Counter returned error %v, want the Meter's %v", err, partial)
	}
	c.Add(context.Background(), 3)
	if added != 3 {
		t.Errorf("the counter the Meter made recorded %d, want 3: it was not the one handed out", added)
	}

	h, err := m.Float64Histogram("duration")
	if err != partial {
		t.Errorf("Float64Histogram returned error %v, want the Meter's %v", err, partial)
	}
	h.Record(context.Background(), 1.5)
	if records != 1 {
		t.Errorf("the histogram the Meter made recorded %d times, want 1: it was not the one handed out", records)
	}

	// Through a guarded MeterProvider too.
	added = 0
	pc, err := meterguard.Provider(partialProvider{m: partialMeter{err: partial, added: &added, records: &records}}).
		Meter("x").Int64Counter("requests")
	if err != partial {
		t.Errorf("through the Provider: Int64Counter returned error %v, want %v", err, partial)
	}
	pc.Add(context.Background(), 2)
	if added != 2 {
		t.Errorf("through the Provider: the counter made recorded %d, want 2", added)
	}
}

type partialProvider struct {
	embedded.MeterProvider
	m metric.Meter
}

func (p partialProvider) Meter(string, ...metric.MeterOption) metric.Meter { return p.m }

// ptrProvider is an adapter's MeterProvider with a pointer receiver that
// reads its fields.
type ptrProvider struct {
	embedded.MeterProvider
	inner metric.MeterProvider
}

func (p *ptrProvider) Meter(name string, o ...metric.MeterOption) metric.Meter {
	return p.inner.Meter(name, o...)
}

// meterguard.go, Provider: "A nil mp, or a nil pointer, is the no-op
// provider." A MeterProvider that is a nil pointer must not panic when
// its Meter is asked for.
func TestAProviderThatIsANilPointerIsANoop(t *testing.T) {
	var mp *ptrProvider
	var p any
	func() {
		defer func() { p = recover() }()
		c, err := meterguard.Provider(mp).Meter("x").Int64Counter("c")
		if err != nil {
			t.Errorf("Int64Counter returned %v, want nil", err)
		}
		c.Add(context.Background(), 1)
	}()
	if p != nil {
		t.Fatalf("a guarded MeterProvider that is a nil pointer panicked: %v", p)
	}
}
