// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"reflect"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

type unsupportedBase struct{}

func (unsupportedBase) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, http.ErrNotSupported
}

// With the no-op MeterProvider (metric/noop) the metrics Recorder is off
// (metrics/recorder.go: "recording is skipped outright"): NewTransport
// handed it a guarded Meter, which was no noop.Meter, and every request
// did the work of recording for nothing (a reviewer's find).
func TestNoopMeterProviderTurnsMetricsOff(t *testing.T) {
	tr := NewTransport(unsupportedBase{}, WithTracerProvider(tracenoop.NewTracerProvider()),
		WithMeterProvider(metricnoop.NewMeterProvider()))
	if tr.sender.mode != sendInjectOnly {
		t.Errorf("mode = %v, want sendInjectOnly", tr.sender.mode)
	}
	off := reflect.ValueOf(tr.sender.rec.metrics).Elem().FieldByName("off").Bool()
	if !off {
		t.Errorf("metrics Recorder off = false with the no-op MeterProvider; want true (recording skipped outright)")
	}
}

// nilMeterProvider is a MeterProvider whose methods read their receiver.
type nilMeterProvider struct {
	metricnoop.MeterProvider
	inner *metricnoop.MeterProvider
}

func (p *nilMeterProvider) Meter(name string, o ...metric.MeterOption) metric.Meter {
	return p.inner.Meter(name, o...)
}

// A nil-pointer global MeterProvider is the no-op one for the send mode
// too: with the no-op TracerProvider, attempts go straight to base
// (NewTransport's godoc), where they went through otelhttp for nothing,
// the mode told before the guard (a reviewer's find).
func TestANilPointerGlobalMeterProviderIsTheNoopOne(t *testing.T) {
	if !InChildProcess(t, "OTELRETRY_NILMP_CHILD") {
		return
	}
	var mp *nilMeterProvider
	otel.SetMeterProvider(mp)
	tr := NewTransport(unsupportedBase{}, WithTracerProvider(tracenoop.NewTracerProvider()))
	if tr.sender.mode != sendInjectOnly {
		t.Errorf("mode = %v, want sendInjectOnly (%v)", tr.sender.mode, sendInjectOnly)
	}
}
