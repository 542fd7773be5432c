// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/otelretry"
)

// env is what a configuration may depend on: the same for every
// configuration of a run.
type env struct {
	hedgeDelay  time.Duration // the tail distribution's true p95
	budgetShare float64       // the share of extra load a bounded configuration may add
	deadline    time.Duration // every operation's deadline (also set on its context)
	service     serviceDist   // the tail phase's service time
}

// config is one configuration under test: a name and the RoundTripper it
// puts around base, built afresh for each repetition (so that no budget or
// learned delay carries over from one repetition to the next).
type config struct {
	name      string
	transport func(base http.RoundTripper, e env) http.RoundTripper
}

// reference is the configuration every ratio is taken against.
const reference = "no-hedging"

// peerConfigs are the reference and the peers otelretry is measured
// against. failsafe-go's documented way to hedge HTTP is its round
// tripper (failsafehttp.NewRoundTripper) with a hedgepolicy; by default
// the outstanding attempts are cancelled as soon as one returns.
var peerConfigs = []config{
	{name: reference, transport: func(base http.RoundTripper, _ env) http.RoundTripper { return base }},
	{name: "failsafe-p95", transport: func(base http.RoundTripper, e env) http.RoundTripper {
		return failsafehttp.NewRoundTripper(base, hedgepolicy.NewWithDelay[*http.Response](e.hedgeDelay))
	}},
	{name: "failsafe-p95-budget", transport: func(base http.RoundTripper, e env) http.RoundTripper {
		// failsafe-go's budget bounds the share of in-flight executions
		// that are hedges or retries; minConcurrency keeps its default (3).
		b := budget.NewBuilder().WithMaxRate(e.budgetShare).Build()
		hp := hedgepolicy.NewBuilderWithDelay[*http.Response](e.hedgeDelay).WithBudget(b).Build()
		return failsafehttp.NewRoundTripper(base, hp)
	}},
}

// otelretryConfigs are otelretry's hedging configurations: its
// transport with its defaults (so the default retry budget, which hedges
// pass as retries do), a deadline of e.deadline, no-op tracer and meter
// providers (as the storm benchmark's otelretry configuration has), one
// hedge at most and a hedge rate of e.budgetShare, the share failsafe-go's
// budget gets:
//   - otelretry-p95: a fixed delay of e.hedgeDelay, the true p95;
//   - otelretry-adaptive: the adaptive delay, the p95 of the time to
//     response headers it observed, which must find the true p95 by itself
//     (no Delay: until it has observed 20 answers, it waits the longest
//     answer seen so far, docs/hedging.md's starting delay). It learns
//     from its own traffic in the warm-up phase, which every
//     configuration runs alike.
//
// The retry budget is otelretry's default rather than WithoutBudget: it is
// what a user gets, and what bounds hedges when the dependency fails. Here
// every answer is a 200, so it never refuses a hedge, and the hedge rate
// alone bounds the extra load; the two configurations keep the same.
var otelretryConfigs = []config{
	{name: "otelretry-p95", transport: func(base http.RoundTripper, e env) http.RoundTripper {
		return newOtelretry(base, e, otelretry.Hedging{Delay: e.hedgeDelay, MaxShare: e.budgetShare})
	}},
	{name: "otelretry-adaptive", transport: func(base http.RoundTripper, e env) http.RoundTripper {
		return newOtelretry(base, e, otelretry.Hedging{Adaptive: true, Quantile: 0.95, MaxShare: e.budgetShare})
	}},
}

// newOtelretry is otelretry's transport around base, hedging with h.
// More options (opts) come after these.
func newOtelretry(base http.RoundTripper, e env, h otelretry.Hedging, opts ...otelretry.Option) http.RoundTripper {
	return otelretry.NewTransport(base, append([]otelretry.Option{
		otelretry.WithHedging(h),
		otelretry.WithDeadline(e.deadline),
		otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
		otelretry.WithMeterProvider(metricnoop.NewMeterProvider())}, opts...)...)
}

// configs lists every configuration of a default run, in order.
var configs = slices.Concat(peerConfigs, otelretryConfigs)

func configNames() []string {
	names := make([]string, len(configs))
	for i, c := range configs {
		names[i] = c.name
	}
	return names
}

func lookupConfig(name string) (config, bool) {
	i := slices.IndexFunc(configs, func(c config) bool { return c.name == name })
	if i < 0 {
		return member(name)
	}
	return configs[i], true
}

// newBase returns a fresh transport with the same settings for every
// configuration: an idle pool large enough that connection reuse is never
// the bottleneck on loopback (a brownout holds hundreds of requests). It
// counts its dials in dials.
func newBase(dials *atomic.Int64) *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConns:        2000,
		MaxIdleConnsPerHost: 2000,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
}
