// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net/http"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivethrottler"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/hashicorp/go-retryablehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/benchmarks/internal/baselines"
	"github.com/otelretry/otelretry-go/otelretry"
)

// throttleWindow is the window of otelretry-throttle's client-side
// throttle (-throttle-window): a quarter of the trigger, so that the
// trigger's timeouts fill it within a fraction of a second, and slide out
// as soon after its end. A window must be shorter than the overload it is
// to end: the default, two minutes, suits overloads of minutes; a window
// of 4 s recovered in 8.2 s here, slower than no retries (3.2 s), 2 s in
// 3.7 s, 1 s in 1.6 s, 500 ms in 0.5 s.
var throttleWindow = 500 * time.Millisecond

// throttleOptions turns otelretry's client-side throttle on, at its
// defaults (K 2, at most 0.9 refused) but the window, added to otelretry's
// defaults in the configuration otelretry-throttle. It is called once per
// client, so that each client has a throttle of its own.
var throttleOptions = func() []otelretry.Option {
	return []otelretry.Option{otelretry.WithThrottle(&otelretry.Throttle{Window: throttleWindow})}
}

// config is one retry configuration: what it wraps around the base
// transport of one client.
type config struct {
	wrap func(base http.RoundTripper, o options) http.RoundTripper
}

// order is the configurations of a default run, in order.
var order = []string{
	"no-retry", "naive", "retryablehttp", "failsafehttp", "failsafehttp-throttler",
	"aws-quota", "grpc-throttle", "otelretry", "otelretry-throttle",
}

// configs are the configurations. Every one gives an attempt
// o.attemptTimeout and an operation o.deadline (the caller's context), so
// that only what they do between attempts differs.
var configs = map[string]config{
	"no-retry": {func(base http.RoundTripper, o options) http.RoundTripper {
		return baselines.WithAttemptTimeout(base, o.attemptTimeout)
	}},
	"naive": {func(base http.RoundTripper, o options) http.RoundTripper {
		return baselines.Naive(baselines.WithAttemptTimeout(base, o.attemptTimeout), 3, o.naiveBackoff)
	}},
	"retryablehttp": {func(base http.RoundTripper, o options) http.RoundTripper {
		c := retryablehttp.NewClient()
		c.RetryMax = 2 // 3 attempts; the rest its defaults
		c.Logger = nil
		c.HTTPClient = &http.Client{Transport: baselines.WithAttemptTimeout(base, o.attemptTimeout)}
		return &retryablehttp.RoundTripper{Client: c}
	}},
	"failsafehttp": {func(base http.RoundTripper, o options) http.RoundTripper {
		rp := failsafehttp.NewRetryPolicyBuilder().WithMaxAttempts(3).Build()
		return failsafehttp.NewRoundTripper(baselines.WithAttemptTimeout(base, o.attemptTimeout), rp)
	}},
	// The throttler first: failsafe-go composes the first policy outermost,
	// so it admits operations and counts their outcomes after the retries.
	"failsafehttp-throttler": {func(base http.RoundTripper, o options) http.RoundTripper {
		rp := failsafehttp.NewRetryPolicyBuilder().WithMaxAttempts(3).Build()
		at := adaptivethrottler.NewWithDefaults[*http.Response]()
		return failsafehttp.NewRoundTripper(baselines.WithAttemptTimeout(base, o.attemptTimeout), at, rp)
	}},
	"aws-quota": {func(base http.RoundTripper, o options) http.RoundTripper {
		return baselines.NewBudgeted(baselines.WithAttemptTimeout(base, o.attemptTimeout), baselines.NewAWSQuota())
	}},
	"grpc-throttle": {func(base http.RoundTripper, o options) http.RoundTripper {
		return baselines.NewBudgeted(baselines.WithAttemptTimeout(base, o.attemptTimeout), baselines.NewGRPCThrottle())
	}},
	"otelretry": {func(base http.RoundTripper, o options) http.RoundTripper {
		return newOtelretry(base, o)
	}},
	"otelretry-throttle": {func(base http.RoundTripper, o options) http.RoundTripper {
		return newOtelretry(base, o, throttleOptions()...)
	}},
}

// newOtelretry is otelretry at its defaults but for the scenario's
// deadline and attempt timeout, with no-op telemetry, and extra options.
func newOtelretry(base http.RoundTripper, o options, extra ...otelretry.Option) http.RoundTripper {
	opts := []otelretry.Option{
		otelretry.WithDeadline(o.deadline),
		otelretry.WithAttemptTimeout(o.attemptTimeout),
		otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
	}
	return otelretry.NewTransport(base, append(opts, extra...)...)
}

// available says whether a configuration can run.
func available(name string) bool {
	_, ok := configs[name]
	return ok
}

// defaultConfigs is the order of a default run.
func defaultConfigs() []string { return order }

// client builds one client of a configuration around a fresh base
// transport, and returns the base too, to close its connections.
func (c config) client(o options) (*http.Client, *http.Transport) {
	base := baselines.NewBase()
	return &http.Client{Transport: c.wrap(base, o)}, base
}
