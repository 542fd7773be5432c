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

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
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
	// events is the Logger of the log events (WithLoggerProvider); nil
	// when they are off.
	events log.Logger

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

	bodyBufferPerRequest, bodyBufferTotal int64

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
		bodyBufferPerRequest: DefaultBodyBufferPerRequest,
		bodyBufferTotal:      DefaultBodyBufferTotal,
		operationName:        defaultOperationName,
		attemptName:          defaultAttemptName,
		clientSpans:          true,
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

// backoffFor asks the Backoff for the pause before retry n of an
// operation, after answer: through DelayAfter when it sees answers
// (AnswerBackoff), else Delay(n).
func (c *config) backoffFor(n int, a Answer) time.Duration {
	if ab, ok := c.backoff.(AnswerBackoff); ok {
		return max(ab.DelayAfter(n, a), 0)
	}
	return max(c.backoff.Delay(n), 0)
}

// normalizeMethod upper-cases a standard method name written in another
// case.
func normalizeMethod(m string) string {
	if up := strings.ToUpper(m); operationNames[up] != "" {
		return up
	}
	return m
}

// providers returns the configured providers, or the global ones.
func (c *config) providers() (trace.TracerProvider, metric.MeterProvider, propagation.TextMapPropagator) {
	tp, mp, prop := c.tracerProvider, c.meterProvider, c.propagators
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if prop == nil {
		prop = otel.GetTextMapPropagator()
	}
	return tp, mp, prop
}

// classify asks the Classifier, if any, about an attempt's answer.
func (c *config) classify(a Answer) Classification {
	if c.classifier == nil {
		return Classification{}
	}
	return c.classifier(a)
}
