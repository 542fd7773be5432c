// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"fmt"
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/internal/meterguard"
	"github.com/otelretry/otelretry-go/metrics"
)

// Transport is an http.RoundTripper that retries requests within one
// deadline and records every operation and attempt as spans, logs and
// metrics. Create it with NewTransport: its zero value refuses every
// request with an error that says so. It is safe for concurrent use.
//
// Make one per dependency or client and share it: its budget, throttle and
// hedge rate learn from the operations it serves. It has no Close and
// keeps no goroutine running between operations: one no longer referenced
// is collected once its operations ended, its timer with it;
// CloseIdleConnections closes its base's idle connections.
type Transport struct {
	// shared is what every operation of the Transport shares (see
	// runOperation).
	shared
}

var _ http.RoundTripper = (*Transport)(nil)

// NewTransport wraps base (http.DefaultTransport when nil). Defaults: 3
// attempts, a 30s operation deadline, a 10s attempt timeout, exponential
// backoff from 100ms to 2s with full jitter, a retry budget per host,
// global tracer, meter and propagator providers.
//
// Each attempt is sent through an otelhttp client transport, so that it is
// one CLIENT span, a child of the operation span, which also carries the
// attempt event; WithoutClientSpans sends attempts straight to base under
// an INTERNAL attempt span instead, as does a base that is otelhttp's own
// *Transport (instrumented already). With the no-op TracerProvider and
// MeterProvider (trace/noop, metric/noop), attempts go straight to base
// too, as otelhttp would record nothing, and only their trace context is
// injected.
//
// The values its options ignored are reported in one error through
// otel.Handle, on the caller's goroutine, before it returns; the handler
// set with otel.SetErrorHandler runs there, as it does, on a goroutine of
// otelretry's own, for a panic nobody waits for (see Results), where a
// handler that panics ends the process.
func NewTransport(base http.RoundTripper, opts ...Option) *Transport {
	if isNil(base) {
		base = http.DefaultTransport
	}
	cfg := newConfig(opts)
	if err := cfg.complaint(); err != nil {
		otel.Handle(err) // the values were ignored; requests go on
	}
	tp, mp, prop := cfg.providers()
	// Guarded for otelretry's instruments and otelhttp's: one that breaks
	// the API's contract, a nil pointer installed as the global one too,
	// is the no-op one, and told as it below.
	mp = meterguard.Provider(mp)
	_, noopMeter := mp.(metricnoop.MeterProvider)
	mr, err := metrics.NewRecorder(mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version)))
	if err != nil {
		// The recorder falls back to no-ops; requests go on.
		otel.Handle(fmt.Errorf("otelretry: metric instruments: %w", err))
	}
	tracer := tp.Tracer(ScopeName, trace.WithInstrumentationVersion(Version))
	// Only the no-op implementations are detected, by type: the global
	// providers delegate to whatever is installed later and are always
	// used in full.
	_, noopTracer := tracer.(tracenoop.Tracer)
	// A base that is otelhttp's Transport makes each attempt's CLIENT span
	// itself: one of otelretry's own above it would double the span and
	// otelhttp's metrics.
	_, instrumented := base.(*otelhttp.Transport)
	mode := chooseMode(cfg.clientSpans && !instrumented, noopTracer, noopMeter)
	budget := cfg.budget
	if budget == nil && !cfg.noBudget {
		budget = &Budget{}
	}
	operationName := cfg.operationName
	if operationName == nil {
		operationName = defaultOperationName
	}
	t := &Transport{}
	hedger := &hedger{}
	var client http.RoundTripper
	if mode == sendThroughClient {
		name := cfg.attemptName
		client = otelhttp.NewTransport(innermost{&t.sender},
			otelhttp.WithTracerProvider(tp),
			otelhttp.WithMeterProvider(mp),
			otelhttp.WithPropagators(spanNoting{prop, &t.sender}),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return name(r) }))
	}
	_, stacked := base.(*Transport) // another otelretry Transport below
	t.shared = shared{cfg: cfg, policy: cfg.policyConfig(), retryable: cfg.statusSet(), budget: budget,
		hedger: hedger, gate: admission{budget: budget, hedger: hedger, throttle: cfg.throttle}, sender: sender{
			mode:    mode,
			base:    base,
			client:  client,
			stacked: stacked,
			prop:    prop,
			rec: &recorder{
				mode:             mode,
				tracer:           tracer,
				noopTracer:       noopTracer,
				internal:         []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)},
				metrics:          mr,
				logger:           cfg.logger,
				events:           cfg.events,
				operationName:    operationName,
				userNamed:        cfg.operationName != nil,
				attemptName:      cfg.attemptName,
				metricsServer:    cfg.metricsServer,
				metricAttributes: cfg.metricAttributes,
				keyValues:        cfg.keyValues,
			},
			prepare:       cfg.prepare,
			trustResends:  cfg.trustResends,
			protocols:     protocolsOf(base),
			dialect:       dialect{hints: cfg.hints, verdicts: cfg.verdictHeaders},
			attemptHeader: cfg.attemptHeader,
			keyHeaders:    cfg.keyHeaderNames(),
		}}
	t.bodies.init(cfg.bodyBufferPerRequest, cfg.bodyBufferTotal)
	return t
}

// protocolsOf reads what base is configured for: net/http's transport
// (known), configured for prior-knowledge HTTP/2 on http URLs, or for
// HTTP/1 alone. Any other base, net/http's wrapped in a layer included,
// is not known: its connections without TLS may speak HTTP/2.
func protocolsOf(base http.RoundTripper) protocols {
	ht, ok := base.(*http.Transport)
	if !ok {
		return protocols{}
	}
	if ht.Protocols == nil {
		return protocols{known: true}
	}
	// net/http speaks prior-knowledge HTTP/2 on every connection without a
	// TLS state (any URL's, a dialer's connection that is not a *tls.Conn
	// included) when it is configured for unencrypted HTTP/2 and not for
	// HTTP/1; and no HTTP/2 at all only when configured for neither kind
	// (so one configured for HTTP/1 and unencrypted HTTP/2 alone may speak
	// HTTP/2 to an https host for all this says: the safe side for a
	// resend, see mayGoOverHTTP2).
	p := ht.Protocols
	return protocols{known: true, h2c: p.UnencryptedHTTP2() && !p.HTTP1(), h1Only: !p.HTTP2() && !p.UnencryptedHTTP2()}
}

// CloseIdleConnections closes the idle connections of the base transport,
// if it has any (http.Client.CloseIdleConnections calls it).
func (t *Transport) CloseIdleConnections() {
	if t == nil {
		return // as RoundTrip refuses a nil Transport rather than panic
	}
	if c, ok := t.sender.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// CancelRequest does nothing: a request's context ends its operation.
// It exists because client-go, like http.Client's Timeout with older
// RoundTrippers, calls CancelRequest on a RoundTripper that has one after
// canceling the request's context, and logs a warning on every timeout
// otherwise. It cannot look the request up either: client-go passes a copy
// of the request the Transport saw.
//
// Deprecated: cancel the request's context instead, as for
// http.Transport.CancelRequest.
func (t *Transport) CancelRequest(*http.Request) {}

// RoundTrip runs one logical operation: it sends req, and sends it again
// while the decision rules allow, each attempt a child span of the
// operation span. It returns the last response received, whatever the
// outcome, or an *Error when no response can be returned. req is not
// modified; its body is closed.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t == nil || t.sender.base == nil {
		closeBody(req)
		return nil, errNotBuilt // a zero Transport has no base, no telemetry, no budget
	}
	if req.URL == nil {
		closeBody(req)
		return nil, errNilURL // as net/http does, before any telemetry
	}
	if strings.IndexByte(req.URL.Host, '@') >= 0 {
		// A URL built by hand with its userinfo in Host: no base sends it
		// (net/http looks the whole text up as a host name), and
		// server.address, ours and otelhttp's, would carry the userinfo.
		closeBody(req)
		return nil, errUserinfoInHost
	}
	if strings.ContainsAny(req.URL.Host, "?#") {
		// The same for a query or fragment (a token in it) in Host:
		// server.address and the metrics' label would carry it.
		closeBody(req)
		return nil, errQueryInHost
	}
	return runOperation(&t.shared, req)
}
