// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
)

// Defaults, used when the matching option is not given.
const (
	DefaultMaxAttempts    = 3
	DefaultDeadline       = 30 * time.Second
	DefaultAttemptTimeout = 10 * time.Second
	DefaultBackoffInitial = 100 * time.Millisecond
	DefaultBackoffMax     = 2 * time.Second
)

// config is assembled once in NewTransport and read-only afterwards.
type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	propagators    propagation.TextMapPropagator
	logger         *slog.Logger

	maxAttempts    int
	deadline       time.Duration
	attemptTimeout time.Duration
	backoff        Backoff
	budget         *Budget
	noBudget       bool
	stateCheck     StateCheckFunc
	classifier     Classifier
	prepare        PrepareFunc
	trustResends   bool

	idempotentMethods  map[string]bool
	retryableStatuses  map[int]bool
	idempotencyHeaders []string

	operationName func(*http.Request) string
	attemptName   func(*http.Request) string
	clientSpans   bool
	metricsServer bool

	metricAttributes func(*http.Request) []attribute.KeyValue

	// err collects the options' complaints about values they ignored;
	// NewTransport reports them once, through otel.Handle.
	err error
}

// invalid records that an option ignored a value, for NewTransport to
// report.
func (c *config) invalid(option string, value any, want string) {
	c.err = errors.Join(c.err, fmt.Errorf("otelretry: %s(%v) ignored: %s", option, value, want))
}

func newConfig(opts []Option) config {
	c := config{
		maxAttempts:       DefaultMaxAttempts,
		deadline:          DefaultDeadline,
		attemptTimeout:    DefaultAttemptTimeout,
		backoff:           ExponentialBackoff(DefaultBackoffInitial, DefaultBackoffMax),
		idempotentMethods: map[string]bool{},
		retryableStatuses: map[int]bool{
			http.StatusRequestTimeout: true, http.StatusTooManyRequests: true, http.StatusBadGateway: true,
			http.StatusServiceUnavailable: true, http.StatusGatewayTimeout: true,
		},
		operationName: defaultOperationName,
		attemptName:   defaultAttemptName,
		clientSpans:   true,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// Default operation span names, built once for the standard methods so
// that naming a span allocates nothing. Attempt spans are named by the
// method alone, as the HTTP semantic conventions name client spans.
var operationNames = spanNames("retry ")

func spanNames(prefix string) map[string]string {
	names := map[string]string{}
	for _, m := range attrs.Methods() {
		names[m] = prefix + m
	}
	return names
}

func defaultOperationName(r *http.Request) string { return spanName(operationNames, "retry ", r) }

// defaultAttemptName is the semantic conventions' client span name:
// "{method}", or HTTP for a method outside the standard set.
func defaultAttemptName(r *http.Request) string {
	m := methodOf(r)
	if _, ok := operationNames[m]; ok {
		return m
	}
	return "HTTP"
}

func spanName(names map[string]string, prefix string, r *http.Request) string {
	m := methodOf(r)
	if name, ok := names[m]; ok {
		return name
	}
	return prefix + m
}

// Option configures a Transport.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithTracerProvider sets the TracerProvider for operation, attempt and HTTP
// client spans. A nil provider is ignored: the global one is used.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) {
		if tp != nil {
			c.tracerProvider = tp
		}
	})
}

// WithMeterProvider sets the MeterProvider for the retry metrics (package
// metrics) and the HTTP client metrics. A nil provider is ignored: the
// global one is used.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if mp != nil {
			c.meterProvider = mp
		}
	})
}

// WithPropagators sets the propagators that inject trace context into each
// attempt's headers. Nil is ignored: the global propagator is used.
func WithPropagators(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) {
		if p != nil {
			c.propagators = p
		}
	})
}

// WithLogger writes one structured record per attempt, with the fields of
// the attempt span plus trace and span ids. Nil is ignored (no logging).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) {
		if l != nil {
			c.logger = l
		}
	})
}

// WithMaxAttempts limits the network calls of one operation, the first
// included. Values below 1 are ignored. Default: DefaultMaxAttempts (3).
func WithMaxAttempts(n int) Option {
	return optionFunc(func(c *config) {
		if n < 1 {
			c.invalid("WithMaxAttempts", n, "want 1 or more")
			return
		}
		c.maxAttempts = n
	})
}

// WithDeadline sets the budget of a whole operation: attempts, backoff and
// waiting for Retry-After all count against it. The deadline is the earlier
// of start+d and the request context's deadline. Values ≤ 0 are ignored.
// Default: DefaultDeadline (30s).
func WithDeadline(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d <= 0 {
			c.invalid("WithDeadline", d, "want a positive duration")
			return
		}
		c.deadline = d
	})
}

// WithAttemptTimeout bounds the wait for one attempt's answer: until its
// response headers arrive, or it fails. Each attempt gets the smaller of d
// and the operation's time left. The body of the response handed to the
// caller is not bounded by it, nor by the operation deadline: it belongs
// to the caller's context alone (as with http.Transport's
// ResponseHeaderTimeout), so streams and slow downloads are not cut.
// Values ≤ 0 are ignored. Default: DefaultAttemptTimeout (10s).
func WithAttemptTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d <= 0 {
			c.invalid("WithAttemptTimeout", d, "want a positive duration")
			return
		}
		c.attemptTimeout = d
	})
}

// WithBackoff sets the pause before each retry. Nil is ignored. Default:
// ExponentialBackoff(100ms, 2s), with full jitter.
func WithBackoff(b Backoff) Option {
	return optionFunc(func(c *config) {
		if b != nil {
			c.backoff = b
		}
	})
}

// WithIdempotentMethods declares more methods safe to repeat (for example
// PUT and DELETE on an API whose handlers you know to be idempotent). GET,
// HEAD, OPTIONS and TRACE always are. Names are case-insensitive for the
// standard methods ("put" declares PUT); other methods are matched as
// written, since HTTP methods are case-sensitive. An empty name is
// ignored. To make one request repeatable (a read-only POST), use
// WithIntent instead.
func WithIdempotentMethods(methods ...string) Option {
	return optionFunc(func(c *config) {
		for _, m := range methods {
			if m == "" {
				c.invalid("WithIdempotentMethods", `""`, "want a method name")
				continue
			}
			c.idempotentMethods[normalizeMethod(m)] = true
		}
	})
}

// normalizeMethod upper-cases a standard method name written in another
// case.
func normalizeMethod(m string) string {
	if up := strings.ToUpper(m); operationNames[up] != "" {
		return up
	}
	return m
}

// WithRetryableStatuses replaces the response statuses that an idempotent
// request may retry. Default: 408, 429, 502, 503, 504. Codes outside
// 400–599 are ignored; an empty list is ignored.
func WithRetryableStatuses(codes ...int) Option {
	return optionFunc(func(c *config) {
		set := map[int]bool{}
		for _, code := range codes {
			if code < 400 || code > 599 {
				c.invalid("WithRetryableStatuses", code, "want a status from 400 to 599")
				continue
			}
			set[code] = true
		}
		if len(set) == 0 {
			c.invalid("WithRetryableStatuses", codes, "want at least one status from 400 to 599")
			return
		}
		c.retryableStatuses = set
	})
}

// WithIdempotencyKeyContract declares that the server honours idempotency
// keys (draft-ietf-httpapi-idempotency-key-header): a repeated request with
// the same key returns the stored result instead of applying the write
// again. Requests that carry one of the headers (default "Idempotency-Key"
// and "X-Idempotency-Key") then retry like safe methods; the operation span
// records retry.idempotency_contract=true. Without this option such a
// request is treated like any other write: only the server can prove the
// contract, and the client may rely on it only when told so.
func WithIdempotencyKeyContract(headers ...string) Option {
	return optionFunc(func(c *config) {
		c.idempotencyHeaders = []string{"Idempotency-Key", "X-Idempotency-Key"}
		if len(headers) > 0 {
			c.idempotencyHeaders = headers
		}
	})
}

// WithStateCheck sets the hook that resolves an unknown write outcome
// (decision check_state). See StateCheckFunc. Nil is ignored.
func WithStateCheck(f StateCheckFunc) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.stateCheck = f
		}
	})
}

// WithSpanNameFormatter names the operation span; the result should be of
// low cardinality (no ids, no paths). Nil is ignored. Default: "retry GET".
func WithSpanNameFormatter(f func(*http.Request) string) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.operationName = f
		}
	})
}

// WithAttemptSpanNameFormatter names the attempt spans (otelhttp's CLIENT
// spans, or the INTERNAL attempt spans with WithoutClientSpans); the
// result should be of low cardinality. Nil is ignored. Default: the
// method, as the HTTP semantic conventions name client spans ("GET").
func WithAttemptSpanNameFormatter(f func(*http.Request) string) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.attemptName = f
		}
	})
}

// WithoutClientSpans sends attempts straight to the base transport instead
// of through an otelhttp client transport. Use it when the base transport
// is already instrumented: each attempt then gets an INTERNAL attempt span
// carrying the attempt event, and the base's own CLIENT span nests under
// it. By default each attempt is one otelhttp CLIENT span that carries the
// attempt event, and trace context is injected from it.
func WithoutClientSpans() Option {
	return optionFunc(func(c *config) { c.clientSpans = false })
}

// WithTrustedBaseResends declares that the base transport resends a
// request by itself only with proof that the server did not process it,
// as quic-go's http3.Transport does (H3_REQUEST_REJECTED, or a connection
// unusable before the request left). The transport then lets such a
// resend of a write through (and counts it), instead of refusing it once
// the request was written. Do not use it with net/http's transport: its
// HTTP/2 client also resends on PROTOCOL_ERROR, which proves nothing, and
// its HTTP/1 client resends on a dead keep-alive connection.
func WithTrustedBaseResends() Option {
	return optionFunc(func(c *config) { c.trustResends = true })
}

// WithMetricsServerAddress adds server.address to the retry metrics' labels
// (see metrics.WithServerAddress): one set of series per host.
func WithMetricsServerAddress() Option {
	return optionFunc(func(c *config) { c.metricsServer = true })
}

// WithBudget shares or tunes the retry budget (see Budget). Pass the same
// Budget to several Transports to bound their combined retries. Nil is
// ignored. Default: a Budget per Transport with the default settings.
func WithBudget(b *Budget) Option {
	return optionFunc(func(c *config) {
		if b != nil {
			c.budget = b
			c.noBudget = false
		}
	})
}

// WithoutBudget turns the retry budget off: only the attempt limit and the
// deadline bound retries. Not recommended for clients of shared services.
func WithoutBudget() Option {
	return optionFunc(func(c *config) {
		c.budget = nil
		c.noBudget = true
	})
}

// WithMetricAttributes adds labels to the retry metrics, computed once per
// operation from the request, like otelhttp's Labeler: a tenant tier, a
// dependency name, a route template. Every distinct value is a new series,
// so return only values from a small, fixed set. Ids, URLs and the keys the
// metrics set themselves are dropped (see metrics.NewLabels). Nil is
// ignored.
func WithMetricAttributes(f func(*http.Request) []attribute.KeyValue) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.metricAttributes = f
		}
	})
}

// backoffFor asks the Backoff for the pause before retry n of an
// operation, after answer: through DelayAfter when it sees answers
// (AnswerBackoff), else Delay(n).
func (c *config) backoffFor(n int, a Answer) time.Duration {
	if ab, ok := c.backoff.(AnswerBackoff); ok {
		return max(ab.DelayAfter(n, a), 0)
	}
	return max(c.backoff.Delay(n), 0)
}
