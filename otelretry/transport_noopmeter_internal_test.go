// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"reflect"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

type unsupportedBase struct{}

func (unsupportedBase) RoundTrip(*http.Request) (*http.Response, error) { return nil, http.ErrNotSupported }

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
