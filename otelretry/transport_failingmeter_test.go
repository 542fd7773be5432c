// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

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

// nilPointerMeter is an adapter's Meter whose methods read their receiver.
type nilPointerMeter struct {
	noop.Meter
	prefix string
}

func (m *nilPointerMeter) Int64Counter(name string, o ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return m.Meter.Int64Counter(m.prefix+name, o...)
}

func (m *nilPointerMeter) Float64Histogram(name string, o ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return m.Meter.Float64Histogram(m.prefix+name, o...)
}

// nilPointerMeterProvider returns its Meter as an adapter does, `return
// m` with m a nil *nilPointerMeter: the API's contract broken as a nil
// instrument breaks it.
type nilPointerMeterProvider struct{ noop.MeterProvider }

func (nilPointerMeterProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	var m *nilPointerMeter
	return m
}

// A MeterProvider whose Meter is a nil pointer breaks no request: it is
// the no-op Meter, for otelretry's instruments and otelhttp's (it
// panicked; a reviewer's find).
func TestAMeterThatIsANilPointerBreaksNoRequest(t *testing.T) {
	base := &countedOK{}
	rt := otelretry.NewTransport(base, otelretry.WithMeterProvider(nilPointerMeterProvider{}))
	resp, err := rt.RoundTrip(get(t, t.Context(), "http://api.test/"))
	if err != nil || resp.StatusCode != 200 || base.calls != 1 {
		t.Fatalf("%v, %v after %d calls: want the base's 200", resp, err, base.calls)
	}
	resp.Body.Close()
}

// nilTracerProvider breaks the API's contract: its Tracer is nil.
type nilTracerProvider struct{ tracenoop.TracerProvider }

func (nilTracerProvider) Tracer(string, ...trace.TracerOption) trace.Tracer { return nil }

// The package doc's line: a TracerProvider that breaks the API's contract
// is not guarded, as a Meter is (a reviewer's question: the line was
// written nowhere). Its panic goes on.
func TestATracerProviderWithoutATracerIsNotGuarded(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a nil Tracer was guarded: the package doc says it is not")
		}
	}()
	rt := otelretry.NewTransport(&countedOK{}, otelretry.WithTracerProvider(nilTracerProvider{}))
	if resp, err := rt.RoundTrip(get(t, t.Context(), "http://api.test/")); err == nil {
		resp.Body.Close()
	}
}

// nilPointerProvider is a MeterProvider whose methods read their receiver.
type nilPointerProvider struct {
	noop.MeterProvider
	inner metric.MeterProvider
}

func (p *nilPointerProvider) Meter(name string, o ...metric.MeterOption) metric.Meter {
	return p.inner.Meter(name, o...)
}

// A MeterProvider that is a nil pointer, installed as the global one
// (which NewTransport uses when WithMeterProvider is not given, or given
// a nil pointer, which it ignores), is the no-op one: NewTransport called
// its Meter unguarded and panicked (a reviewer's find). The global state
// is set once per process, so the check runs in a child process.
func TestANilPointerGlobalMeterProviderBreaksNoRequest(t *testing.T) {
	if !otelretry.InChildProcess(t, "OTELRETRY_NILMETER_CHILD") {
		return
	}
	var mp *nilPointerProvider
	otel.SetMeterProvider(mp)
	base := &countedOK{}
	rt := otelretry.NewTransport(base, otelretry.WithMeterProvider(mp))
	resp, err := rt.RoundTrip(get(t, t.Context(), "http://api.test/"))
	if err != nil || resp.StatusCode != 200 || base.calls != 1 {
		t.Fatalf("%v, %v after %d calls: want the base's 200", resp, err, base.calls)
	}
	resp.Body.Close()
}
