// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/httpmethod"
)

// Defaults, used when the matching option is not given.
const (
	defaultMaxAttempts    = 3
	defaultDeadline       = 30 * time.Second
	defaultAttemptTimeout = 10 * time.Second
	defaultBackoffInitial = 100 * time.Millisecond
	defaultBackoffMax     = 2 * time.Second
)

func newConfig(opts []Option) config {
	c := config{
		maxAttempts:       defaultMaxAttempts,
		deadline:          defaultDeadline,
		attemptTimeout:    defaultAttemptTimeout,
		backoff:           ExponentialBackoff(defaultBackoffInitial, defaultBackoffMax),
		idempotentMethods: map[string]bool{},
		retryableStatuses: map[int]bool{
			http.StatusRequestTimeout: true, http.StatusTooManyRequests: true, http.StatusBadGateway: true,
			http.StatusServiceUnavailable: true, http.StatusGatewayTimeout: true,
		},
		bodyBufferPerRequest: defaultBodyBufferPerRequest,
		hints:                defaultRetryHints(),
		verdictHeaders:       defaultShouldRetryHeaders(),
		bodyBufferTotal:      defaultBodyBufferTotal,
		attemptName:          defaultAttemptName,
		clientSpans:          true,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	c.checkAddedHeaders()
	return c
}

// checkAddedHeaders drops a header otelretry would add that another owns:
// the generated idempotency key's header named as a field of the
// propagators, which write over it on every attempt (a key per attempt is
// no key); the attempt's number or the operation's id named as
// a header that holds idempotency keys (the draft's two, which net/http
// takes as a request's word that it may be resent, or one the options
// name: the number would be every write's key, "1", and the id every
// write's of a job, which shares it), or as a field of the propagators;
// and the attempt header named as the operation id's (one would hide the
// other).
func (c *config) checkAddedHeaders() {
	var propagated []string
	if c.propagators != nil {
		propagated = c.propagators.Fields()
	} else {
		// The global propagator's, which may be set after the Transport
		// is built: the W3C fields it is usually set to write too.
		propagated = append(otel.GetTextMapPropagator().Fields(), "Traceparent", "Tracestate", "Baggage")
	}
	isPropagated := func(name string) bool {
		return slices.ContainsFunc(propagated, func(k string) bool { return strings.EqualFold(k, name) })
	}
	const keyWhy = "want a header the propagators do not write"
	if c.keys != nil && isPropagated(c.keys.Name) {
		c.invalid("WithIdempotencyKeys", c.keys.Name, keyWhy)
		c.keys, c.keyNotWritten = nil, nil
	}
	// A key header keeps the propagators off it (ownHeadersKept): one
	// named as their field would cost every request its trace context.
	c.idempotencyHeaders = c.unpropagated("WithIdempotencyKeyContract", c.idempotencyHeaders, isPropagated, keyWhy)
	c.recordedKeyHeaders = c.unpropagated("WithRecordedIdempotencyKey", c.recordedKeyHeaders, isPropagated, keyWhy)

	owned := append(c.keyHeaderNames(), "Idempotency-Key", "X-Idempotency-Key")
	taken := func(name string) bool {
		return isPropagated(name) || slices.ContainsFunc(owned, func(k string) bool { return strings.EqualFold(k, name) })
	}
	const why = "want a header that holds no idempotency key and no propagated field"
	if c.opIDHeader != "" && taken(c.opIDHeader) {
		c.invalid("WithOperationIDHeader", c.opIDHeader, why)
		c.opIDHeader = ""
	}
	if c.attemptHeader == nil {
		return
	}
	switch name := c.attemptHeader.name; {
	case taken(name):
		c.invalid("WithAttemptHeader", name, why)
		c.attemptHeader = nil
	case strings.EqualFold(name, c.opIDHeader):
		c.invalid("WithAttemptHeader", name, "want a header other than WithOperationIDHeader's")
		c.attemptHeader = nil
	}
}

// unpropagated is names, an idempotency option's headers, without those
// propagated reports (the draft's two aside, which are no name a user
// chose), each reported as ignored by option; with none left, the
// defaults hold, as for names that are no header names (keyHeaders).
func (c *config) unpropagated(option string, names []string, propagated func(string) bool, why string) []string {
	kept := slices.DeleteFunc(slices.Clone(names), func(n string) bool {
		if propagated(n) && !isDraftKeyHeader(n) {
			c.invalid(option, n, why)
			return true
		}
		return false
	})
	if len(kept) == 0 && len(names) > 0 {
		return c.keyHeaders(option, nil)
	}
	return kept
}

// Default operation span names, built once for the standard methods so
// that naming a span allocates nothing: "retry {method}", and "retry HTTP"
// for a method outside the standard set, which would otherwise make a
// span name of any string a client sends. Attempt spans are named by the
// method alone, as the HTTP semantic conventions name client spans.
var operationNames = spanNames("retry ")

func spanNames(prefix string) map[string]string {
	names := map[string]string{}
	for _, m := range attrs.Methods() {
		names[m] = prefix + m
	}
	return names
}

func defaultOperationName(r *http.Request) string {
	if name, ok := operationNames[methodOf(r)]; ok {
		return name
	}
	return "retry HTTP"
}

// defaultAttemptName is the semantic conventions' client span name:
// "{method}", or HTTP for a method outside the standard set.
func defaultAttemptName(r *http.Request) string {
	m := methodOf(r)
	if _, ok := operationNames[m]; ok {
		return m
	}
	return "HTTP"
}

// backoffFor asks the Backoff for the pause before retry n of an
// operation, after answer a; a negative pause is none.
func (c *config) backoffFor(n int, a Answer) time.Duration { return max(c.backoff(n, a), 0) }

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

// policyConfig is what the request's judgment reads of the configuration
// (judgeRequest).
func (c *config) policyConfig() policyConfig {
	var bufferPerRequest int64 // buffering is off unless both limits are set
	if c.bodyBufferPerRequest > 0 && c.bodyBufferTotal > 0 {
		bufferPerRequest = c.bodyBufferPerRequest
	}
	contract, keyHeaders := c.idempotencyHeaders, []string(nil)
	if c.keys != nil {
		// The generated key's header is one the user declared the server
		// honours: a caller's key in it is relied on as the contract's.
		contract = slices.Concat(c.idempotencyHeaders, []string{c.keys.Name})
		keyHeaders = slices.Concat(contract, c.recordedKeyHeaders, []string{"Idempotency-Key", "X-Idempotency-Key"})
	}
	return policyConfig{
		maxAttempts:       c.maxAttempts,
		deadline:          c.deadline,
		attemptTimeout:    c.attemptTimeout,
		idempotentMethods: c.idempotentMethods,
		bufferPerRequest:  bufferPerRequest,
		stateCheck:        c.stateCheck != nil,
		stateCheckDelay:   c.stateCheckDelay,
		contractHeaders:   contract,
		recordedHeaders:   c.recordedKeyHeaders,
		verdictWrites:     c.verdictWrites,
		generateKeys:      c.keys != nil,
		keyHeaders:        keyHeaders,
	}
}

// keyHeaderNames are the headers the user named as holding idempotency
// keys: the contract's, the recorded ones' and the generated key's.
func (c *config) keyHeaderNames() []string {
	names := slices.Concat(c.idempotencyHeaders, c.recordedKeyHeaders)
	if c.keys != nil {
		names = append(names, c.keys.Name)
	}
	return names
}

// statusSet is a set of the statuses 400–599.
type statusSet [200]bool

// has reports whether code is in the set.
func (s *statusSet) has(code int) bool { return code >= 400 && code <= 599 && s[code-400] }

// statusSet is the statuses a repeatable request may retry, as a set.
func (c *config) statusSet() statusSet {
	var s statusSet
	for code := range c.retryableStatuses {
		s[code-400] = true // WithRetryableStatuses keeps 400–599
	}
	return s
}

// hooksJudge reports whether a user's Classifier or Backoff judges the
// answers: code that may call out with Answer.Request's context.
func (c *config) hooksJudge() bool { return c.classifier != nil || c.ownBackoff }

// classify asks the Classifier, if any, about an attempt's answer.
func (c *config) classify(a Answer) Classification {
	if c.classifier == nil {
		return Classification{}
	}
	return c.classifier(a)
}

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
	// ownBackoff is set when the Backoff is the user's (WithBackoff): like
	// a Classifier, it may call out (see attempt.hookAnswer).
	ownBackoff bool
	budget     *Budget
	noBudget   bool
	// throttle is WithThrottle's, nil when off.
	throttle   *Throttle
	stateCheck stateCheckFunc
	// stateCheckDelay is WithStateCheckDelay's: no state check runs
	// sooner than this after the client gave up on the write.
	stateCheckDelay time.Duration
	classifier      Classifier
	prepare         PrepareAttemptFunc
	trustResends    bool

	bodyBufferPerRequest, bodyBufferTotal int64

	idempotentMethods  map[string]bool
	retryableStatuses  map[int]bool
	idempotencyHeaders []string
	// recordedKeyHeaders are WithRecordedIdempotencyKey's header names.
	recordedKeyHeaders []string
	// hints are the retry hint headers, in the order they are read: the
	// first hintsAdded are WithRetryHint's, the defaults after them.
	hints      []hintHeader
	hintsAdded int
	// verdictHeaders are the should-retry headers; verdictWrites lets a
	// write's "true" make it retryable.
	verdictHeaders []string
	verdictWrites  bool
	attemptHeader  *attemptHeader
	// keys is WithIdempotencyKeys', nil without it; opIDHeader is
	// WithOperationIDHeader's name, "" without it; keyValues: the key's
	// value is recorded (WithIdempotencyKeyValues).
	keys       *IdempotencyKey
	opIDHeader string
	keyValues  bool
	// keyNotWritten: a write's key, which keys.Value did not write, was
	// sent bare and reported (see wireKey).
	keyNotWritten *atomic.Bool
	// hedging is WithHedging's, nil without it.
	hedging *Hedging

	operationName func(*http.Request) string // nil: defaultOperationName
	attemptName   func(*http.Request) string
	clientSpans   bool
	metricsServer bool

	metricAttributes func(*http.Request) []attribute.KeyValue

	// complaints are the options' complaints about values they ignored,
	// each once (complained: by message), in the order given; NewTransport
	// reports them in one error, through otel.Handle.
	complaints []error
	complained map[string]bool
}

// wireKey is key as WithIdempotencyKeys' header sends it (see wireValue).
// A Value that did not write it passed the check at NewTransport: the
// first such write is reported, through otel.Handle, the others sent bare
// as it was.
func (c *config) wireKey(key string) string {
	v, written := c.keys.wireValue(key)
	if !written && c.keyNotWritten.CompareAndSwap(false, true) {
		otel.Handle(fmt.Errorf("otelretry: WithIdempotencyKeys(%q): its Value did not write the key it was given on a write: such writes are sent the key bare", c.keys.Name))
	}
	return v
}

// invalid records that an option ignored a value, for NewTransport to
// report.
func (c *config) invalid(option string, value any, want string) {
	if s, ok := value.(string); ok {
		value = shownName(s)
	}
	c.report(fmt.Errorf("otelretry: %s(%v) ignored: %s", option, value, want))
}

// shownName is how a report writes s, a string an option ignored where it
// wants a name (a header's, a method's): quoted as the call writes it (""
// or "A B" are not read as no argument or several), up to and with its
// first byte no name holds ("PUT " whole, "PUT," of "PUT, DELETE"), the
// rest cut to "…" and its length: a header line or a URL given for a name
// carries a credential ("Authorization: Bearer …", a URL's password) that
// the report must not repeat.
func shownName(s string) string {
	n := 0
	for n < len(s) && validToken(s[n:n+1]) {
		n++
	}
	if n+1 >= len(s) {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:n+1]), len(s))
}

// report adds err (nil: none) to what NewTransport reports, each of its
// complaints once (a Budget's or a Throttle's are joined): the same bad
// value given twice (WithBudget(b) on every Transport's options, two
// Budgets sharing one) is one complaint.
func (c *config) report(err error) {
	if err == nil {
		return
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			c.report(e)
		}
		return
	}
	if c.complained[err.Error()] {
		return
	}
	if c.complained == nil {
		c.complained = map[string]bool{}
	}
	c.complained[err.Error()] = true
	c.complaints = append(c.complaints, err)
}

// complaint is the options' complaints in one error, nil for none.
func (c config) complaint() error { return errors.Join(c.complaints...) }

// arguments is an option's arguments formatted as its call writes them,
// which invalid prints as they are.
type arguments string

// Option configures a Transport.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithTracerProvider sets the TracerProvider for operation, attempt and HTTP
// client spans. A nil provider is ignored: the global one is used.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) {
		if !isNil(tp) {
			c.tracerProvider = tp
		}
	})
}

// WithMeterProvider sets the MeterProvider for the retry metrics (package
// metrics) and the HTTP client metrics. A nil provider is ignored: the
// global one is used.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if !isNil(mp) {
			c.meterProvider = mp
		}
	})
}

// WithPropagators sets the propagators that inject trace context into each
// attempt's headers. Nil is ignored: the global propagator is used.
func WithPropagators(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) {
		if !isNil(p) {
			c.propagators = p
		}
	})
}

// WithLogger writes one structured record per attempt, with the fields of
// the attempt span plus trace and span ids, in that span's context (as a
// handler reads it), at the level the attempt's decision gives (see
// WithLoggerProvider); a record of the writes an attempt's base reported
// after its answer (retry.wire); and, for an operation that made no attempt
// (refused, or stopped before its first call), the operation's record, so
// that every operation leaves one. Nil is ignored (no logging). Use it to
// put attempts in an application's own slog output; use WithLoggerProvider
// to send them to an OpenTelemetry logs pipeline.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) {
		if l != nil {
			c.logger = l
		}
	})
}

// WithLoggerProvider turns on the log events, emitted through a Logger of
// lp named ScopeName: one event record per attempt, named
// attrs.LogEventAttempt ("retry.attempt"), with exactly the attributes of the
// attempt span (and a malformed hint's header and problem) but those
// otelhttp writes there beside the attempt's (server.address, server.port,
// network.protocol.version; docs/telemetry.md lists them), in the
// attempt span's context (its trace and span ids) and timed at the
// attempt's end; and one per operation, named attrs.LogEventOperation
// ("retry.operation"), with its outcome, reason, attempts, deadline, id,
// method, sanitized url.full and server address, the reasons of the
// hedges it refused and why its body was not buffered (what its span's
// events tell), in the operation span's context, timed at the
// operation's start and carrying its duration. Severity: INFO for return and superseded (a
// hedged race's answer discarded), WARN for retry, ERROR for every other
// decision or outcome (the operation ends without the answer it wanted,
// check_state included). A record is built only when
// the Logger is Enabled for it. Nil is ignored: without this option no
// log event is emitted. Pass global.GetLoggerProvider()
// (go.opentelemetry.io/otel/log/global) to use the global provider.
func WithLoggerProvider(lp log.LoggerProvider) Option {
	return optionFunc(func(c *config) {
		if !isNil(lp) {
			c.events = lp.Logger(ScopeName, log.WithInstrumentationVersion(Version))
		}
	})
}

// WithMaxAttempts limits the network calls of one operation, the first
// included. Values below 1 are ignored. Default: 3.
func WithMaxAttempts(n int) Option {
	return optionFunc(func(c *config) {
		if n < 1 {
			c.invalid("WithMaxAttempts", n, "want 1 or more")
			return
		}
		c.maxAttempts = n
	})
}

// WithDeadline sets the deadline of a whole operation: attempts, backoff and
// waiting for Retry-After all count against it. The deadline is the earlier
// of start+d and the request context's deadline. Values ≤ 0 are ignored.
// Default: 30s.
func WithDeadline(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d <= 0 {
			c.invalid("WithDeadline", d, "want a positive duration")
			return
		}
		c.deadline = d
	})
}

// WithAttemptTimeout bounds one attempt on the network, in phases read
// from httptrace: from the moment the prepared attempt is sent (after the
// PrepareAttemptFunc, whose time counts against the deadline only) until a
// connection is taken and the request headers are written; then, afresh
// once the request is fully written (WroteRequest), the wait for the
// response headers, as http.Transport's ResponseHeaderTimeout does.
// Writing the request body between is bounded by the operation deadline
// alone, so an upload making progress is never cut. A base that reports
// nothing through httptrace keeps one bound, from the send to the response
// headers. Each phase gets the smaller of d and the operation's time left.
// For a write whose cut could not be followed up (not repeatable, and no
// state check, or none that fits before the deadline after the cut: see
// WithStateCheckDelay) it bounds only getting a connection: the deadline alone
// bounds the rest, an HTTP/2 stream awaited on that connection included
// (docs/time-and-bodies.md). The body of the response handed to the caller is not bounded by it, nor
// by the operation deadline: it belongs to the caller's context alone, so
// streams and slow downloads are not cut (a state check's stored response
// excepted: see StateResult). Values ≤ 0 are ignored.
// Default: 10s.
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
		if !isNil(b) {
			c.backoff, c.ownBackoff = b, true
		}
	})
}

// WithIdempotentMethods declares more methods safe to repeat (for example
// PUT and DELETE on an API whose handlers you know to be idempotent). GET,
// HEAD, OPTIONS and TRACE always are. Names are case-insensitive for the
// standard methods ("put" declares PUT); other methods are matched as
// written, since HTTP methods are case-sensitive. A name that is no
// method (empty, or holding a space or a comma: "PUT, DELETE" is two
// arguments) is ignored (and reported). To make one request repeatable (a read-only POST), use
// WithIntent instead.
func WithIdempotentMethods(methods ...string) Option {
	return optionFunc(func(c *config) {
		for _, m := range methods {
			if !validToken(m) { // "PUT ", "PUT, DELETE" would match no request
				c.invalid("WithIdempotentMethods", m, "want a method name")
				continue
			}
			c.idempotentMethods[normalizeMethod(m)] = true
		}
	})
}

// WithRetryableStatuses replaces the response statuses that an idempotent
// request may retry. Default: 408, 429, 502, 503, 504. Codes outside
// 400–599 are ignored; an empty list is ignored (both reported).
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
// contract, and the client may rely on it only when told so. A name that
// is not a header name, or that names a field the propagators write
// (otelretry keeps them off a key's header, which would cost every request
// that field; without WithPropagators, the W3C fields and those of the
// global propagator at NewTransport), is ignored and reported; with none
// left, the defaults hold. A field the propagators write that NewTransport
// could not see (a global set after it) is kept off the header, and
// reported the first time.
func WithIdempotencyKeyContract(headers ...string) Option {
	return optionFunc(func(c *config) {
		c.idempotencyHeaders = c.keyHeaders("WithIdempotencyKeyContract", headers)
	})
}

// WithRecordedIdempotencyKey declares, as WithIdempotencyKeyContract does,
// that the server honours the idempotency keys these headers carry
// (default "Idempotency-Key" and "X-Idempotency-Key"), but only records
// it: the operation span of a request that carries one records
// retry.idempotency_contract=true, so that readers (retryinspect) know
// that a layer above that resends it under the same key (stripe-go does)
// repeats it safely, while otelretry itself treats it as any other write:
// it does not resend it, and refuses net/http's own resends of it. A 409
// under such a key (its first request still in progress) leaves the
// write's outcome unknown (OperationResult.OutcomeUnknown). Use it
// under an SDK that retries writes on its own with a stable key. A name
// that is not a header name, or names a field the propagators write, is
// ignored and reported, as there.
func WithRecordedIdempotencyKey(headers ...string) Option {
	return optionFunc(func(c *config) {
		c.recordedKeyHeaders = c.keyHeaders("WithRecordedIdempotencyKey", headers)
	})
}

// keyHeaders is the key headers option names: the valid ones of headers
// (another is ignored and reported), or the draft's two when none is.
func (c *config) keyHeaders(option string, headers []string) []string {
	var valid []string
	for _, h := range headers {
		if !validHeaderName(h) {
			c.invalid(option, h, "want a header name")
			continue
		}
		valid = append(valid, h)
	}
	if len(valid) == 0 {
		return []string{"Idempotency-Key", "X-Idempotency-Key"}
	}
	return valid
}

// WithRetryHint reads the response header that carries the server's
// hint of how long to wait before a retry, in unit: read before the
// defaults, after the headers of earlier WithRetryHint options. The
// defaults are retry-after-ms and x-ms-retry-after-ms (OpenAI, Azure;
// HintMilliseconds, as openai-go reads them), then Retry-After (RFC 9110),
// the order in which openai-go and azcore check them. A header already
// read (a default, or one given before) is read only here, in the unit
// given: WithRetryHint("retry-after-ms", HintWholeMilliseconds) reads
// retry-after-ms as azcore does. The first present and well-formed one is
// the hint, read as Retry-After is: it raises the pause, is capped by the
// deadline, is recorded as retry.retry_after_ms, and counts as the
// server's pushback for the retry budget. A malformed one is skipped and
// recorded (retry_after_invalid on the attempt span; its header and
// problem on the attempt's log records). A header sent more than once is
// read by its first value, and under its canonical name, as http.Header's
// Get and the SDKs read it (net/http's clients canonicalize every response
// header's name; a base of one's own that hands back another spelling is
// not read). A name that is not a header name, or a unit other than the
// three HintUnits, is ignored (and reported). A hint is a delay: a header
// that gives a point in time in epoch seconds (GitHub's X-RateLimit-Reset)
// read as one would be decades, capped at 24 hours, and end any operation
// of a shorter deadline (deadline_exceeded); read it in a WithBackoff
// (docs/decisions.md).
func WithRetryHint(header string, unit HintUnit) Option {
	return optionFunc(func(c *config) {
		if !validHeaderName(header) {
			c.invalid("WithRetryHint", header, "want a header name")
			return
		}
		if unit > HintWholeMilliseconds {
			c.invalid("WithRetryHint", arguments(fmt.Sprintf("%q, %d", header, unit)), "want HintSeconds, HintMilliseconds or HintWholeMilliseconds")
			return
		}
		h := hintHeader{name: http.CanonicalHeaderKey(header), unit: unit}
		if i := slices.IndexFunc(c.hints, func(old hintHeader) bool { return old.name == h.name }); i >= 0 {
			c.hints = slices.Delete(c.hints, i, i+1)
			if i < c.hintsAdded {
				c.hintsAdded--
			}
		}
		c.hints = slices.Insert(c.hints, c.hintsAdded, h)
		c.hintsAdded++
	})
}

// WithShouldRetryHeaders sets the headers whose value is a service's
// verdict on retrying its answer ("true" or "false", in any case), read in
// the order given (a header with any other value is no verdict, and the
// next is read), in place of the defaults: Stripe-Should-Retry (Stripe)
// and X-Should-Retry (OpenAI, and clients generated like openai-go); name
// them too to keep them. With no name, no verdict is read. "false" stops
// the retry of that answer (reason server_no_retry). "true" makes a failed
// answer of a request that is safe to repeat retryable (reason
// server_retry), and a write's only with WithShouldRetryWrites. Neither
// lifts the deadline, the attempt limit or the retry budget, and a
// Classifier's answer wins over them. Each is read under its canonical
// name, as http.Header's Get reads it (see WithRetryHint). A name that is
// not a header name is ignored (and reported); names none of which is one
// change nothing.
func WithShouldRetryHeaders(names ...string) Option {
	return optionFunc(func(c *config) {
		headers := []string{}
		for _, n := range names {
			if !validHeaderName(n) {
				c.invalid("WithShouldRetryHeaders", n, "want a header name")
				continue
			}
			headers = append(headers, http.CanonicalHeaderKey(n))
		}
		if len(names) > 0 && len(headers) == 0 {
			return // not "no name": a misspelled list must not turn verdicts off
		}
		c.verdictHeaders = headers
	})
}

// WithShouldRetryWrites lets a service's "true" make a write's failed
// answer retryable too: the service's word that the request may be
// repeated, recorded on the attempt as its evidence (retry.evidence.*:
// protocol http, the header's name). It is off by default: the SDKs that
// send these headers honour "true" themselves, and both layers honouring
// it would multiply the write. Use it without an SDK's own retries.
func WithShouldRetryWrites() Option {
	return optionFunc(func(c *config) { c.verdictWrites = true })
}

// WithAttemptHeader sends the header name on every attempt, to tell the
// server which attempt it receives, for servers that log or shed by it.
// A header otelretry knows (in any spelling) is written in its own
// convention, any other as the attempt's number N, from 1:
//
//	Amz-Sdk-Request             attempt=N; max=M (the AWS SDKs)
//	X-Stainless-Retry-Count     N−1, the retries before (openai-go and clients generated like it)
//	Grpc-Previous-Rpc-Attempts  N−1, the attempts before (gRPC)
//	X-Envoy-Attempt-Count       N (Envoy)
//	any other name              N
//
// Another format is a PrepareAttemptFunc's to set. Like the operation's
// id and the idempotency key, it is added only when asked. It is set
// on each attempt's copy before the PrepareAttemptFunc runs (a signer signs it),
// never over a header of that name the caller or an SDK set, and it is not
// recorded, as no header is. N is the attempt's retry.attempt: it keeps
// counting across the hops of a redirect chain and the operations of one
// WithOperationID, so it may exceed the attempt limit given as M. M is the
// operation's real attempt limit: WithMaxAttempts', or its Intent's
// MaxAttempts, and 1 under its Intent's NoRetry. It is no idempotency key
// and no contract header: it changes nothing the policy judges. A name
// that is not a header name is ignored, and so is one that holds
// idempotency keys (Idempotency-Key, X-Idempotency-Key, which net/http
// takes as leave to resend, or a header a key option names), where the
// attempt's number would be every write's key, a field the propagators
// write (traceparent, baggage, ..., as NewTransport knows them: a global
// propagator set later is not), or WithOperationIDHeader's name (each
// reported). One header is sent: given again, the last name counts (to
// send a second convention too, set it in a PrepareAttemptFunc).
func WithAttemptHeader(name string) Option {
	return optionFunc(func(c *config) {
		if !validHeaderName(name) {
			c.invalid("WithAttemptHeader", name, "want a header name")
			return
		}
		c.attemptHeader = newAttemptHeader(name)
	})
}

// WithIdempotencyKeys makes writes repeatable on the wire: every request
// otelretry treats as a write (a method other than GET, HEAD, OPTIONS and
// TRACE, unless its Intent is Repeatable) that carries no idempotency key
// gets one per operation, sent in k's header on every attempt:
// DraftIdempotencyKey() for the IETF draft's Idempotency-Key, or a header
// of your own, with the key bare or as k.Value formats it. The key is
// 128 bits from crypto/rand. It is set on each attempt's copy before the
// PrepareAttemptFunc runs, so a signature covers it; a PrepareAttemptFunc that changes
// it ends the operation stop, reason prepare_failed.
//
// Turning it on is your word that the server honours keys in that header
// as the draft says (docs/decisions.md says what it must do): a request
// that carries one is repeatable, so an answer lost after the write was
// sent is sent again under the same key, within the deadline, the attempt
// limit and the retry budget, instead of ending check_state; a 409 is
// retried after a pause, a 422 (the key used with another payload) stops.
// Writes are still never hedged. k's header joins the
// WithIdempotencyKeyContract headers: a key the caller, an SDK or a
// PrepareAttemptFunc set in it is kept, never replaced, and relied on the same
// way. A request that already carries a key in any header otelretry knows
// for one (Idempotency-Key, X-Idempotency-Key, and those of
// WithIdempotencyKeyContract and WithRecordedIdempotencyKey) gets none;
// one that carries two different keys in the contract's headers (k's and
// those WithIdempotencyKeyContract names; X-Idempotency-Key only when it
// names it) ends stop, reason key_conflict, before it is sent
// (ErrIdempotencyKeyConflict).
//
// A layer above that sends the operation again (go-retryablehttp, an SDK's
// retryer, a loop) reuses its key when the operation has an id of its
// own (WithOperationID; without one, each hop of a redirect chain is a
// write with a key of its own, a 307 or 308 to the same URL too): an
// operation that repeats an earlier one under
// that context with the same method, URL and body, after the earlier one
// did not succeed, takes its key, each of several in flight together too
// (a 307 or 308, which asks for the write
// again, is no success, nor an answer whose body broke as the caller read
// it; a 301, 302 or 303, after which http.Client sends a GET, is). Any other request gets its own, so two
// different writes under one id never share a key (a 307 or 308 hop to
// another URL is a write there, with a key of its own): another body, another
// user (the URL's userinfo) or Host, or the same write sent again after it
// succeeded or while it is still in flight (the memory keeps a key once
// its write did not succeed: give a layer that hedges writes a key of its
// own). Headers are not compared: a signing layer signs each try anew
// (AWS SigV4), so two users' writes that differ only in their
// Authorization are one write here; give each user's writes an id of their
// own. For the same reason a write meant as a new one, with the same
// method, URL and body under the id after an earlier one did not succeed,
// is that one's repeat: it takes its key, and a server that applied the
// earlier answers it from its store without applying it again; give it
// an id of its own. An id remembers the keys of its last 1 024 writes that did not
// succeed; the repeat of an older one gets a key of its own. The body is told by its bytes,
// which the operation then reads into its buffer before the first attempt
// (WithBodyBuffer's per-request limit, 64 KiB by default); a body of
// unknown length, over the limit, or that finds the buffers' memory held
// by other requests in flight (WithBodyBuffer's total) cannot be told, and
// gets a key of its own: a repeat of it may be applied twice. Without WithOperationID, each RoundTrip is an operation with a key
// of its own.
//
// The operation span and each attempt record retry.idempotency_key.source
// (generated, or caller), the operation span retry.idempotency_contract; the key's value
// only with WithIdempotencyKeyValues, and never on metrics. An
// IdempotencyKey whose Name is not a header name, or names a field the
// propagators write (traceparent: they would write over the key on every
// attempt), is ignored (and reported). A propagator that writes a header
// that holds keys all the same (a global set after NewTransport, one whose
// Fields leave it out) does not change it, in any spelling, whether the
// key is otelretry's or the caller's, nor the header of
// WithOperationIDHeader or WithAttemptHeader; an instrumented base's own
// propagators, which inject below otelretry, are the base's.
func WithIdempotencyKeys(k IdempotencyKey) Option {
	return optionFunc(func(c *config) {
		if !validHeaderName(k.Name) {
			c.invalid("WithIdempotencyKeys", k.Name, "want a header name")
			return
		}
		value := k.Value
		if value != nil {
			// A format that gives no header value for a key is bad input too,
			// and so is one that does not write the key whole: writes would
			// share values, and a server replay one write's answer for
			// another.
			zeros, fs := strings.Repeat("0", 32), strings.Repeat("f", 32)
			v, w := value(zeros), value(fs)
			switch {
			case v == "" || !validHeaderValue(v) || !validHeaderValue(w):
				c.report(fmt.Errorf("otelretry: WithIdempotencyKeys(%q): its Value ignored: want one that gives a header value; the key is sent bare", k.Name))
				value = nil
			case !writesKey(v, zeros) || !writesKey(w, fs):
				c.report(fmt.Errorf("otelretry: WithIdempotencyKeys(%q): its Value ignored: want one that writes the key it is given whole, so that each key has its own value; the key is sent bare", k.Name))
				value = nil
			}
		}
		c.keys = &IdempotencyKey{Name: http.CanonicalHeaderKey(k.Name), Value: value}
		c.keyNotWritten = new(atomic.Bool)
	})
}

// WithIdempotencyKeyValues records the value of the idempotency key a
// request carries (one WithIdempotencyKeys generated, or the caller's in a
// header of WithIdempotencyKeyContract or WithRecordedIdempotencyKey) as
// retry.idempotency_key.value, as the header carried it, on the operation
// span, each attempt span and their log records, since it is what support
// looks a write up by. It is the one header value otelretry records, and
// never on metrics.
func WithIdempotencyKeyValues() Option {
	return optionFunc(func(c *config) { c.keyValues = true })
}

// WithOperationIDHeader sends the operation's id (retry.operation.id: the
// one from WithOperationID, else a generated one) in the header name on
// every attempt, so that a server can log it and a state check can find
// the write by it. Like WithAttemptHeader, it is set on each attempt's
// copy before the PrepareAttemptFunc runs, never over a header of that name the
// caller or an SDK set, and is not recorded. A name that is not a header
// name is ignored, and so is one that holds idempotency keys (as
// WithAttemptHeader's: a job's writes share its id, and would share one
// key) or a field the propagators write, as NewTransport knows them (each
// reported); and so is an id that is not a field value: one holding a
// control character, which net/http would refuse the request for, or a
// space at either end, which HTTP/1 drops and HTTP/2 keeps (the server
// would not see the id as written).
func WithOperationIDHeader(name string) Option {
	return optionFunc(func(c *config) {
		if !validHeaderName(name) {
			c.invalid("WithOperationIDHeader", name, "want a header name")
			return
		}
		c.opIDHeader = http.CanonicalHeaderKey(name)
	})
}

// WithHedging hedges the requests that are safe to repeat (see Hedging):
// after h.Delay, or the adaptive delay, without an answer, another attempt
// is sent, and the first answer whose verdict is not retry wins. An
// Intent's Hedging replaces it for one request. A Hedging with a negative
// or NaN value, a Quantile of 1 or more, a MaxShare above 1 or a MaxDelay
// below its MinDelay (1 ms when 0) is ignored (and reported); an Intent's reads such a
// value as its default (a MaxDelay below MinDelay as MinDelay). A Hedging
// with neither a Delay nor Adaptive turns hedging off.
func WithHedging(h Hedging) Option {
	return optionFunc(func(c *config) {
		// !(x >= 0) and !(q < 1), not x < 0 and q >= 1: NaN fails every
		// comparison, and a NaN share or quantile is no value either.
		if h.Delay < 0 || h.MinDelay < 0 || h.MaxDelay < 0 || h.MaxHedges < 0 || !(h.MaxShare >= 0 && h.MaxShare <= 1) || !(h.Quantile >= 0 && h.Quantile < 1) ||
			h.MaxDelay > 0 && h.MaxDelay < h.withDefaults().MinDelay {
			c.invalid("WithHedging", h, "want values of 0 or more (not NaN), a Quantile below 1, a MaxShare of at most 1 and a MaxDelay of at least MinDelay (1 ms when 0)")
			return
		}
		c.hedging = &h
	})
}

// WithStateCheck sets the hook that resolves an unknown write outcome
// (decision check_state), typically by querying the server for the record
// by operation id or idempotency key:
//
//   - StateApplied: the write happened; Response is returned to the caller.
//   - StateNotApplied: the write did not happen; it is sent again, within the
//     same deadline, attempt limit and budget as a retry. A lookup made
//     while the server may still apply the write cannot know this: see
//     WithStateCheckDelay.
//   - StateUnknown, or an error: the outcome stays unknown; RoundTrip returns
//     an error matching ErrOutcomeUnknown.
//
// A write made repeatable (WithIdempotencyKeys, a contract) is resent
// first, and looked up only when its resends ran out (the attempt limit,
// a body not replayable, NoRetry, a preparation that failed); one the
// budget or the throttle refused keeps that end, its outcome unknown and
// not looked up: the dependency is overloaded (docs/decisions.md).
//
// ctx carries the operation deadline and the state_check span, so calls the
// hook makes through an instrumented client appear under it; it ends at
// the deadline or when the caller gives up, and RoundTrip waits for the
// hook to return even then (it owns the lookup's result): a hook that
// ignores ctx holds the caller. A lookup it
// makes through an otelretry Transport is an operation of its own, never
// counted as a repeat of the write: it honours the Intent, the operation
// id and the result slots the hook adds to ctx (Intent{NoRetry: true} for
// a lookup sent once), and takes none of the write's. An error it
// returns is recorded, sanitized, on the state_check span and is reachable
// from the error RoundTrip returns with errors.Is and errors.As. Nil is
// ignored.
func WithStateCheck(f func(ctx context.Context, check StateCheck) (StateResult, error)) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.stateCheck = f
		}
	})
}

// WithStateCheckDelay sets how long after the client gave up on a write
// (the attempt's end: the server got what it got of it before then) its
// state check runs at the earliest: the time the server may still apply a
// write whose answer the client no longer waits for (its own request or
// write timeout). A cut attempt ends only the client's wait, not the server's
// work: a lookup made sooner may not see a write still under way, and a
// not_applied it reads would send the write again. The attempt timeout
// cuts such a write only where the delay still fits before the deadline
// after the cut; past that, the write waits for its answer (the deadline
// bounds it, as a write with no check), and if the deadline cuts it no
// check runs: the outcome stays unknown (check_state). If the caller gives
// up while the check waits, the operation ends as it does during a check. Values < 0 are ignored. Default: 0, the check
// runs at once: right only where the lookup itself settles the question
// (it claims the key, so that the late write fails) or the server drops a
// write whose connection was closed before it is applied.
func WithStateCheckDelay(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d < 0 {
			c.invalid("WithStateCheckDelay", d, "want a duration of 0 or more")
			return
		}
		c.stateCheckDelay = d
	})
}

// WithSpanNameFormatter names the operation span; the result should be of
// low cardinality (no ids, no paths). The name is recorded as returned,
// not sanitized as URLs are: one built from the request's URL carries its
// userinfo and query (SanitizeURL gives the recorded form). Nil is
// ignored. Default: "retry GET".
func WithSpanNameFormatter(f func(*http.Request) string) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.operationName = f
		}
	})
}

// WithAttemptSpanNameFormatter names the attempt spans (otelhttp's CLIENT
// spans, or the INTERNAL attempt spans with WithoutClientSpans); the
// result should be of low cardinality, and is recorded as returned (see
// WithSpanNameFormatter). Nil is ignored. Default: the method, as the
// HTTP semantic conventions name client spans ("GET").
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
// it. A base that is otelhttp's *Transport itself is taken as instrumented,
// with or without this option; one wrapped in a layer of one's own is not
// seen. By default each attempt is one otelhttp CLIENT span that carries
// the attempt event, and trace context is injected from it.
func WithoutClientSpans() Option {
	return optionFunc(func(c *config) { c.clientSpans = false })
}

// WithTrustedBaseResends declares that the base transport resends a
// request by itself only with proof that the server did not process it.
// The transport then lets such a resend of a write through (and counts
// it), instead of refusing it once the request was written. Do not use it
// with net/http's transport: its HTTP/2 client also resends on
// PROTOCOL_ERROR, which proves nothing, and its HTTP/1 client resends on a
// dead keep-alive connection. Nor with quic-go's http3.Transport (v0.65):
// it resends on a stream's H3_REQUEST_REJECTED, which is proof, but also
// after a connection closed with that code, which names no request and
// proves nothing, so a write the server read goes out twice
// (docs/layers.md).
func WithTrustedBaseResends() Option {
	return optionFunc(func(c *config) { c.trustResends = true })
}

// WithServerAddressInMetrics adds server.address (the request's host) to the
// retry metrics' labels: one set of series per host. Only the host is
// added, never the path or query.
func WithServerAddressInMetrics() Option {
	return optionFunc(func(c *config) { c.metricsServer = true })
}

// WithBudget shares or tunes the retry budget (see Budget). Pass the same
// Budget to several Transports to bound their combined retries. A setting
// out of its range reads as its default, and NewTransport reports it
// through otel.Handle. Nil is ignored. Default: a Budget per Transport
// with the default settings.
func WithBudget(b *Budget) Option {
	return optionFunc(func(c *config) {
		if b != nil {
			c.report(b.invalidSettings())
			c.budget = b
			c.noBudget = false
		}
	})
}

// WithThrottle turns on client-side adaptive throttling (see Throttle):
// each request to a dependency that refuses or times out more than it
// accepts is refused locally, before it starts, with the SRE book's
// probability. Pass the same Throttle to several Transports to throttle
// their combined load; &otelretry.Throttle{} has the defaults. A setting
// out of its range reads as its default, and NewTransport reports it
// through otel.Handle. Nil is ignored. Default: off.
func WithThrottle(t *Throttle) Option {
	return optionFunc(func(c *config) {
		if t != nil {
			c.report(t.invalidSettings())
			c.throttle = t
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
// metrics set themselves are dropped (see metrics.NewLabels). otelhttp's
// own metrics of the attempts (http.client.request.duration) take none of
// them: they take the labels of a client Labeler in the request's context
// (otelhttp.ContextWithClientLabeler), which reaches every attempt. Nil is
// ignored.
func WithMetricAttributes(f func(*http.Request) []attribute.KeyValue) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.metricAttributes = f
		}
	})
}

// WithClassifier sets the classifiers consulted after every attempt, in
// order: the first answer that is not the zero Classification wins, as
// for a protocol's classifier and your own (WithClassifier(h2.Classify,
// yours)). It replaces an earlier WithClassifier. Nil classifiers are
// skipped; with none left, the option is ignored.
func WithClassifier(cs ...Classifier) Option {
	var kept []Classifier
	for _, c := range cs {
		if !isNil(c) {
			kept = append(kept, c)
		}
	}
	return optionFunc(func(cfg *config) {
		switch len(kept) {
		case 0:
		case 1:
			cfg.classifier = kept[0]
		default:
			cfg.classifier = firstClassification(kept)
		}
	})
}

// WithPrepareAttempt sets the PrepareAttemptFunc. Nil is ignored.
func WithPrepareAttempt(f PrepareAttemptFunc) Option {
	return optionFunc(func(cfg *config) {
		if f != nil {
			cfg.prepare = f
		}
	})
}

// WithBodyBuffer sets how much memory makes request bodies replayable that
// otherwise would not be: a body with no GetBody (an io.NopCloser, an
// SDK's wrapped reader) and a known ContentLength up to perRequest bytes
// is read into a buffer, within the operation's deadline, while the bodies
// buffered by the Transport's operations in flight hold at most total
// bytes (a body's bytes are held until its operation ended and every copy
// of the buffer a base was given is closed, which net/http may do after
// RoundTrip returned; see docs/time-and-bodies.md). The buffer is the body
// of every attempt and of every resend
// below otelretry; the bytes and the ContentLength sent stay the caller's,
// and the caller's body is closed once it is read. A body that is larger,
// of unknown length, or finds the memory taken is streamed to the base,
// not replayable (closed by the cut when the base still reads it at the
// operation's end), and the operation span gets a body_not_buffered event with
// its reason (retry.body.not_buffered_reason). A body that cannot be read,
// or is not read by the deadline, ends the operation before any call.
// Requests that can make only one attempt are not buffered for retries;
// under WithOperationID with WithIdempotencyKeys, a write's body of known
// length up to perRequest bytes is buffered whatever its attempts, to tell
// a repeat's body (one that is not, the memory taken included, gets a key
// of its own, and no event).
// A perRequest or a total of 0 turns buffering off (WithBodyBuffer(0, 0)).
// Negative values are ignored (and reported).
// Default: 64 KiB per request and 8 MiB in all.
func WithBodyBuffer(perRequest, total int64) Option {
	return optionFunc(func(c *config) {
		if perRequest < 0 || total < 0 {
			c.invalid("WithBodyBuffer", arguments(fmt.Sprintf("%d, %d", perRequest, total)), "want sizes of 0 or more")
			return
		}
		c.bodyBufferPerRequest, c.bodyBufferTotal = perRequest, total
	})
}

// isNil reports whether v is nil, or an interface holding a nil pointer or
// func (a `var tp *sdktrace.TracerProvider` left unset): the options
// ignore both, as they say, where calling it would panic. A nil slice or
// map is a value (propagation.NewCompositeTextMapPropagator() with no
// propagator injects nothing).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Func:
		return r.IsNil()
	}
	return false
}

// normalizeMethod upper-cases a standard method name written in another
// case.
func normalizeMethod(m string) string {
	if up := strings.ToUpper(m); httpmethod.Value(up) == up {
		return up
	}
	return m
}
