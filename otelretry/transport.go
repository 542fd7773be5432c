// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/metrics"
)

// Transport is an http.RoundTripper that retries requests within one
// deadline and records every operation and attempt as spans, logs and
// metrics. Create it with NewTransport. It is safe for concurrent use.
type Transport struct {
	cfg  config
	base http.RoundTripper
	// mode is how attempts are sent and recorded, chosen once here.
	mode sendMode
	// client is otelhttp's client transport around innermost{t}, through
	// which attempts are sent in sendThroughClient mode.
	client  http.RoundTripper
	tracer  trace.Tracer
	prop    propagation.TextMapPropagator
	metrics *metrics.Recorder
	budget  *Budget
	// noopTracer: the tracer is the no-op one (trace/noop), whose spans are
	// skipped where that is invisible (see startOperationSpan).
	noopTracer bool
	// internal is the start option of the transport's own spans, built once.
	internal []trace.SpanStartOption
	// retryableStatus[code-400] is cfg.retryableStatuses as an array.
	retryableStatus [200]bool
	repeats         repeatCounter
	// h2c, h1Only: the base is net/http's transport configured for
	// prior-knowledge HTTP/2 on http URLs, or for HTTP/1 alone (see
	// mayGoOverHTTP2); protocols remembers what hosts negotiated.
	h2c, h1Only bool
	protocols   protocolMemo
	// bodies is the memory for request bodies buffered for retries.
	bodies bodyPool
}

// sendMode is how a Transport sends an attempt and where it writes the
// attempt's telemetry: each mode writes it in one place (attempt.record),
// on the span that mode gives the attempt.
type sendMode uint8

const (
	// sendThroughClient: through otelhttp's client transport, whose CLIENT
	// span is the attempt span and injects the trace context.
	sendThroughClient sendMode = iota
	// sendWithOwnSpan (WithoutClientSpans, a tracer that may record):
	// straight to the base under the transport's INTERNAL attempt span;
	// the base, already instrumented, injects from its own CLIENT span.
	sendWithOwnSpan
	// sendInjectOnly: the no-op tracer and meter providers, with client
	// spans: otelhttp would record nothing, so the attempt goes straight
	// to the base with the trace context injected.
	sendInjectOnly
	// sendPlain: WithoutClientSpans with the no-op tracer: straight to the
	// base, which is instrumented.
	sendPlain
)

var _ http.RoundTripper = (*Transport)(nil)

// NewTransport wraps base (http.DefaultTransport when nil). Defaults: 3
// attempts, a 30s operation deadline, a 10s wait for each attempt's
// response headers, exponential backoff from 100ms to 2s with full jitter,
// a retry budget per host, global tracer, meter and propagator providers.
//
// Each attempt is sent through an otelhttp client transport, so that it is
// one CLIENT span, a child of the operation span, which also carries the
// attempt event; WithoutClientSpans sends attempts straight to base under
// an INTERNAL attempt span instead. With the no-op TracerProvider and
// MeterProvider (trace/noop, metric/noop), attempts go straight to base
// too, as otelhttp would record nothing, and only their trace context is
// injected.
func NewTransport(base http.RoundTripper, opts ...Option) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	cfg := newConfig(opts)
	if cfg.err != nil {
		otel.Handle(cfg.err) // the values were ignored; requests go on
	}
	tp, mp, prop := cfg.providers()
	rec, err := metrics.NewRecorder(mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version)))
	if err != nil {
		otel.Handle(err) // The recorder falls back to no-ops; requests go on.
	}
	t := &Transport{
		cfg:      cfg,
		base:     base,
		tracer:   tp.Tracer(ScopeName, trace.WithInstrumentationVersion(Version)),
		prop:     prop,
		metrics:  rec,
		budget:   cfg.budget,
		internal: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)},
	}
	t.bodies.perRequest, t.bodies.total = cfg.bodyBufferPerRequest, cfg.bodyBufferTotal
	for code := range cfg.retryableStatuses {
		t.retryableStatus[code-400] = true // WithRetryableStatuses keeps 400–599
	}
	if t.budget == nil && !cfg.noBudget {
		t.budget = NewBudget()
	}
	// Only the no-op implementations are detected, by type: the global
	// providers delegate to whatever is installed later and are always
	// used in full.
	_, t.noopTracer = t.tracer.(tracenoop.Tracer)
	_, noopMeter := mp.(metricnoop.MeterProvider)
	t.mode = chooseMode(cfg.clientSpans, t.noopTracer, noopMeter)
	if ht, ok := base.(*http.Transport); ok && ht.Protocols != nil {
		p := ht.Protocols
		t.h2c = p.UnencryptedHTTP2() && !p.HTTP1()
		t.h1Only = !p.HTTP2()
	}
	if t.mode == sendThroughClient {
		name := cfg.attemptName
		t.client = otelhttp.NewTransport(innermost{t},
			otelhttp.WithTracerProvider(tp),
			otelhttp.WithMeterProvider(mp),
			otelhttp.WithPropagators(prop),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return name(r) }))
	}
	return t
}

// chooseMode picks the sending mode from the options and the providers.
func chooseMode(clientSpans, noopTracer, noopMeter bool) sendMode {
	switch {
	case clientSpans && noopTracer && noopMeter:
		return sendInjectOnly
	case clientSpans:
		return sendThroughClient
	case noopTracer:
		return sendPlain
	}
	return sendWithOwnSpan
}

// CloseIdleConnections closes the idle connections of the base transport,
// if it has any (http.Client.CloseIdleConnections calls it).
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
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
	if req.URL == nil {
		closeBody(req)
		return nil, errNilURL // as net/http does, before any telemetry
	}
	op := newOperation(t, req)
	defer op.abandonOnPanic() // the user's formatters and labelers run in begin
	op.begin()
	resp, err := op.run()
	op.progress.returned = true
	op.awaitCaller()
	return resp, err
}

// send sends the prepared attempt in the Transport's mode and returns
// what came of it: the response or the error, and the verdict.
func (op *operation) send(a *attempt) result {
	switch op.t.mode {
	case sendThroughClient:
		resp, err := op.t.client.RoundTrip(a.out)
		if err == nil {
			// otelhttp's span stays open until the body is read: the
			// attempt is concluded on it now.
			return a.conclude(resp, nil)
		}
		if ae, ok := err.(*attemptError); ok && ae.decided {
			// Concluded inside, while otelhttp's span was open.
			return result{err: ae, v: ae.verdict}
		}
		return a.conclude(nil, err)
	case sendInjectOnly:
		op.t.prop.Inject(a.out.Context(), propagation.HeaderCarrier(a.out.Header))
	}
	return a.conclude(a.exchange(a.out))
}

// innermost is the RoundTripper inside otelhttp: it sends each attempt to
// the base. An attempt that failed is concluded here, while otelhttp's
// CLIENT span is still open (otelhttp ends it as soon as an error comes
// back), and its verdict goes back up inside the returned *attemptError.
type innermost struct{ t *Transport }

func (i innermost) RoundTrip(r *http.Request) (*http.Response, error) {
	a, ok := r.Context().Value(attemptKey{}).(*attempt)
	if !ok || a.op.t != i.t {
		return i.t.base.RoundTrip(r)
	}
	a.span = trace.SpanFromContext(r.Context())
	// otelhttp's clone copied the Trailer map, which the body fills as it
	// is read: net/http writes the map of the request it sends.
	r.Trailer = a.out.Trailer
	resp, err := a.exchange(r)
	if err != nil {
		res := a.conclude(nil, err)
		return nil, res.err
	}
	a.watchLateWrites(resp)
	return resp, nil
}
