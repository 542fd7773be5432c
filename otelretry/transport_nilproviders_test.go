// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/otelretry"
)

// A provider variable left nil when telemetry is configured off (var tp
// *sdktrace.TracerProvider) reaches the option as a nil pointer inside the
// interface: it is ignored, as nil is (README, the options' godoc), and the
// request goes through; so is a nil *http.Transport as the base.
func TestANilSDKProviderIsIgnored(t *testing.T) {
	var (
		tp *sdktrace.TracerProvider
		mp *sdkmetric.MeterProvider
		lp *sdklog.LoggerProvider
	)
	for _, c := range []struct {
		name string
		opt  otelretry.Option
	}{
		{"WithTracerProvider", otelretry.WithTracerProvider(tp)},
		{"WithMeterProvider", otelretry.WithMeterProvider(mp)},
		{"WithLoggerProvider", otelretry.WithLoggerProvider(lp)},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
			})
			var status int
			panicked := func() (p any) {
				defer func() { p = recover() }()
				rt := otelretry.NewTransport(base, c.opt, otelretry.WithoutBudget())
				req, err := http.NewRequest(http.MethodGet, "http://dependency.test/x", nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Errorf("RoundTrip: %v", err)
					return nil
				}
				resp.Body.Close()
				status = resp.StatusCode
				return nil
			}()
			if panicked != nil {
				t.Fatalf("%s with a nil provider panicked: %v", c.name, panicked)
			}
			if status != http.StatusOK {
				t.Errorf("status %d, want the base's 200", status)
			}
		})
	}
}

// A nil *http.Transport as the base is nil: http.DefaultTransport is used.
func TestANilBasePointerIsTheDefaultTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	defer http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	var base *http.Transport
	resp, err := otelretry.NewTransport(base).RoundTrip(get(t, t.Context(), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
