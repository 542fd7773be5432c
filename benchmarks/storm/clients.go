// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net/http"
	"time"

	"github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/hashicorp/go-retryablehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/benchmarks/internal/baselines"
	"github.com/otelretry/otelretry-go/otelretry"
)

// configNames lists the configurations of a default run, in order.
// windowed-budget, grpc-throttle and aws-quota run otelretry's default
// bounds in a plain retry loop with another budget (internal/baselines).
// otelretry-hedging is otelretry with its defaults and adaptive hedging
// (issue 36): its hedges must not break the bounds its retries keep.
// otelretry-hedging-fixed hedges every operation whose answer takes more
// than 100 ms, with no rate limit of its own (MaxShare 1), fresh clients
// included: only the retry budget's admission bounds its hedges (issue
// 40). otelretry-verdict runs against a server whose refusals are 500s
// that say X-Should-Retry: true, so that its retries are the servers'
// verdicts' (issue 40): they must cost the budget as any retry does.
var configNames = []string{
	"no-retry", "naive", "otelretry", "otelretry-hedging", "otelretry-hedging-fixed", "otelretry-verdict",
	"windowed-budget", "grpc-throttle", "aws-quota", "retryablehttp", "failsafehttp", "failsafehttp-budget",
}

// verdictConfig is the configuration whose server answers its refusals
// with a 500 and a "true" should-retry verdict.
const verdictConfig = "otelretry-verdict"

// budgeted are the configurations on otelretry's default Budget, whose
// amplification in the 503 outage docs/budget.md bounds: every otelretry
// configuration of a default run (TestEveryOtelretryRunIsJudgedOnTheBound).
var budgeted = map[string]bool{
	"otelretry": true, "otelretry-hedging": true, "otelretry-hedging-fixed": true, verdictConfig: true,
}

// diagnosticNames are extra configurations, run only when named with
// -configs: otelretry with its budget off, or giving back a whole token per
// success (retries go on until half the attempts fail), to separate the
// budget's effect from the backoff's and the deadline's.
var diagnosticNames = []string{"otelretry-nobudget", "otelretry-ratio1"}

// clientParams are the knobs shared by the configurations.
type clientParams struct {
	deadline            time.Duration // the operation deadline, the same for all
	naiveBackoff        time.Duration // naive: constant pause between attempts
	naiveAttemptTimeout time.Duration // naive: per-attempt timeout (0: none)
}

// newClient builds the client of one configuration around a fresh base
// transport. The caller bounds every operation with context.WithTimeout
// (p.deadline); no configuration has an http.Client timeout.
func newClient(name string, p clientParams) (*http.Client, *http.Transport) {
	base := baselines.NewBase()
	var rt http.RoundTripper
	switch name {
	case "no-retry":
		rt = base
	case "naive":
		rt = baselines.Naive(baselines.WithAttemptTimeout(base, p.naiveAttemptTimeout), 3, p.naiveBackoff)
	case "otelretry":
		rt = otelretry.NewTransport(base,
			otelretry.WithDeadline(p.deadline),
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithMeterProvider(metricnoop.NewMeterProvider()))
	case "otelretry-hedging":
		// Hedging's defaults but the delay: one hedge, the adaptive delay
		// at the p95 of the time to response headers, at most 5 % of
		// operations hedged.
		rt = otelretry.NewTransport(base,
			otelretry.WithDeadline(p.deadline),
			otelretry.WithHedging(otelretry.Hedging{Adaptive: true}),
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithMeterProvider(metricnoop.NewMeterProvider()))
	case "otelretry-hedging-fixed":
		rt = otelretry.NewTransport(base,
			otelretry.WithDeadline(p.deadline),
			otelretry.WithHedging(otelretry.Hedging{Delay: 100 * time.Millisecond, MaxShare: 1}),
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithMeterProvider(metricnoop.NewMeterProvider()))
	case verdictConfig:
		rt = otelretry.NewTransport(base,
			otelretry.WithDeadline(p.deadline),
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithMeterProvider(metricnoop.NewMeterProvider()))
	case "otelretry-nobudget":
		rt = otelretry.NewTransport(base,
			otelretry.WithDeadline(p.deadline),
			otelretry.WithoutBudget(),
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithMeterProvider(metricnoop.NewMeterProvider()))
	case "otelretry-ratio1":
		rt = otelretry.NewTransport(base,
			otelretry.WithDeadline(p.deadline),
			otelretry.WithBudget(&otelretry.Budget{TokenRatio: 1}),
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithMeterProvider(metricnoop.NewMeterProvider()))
	case "windowed-budget":
		rt = baselines.NewBudgeted(base, baselines.NewWindowedBudget())
	case "grpc-throttle":
		rt = baselines.NewBudgeted(base, baselines.NewGRPCThrottle())
	case "aws-quota":
		rt = baselines.NewBudgeted(base, baselines.NewAWSQuota())
	case "retryablehttp":
		c := retryablehttp.NewClient()
		c.RetryMax = 2 // 3 attempts
		c.Logger = nil
		c.HTTPClient = &http.Client{Transport: base}
		rt = &retryablehttp.RoundTripper{Client: c}
	case "failsafehttp":
		rp := failsafehttp.NewRetryPolicyBuilder().WithMaxAttempts(3).Build()
		rt = failsafehttp.NewRoundTripper(base, rp)
	case "failsafehttp-budget":
		rp := failsafehttp.NewRetryPolicyBuilder().WithMaxAttempts(3).WithBudget(budget.New()).Build()
		rt = failsafehttp.NewRoundTripper(base, rp)
	default:
		return nil, nil
	}
	return &http.Client{Transport: rt}, base
}
