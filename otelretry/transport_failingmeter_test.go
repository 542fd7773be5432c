// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/otelretry/otelretry-go/otelretry"
)

type failingMeter struct{ noop.Meter }

var errMeterRefuses = errors.New("meter refuses")

func (failingMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return nil, errMeterRefuses
}
func (failingMeter) Int64Histogram(string, ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	return nil, errMeterRefuses
}
func (failingMeter) Float64Histogram(string, ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return nil, errMeterRefuses
}
func (failingMeter) Int64UpDownCounter(string, ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	return nil, errMeterRefuses
}
func (failingMeter) Float64Counter(string, ...metric.Float64CounterOption) (metric.Float64Counter, error) {
	return nil, errMeterRefuses
}

type failingOwnMeterProvider struct{ noop.MeterProvider }

func (failingOwnMeterProvider) Meter(name string, _ ...metric.MeterOption) metric.Meter {
	if name == otelretry.ScopeName { // otelhttp's own meter works: only otelretry's fails
		return failingMeter{}
	}
	return noop.Meter{}
}

type countedOK struct{ calls int }

func (b *countedOK) RoundTrip(r *http.Request) (*http.Response, error) {
	b.calls++
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: r}, nil
}

// A Meter whose instrument constructors all fail (otelretry's; otelhttp's
// works): requests go on, and otel.Handle is called once, with an error
// that names otelretry and wraps the Meter's (it was seven bare copies of
// the Meter's: a reviewer's find).
func TestAFailingMeterIsReportedOnceAndRequestsGoOn(t *testing.T) {
	errs := captureOtelErrors(t)
	base := &countedOK{}
	tr := otelretry.NewTransport(base, otelretry.WithMeterProvider(failingOwnMeterProvider{}))
	for range 5 {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/x", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if base.calls != 5 {
		t.Errorf("base calls = %d, want 5", base.calls)
	}
	got := errs()
	if len(got) != 1 || !errors.Is(got[0], errMeterRefuses) || !strings.HasPrefix(got[0].Error(), "otelretry: ") {
		t.Errorf("otel.Handle got %q, want one error naming otelretry, wrapping the Meter's", got)
	}
}
