// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net"
	"net/http"
	"time"

	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/hashicorp/go-retryablehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/otelretry"
)

// configNames lists the configurations of a default run, in order.
var configNames = []string{"plain", "retryablehttp", "failsafehttp", "otelretry", "otelretry-keys"}

// keyed is the configuration with generated keys, which the targets judge;
// unkeyed is the same without them.
const keyed, unkeyed = "otelretry-keys", "otelretry"

// newBase returns a fresh transport with the same settings for every
// configuration. Keep-alives are off, so that every request takes a
// connection of its own: no request is resent by net/http below the
// network's count (it resends only on a reused connection).
func newBase() *http.Transport {
	return &http.Transport{
		Proxy:             nil,
		DialContext:       (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		DisableKeepAlives: true,
	}
}

// newClient returns the round tripper of configuration name over the
// network n, or nil for a name it does not know. Every configuration is
// at its defaults but for what the run sets for all: the write's deadline
// is its context's, and otelretry's attempt timeout is o.attemptTimeout.
func newClient(name string, o options, n http.RoundTripper) http.RoundTripper {
	switch name {
	case "plain":
		return n
	case "retryablehttp":
		c := retryablehttp.NewClient() // 4 retries of any error and of 5xx but 501, 1 s to 30 s apart
		c.Logger = nil
		c.HTTPClient = &http.Client{Transport: n}
		return &retryablehttp.RoundTripper{Client: c}
	case "failsafehttp":
		// 2 retries of any error, 429 and 5xx but 501, at once or after
		// a 429's or a 503's Retry-After.
		return failsafehttp.NewRoundTripper(n, failsafehttp.NewRetryPolicyBuilder().Build())
	case unkeyed, keyed:
		opts := []otelretry.Option{
			otelretry.WithDeadline(o.deadline),
			otelretry.WithAttemptTimeout(o.attemptTimeout),
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
		}
		if name == keyed {
			opts = append(opts, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))
		}
		return otelretry.NewTransport(n, opts...)
	}
	return nil
}
