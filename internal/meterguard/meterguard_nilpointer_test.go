// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package meterguard_test

import (
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/otelretry/otelretry-go/internal/meterguard"
)

// nilAdapterMeter is an adapter's Meter whose methods read their receiver.
type nilAdapterMeter struct {
	noop.Meter
	prefix string
}

func (m *nilAdapterMeter) Int64Counter(name string, o ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return m.Meter.Int64Counter(m.prefix+name, o...)
}

// nilPointerMeterProvider returns its Meter as an adapter does: `return m`,
// with m a nil *nilAdapterMeter (the pattern the guard already catches for
// instruments).
type nilPointerMeterProvider struct{ embedded.MeterProvider }

func (nilPointerMeterProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	var m *nilAdapterMeter
	return m
}

// doc.go: "a MeterProvider never returns a nil Meter", and an instrument
// that is a nil pointer is none. A Meter that is a nil pointer is none
// too: the guarded Meter panicked on its first constructor, and the
// transport with it (a reviewer's find).
func TestAMeterThatIsANilPointerIsANoop(t *testing.T) {
	m := meterguard.Provider(nilPointerMeterProvider{}).Meter("x")
	var p any
	func() {
		defer func() { p = recover() }()
		c, _ := m.Int64Counter("c")
		c.Add(t.Context(), 1)
	}()
	if p != nil {
		t.Fatalf("a guarded Meter that is a nil pointer panicked: %v", p)
	}
}

// The no-op Meter and MeterProvider are kept as they are: every
// instrument they make is one, and wrapped they were no longer told as
// the no-op ones, so that the metrics Recorder, which skips recording
// outright for the no-op Meter, did the work of recording for nothing
// (a reviewer's find).
func TestTheNoopMeterIsKeptAsItIs(t *testing.T) {
	if _, ok := meterguard.Meter(noop.Meter{}).(noop.Meter); !ok {
		t.Error("the no-op Meter was wrapped")
	}
	if _, ok := meterguard.Provider(noop.NewMeterProvider()).(noop.MeterProvider); !ok {
		t.Error("the no-op MeterProvider was wrapped")
	}
}
