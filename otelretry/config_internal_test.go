// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Without options, the configuration is the documented defaults: 3
// attempts, a 30s deadline, a 10s attempt timeout, exponential backoff
// from 100ms to 2s, the statuses 408, 429, 502, 503 and 504, a 64 KiB
// buffer per request within 8 MiB, client spans, the default retry hints
// and should-retry headers, and nothing to report. A nil Option is
// skipped.
func TestConfigDefaults(t *testing.T) {
	for _, opts := range [][]Option{nil, {nil, nil}} {
		c := newConfig(opts)
		if c.maxAttempts != defaultMaxAttempts || c.deadline != defaultDeadline || c.attemptTimeout != defaultAttemptTimeout {
			t.Errorf("limits = %d, %v, %v", c.maxAttempts, c.deadline, c.attemptTimeout)
		}
		// ExponentialBackoff(100ms, 2s): full jitter under a ceiling that
		// doubles from 100ms to 2s; 200 draws all in the lower half of
		// one would happen once in 2^200.
		for _, tc := range []struct {
			retry   int
			ceiling time.Duration
		}{{1, defaultBackoffInitial}, {20, defaultBackoffMax}} {
			var most time.Duration
			for range 200 {
				d := c.backoff(tc.retry, Answer{})
				if d < 0 || d > tc.ceiling {
					t.Fatalf("backoff before retry %d = %v, want at most %v", tc.retry, d, tc.ceiling)
				}
				most = max(most, d)
			}
			if most <= tc.ceiling/2 {
				t.Errorf("backoff before retry %d: at most %v in 200 draws, want up to %v", tc.retry, most, tc.ceiling)
			}
		}
		want := map[int]bool{408: true, 429: true, 502: true, 503: true, 504: true}
		if !reflect.DeepEqual(c.retryableStatuses, want) {
			t.Errorf("retryable statuses = %v", c.retryableStatuses)
		}
		if c.bodyBufferPerRequest != 64<<10 || c.bodyBufferTotal != 8<<20 {
			t.Errorf("body buffer = %d, %d", c.bodyBufferPerRequest, c.bodyBufferTotal)
		}
		if !c.clientSpans || c.metricsServer || c.trustResends || c.noBudget || c.budget != nil || len(c.idempotentMethods) != 0 || c.idempotencyHeaders != nil {
			t.Errorf("switches = %+v", c)
		}
		if !reflect.DeepEqual(c.hints, defaultRetryHints()) || !reflect.DeepEqual(c.verdictHeaders, defaultShouldRetryHeaders()) ||
			c.verdictWrites || c.attemptHeader != nil || c.recordedKeyHeaders != nil {
			t.Errorf("dialect = hints %v, verdicts %v (writes %v), attempt header %v, recorded keys %v",
				c.hints, c.verdictHeaders, c.verdictWrites, c.attemptHeader, c.recordedKeyHeaders)
		}
		if c.complaint() != nil {
			t.Errorf("defaults report %v", c.complaint())
		}
	}
}

// WithRetryHint reads a header it is given only where it is given, in its
// unit, the headers given in the order of the options, before the
// defaults: a default (or an earlier option's) of the same name is
// dropped, so that the azcore recipe reads retry-after-ms and
// x-ms-retry-after-ms as azcore does, in azcore's order, with Retry-After
// after them.
func TestWithRetryHintReadsAHeaderOnce(t *testing.T) {
	c := newConfig([]Option{
		WithRetryHint("x-ratelimit-reset-ms", HintMilliseconds),
		WithRetryHint("retry-after-ms", HintWholeMilliseconds),
		WithRetryHint("x-ms-retry-after-ms", HintWholeMilliseconds),
		WithRetryHint("X-RateLimit-Reset-Ms", HintSeconds),
	})
	want := []hintHeader{
		{name: "Retry-After-Ms", unit: HintWholeMilliseconds},
		{name: "X-Ms-Retry-After-Ms", unit: HintWholeMilliseconds},
		{name: "X-Ratelimit-Reset-Ms", unit: HintSeconds},
		{name: "Retry-After", unit: HintSeconds},
	}
	if !reflect.DeepEqual(c.hints, want) {
		t.Errorf("hints = %v, want %v", c.hints, want)
	}
}

// An option given a value it cannot take keeps the value before it (the
// default, or what an earlier option set) and says why in the
// configuration's error, one line per value, for NewTransport to report
// once.
func TestConfigIgnoredValuesKeepTheValueBeforeThem(t *testing.T) {
	c := newConfig([]Option{
		WithMaxAttempts(5), WithMaxAttempts(0),
		WithDeadline(-time.Second), WithAttemptTimeout(0),
		WithRetryableStatuses(200, 503), WithRetryableStatuses(302),
		WithIdempotentMethods("put", ""),
		WithBodyBuffer(1024, 4096), WithBodyBuffer(-1, 10),
		WithRetryHint("X-Wait", HintUnit(7)),
		WithStateCheckDelay(time.Second), WithStateCheckDelay(-time.Second),
	})
	if c.maxAttempts != 5 || c.deadline != defaultDeadline || c.attemptTimeout != defaultAttemptTimeout {
		t.Errorf("limits = %d, %v, %v; want 5 and the defaults", c.maxAttempts, c.deadline, c.attemptTimeout)
	}
	if !reflect.DeepEqual(c.retryableStatuses, map[int]bool{503: true}) {
		t.Errorf("retryable statuses = %v, want the valid part of the first list", c.retryableStatuses)
	}
	if !reflect.DeepEqual(c.idempotentMethods, map[string]bool{"PUT": true}) {
		t.Errorf("idempotent methods = %v, want PUT", c.idempotentMethods)
	}
	if slices.ContainsFunc(c.hints, func(h hintHeader) bool { return h.name == "X-Wait" }) {
		t.Errorf("hints = %v: a unit out of range was kept", c.hints)
	}
	if c.stateCheckDelay != time.Second {
		t.Errorf("state check delay = %v, want the first, valid, one", c.stateCheckDelay)
	}
	if c.bodyBufferPerRequest != 1024 || c.bodyBufferTotal != 4096 {
		t.Errorf("body buffer = %d, %d; want the first, valid, sizes", c.bodyBufferPerRequest, c.bodyBufferTotal)
	}
	want := []string{
		"otelretry: WithMaxAttempts(0) ignored: want 1 or more",
		"otelretry: WithDeadline(-1s) ignored: want a positive duration",
		"otelretry: WithAttemptTimeout(0s) ignored: want a positive duration",
		"otelretry: WithRetryableStatuses(200) ignored: want a status from 400 to 599",
		"otelretry: WithRetryableStatuses(302) ignored: want a status from 400 to 599",
		"otelretry: WithRetryableStatuses([302]) ignored: want at least one status from 400 to 599",
		`otelretry: WithIdempotentMethods("") ignored: want a method name`,
		"otelretry: WithBodyBuffer(-1, 10) ignored: want sizes of 0 or more",
		`otelretry: WithRetryHint("X-Wait", 7) ignored: want HintSeconds, HintMilliseconds or HintWholeMilliseconds`,
		"otelretry: WithStateCheckDelay(-1s) ignored: want a duration of 0 or more",
	}
	if c.complaint() == nil || !reflect.DeepEqual(strings.Split(c.complaint().Error(), "\n"), want) {
		t.Errorf("report = %v, want\n%s", c.complaint(), strings.Join(want, "\n"))
	}
}

// Options that take a value ignore nil (or an empty list) and keep the
// default, without a report: there is nothing wrong to report.
func TestConfigNilValuesAreIgnoredSilently(t *testing.T) {
	c := newConfig([]Option{WithTracerProvider(nil), WithMeterProvider(nil), WithPropagators(nil), WithLogger(nil),
		WithLoggerProvider(nil), WithBackoff(nil), WithStateCheck(nil), WithSpanNameFormatter(nil),
		WithAttemptSpanNameFormatter(nil), WithBudget(nil), WithMetricAttributes(nil), WithClassifier(nil),
		WithPrepareAttempt(nil)})
	d := newConfig(nil)
	if c.tracerProvider != nil || c.meterProvider != nil || c.propagators != nil || c.logger != nil || c.events != nil ||
		c.stateCheck != nil || c.budget != nil || c.metricAttributes != nil || c.classifier != nil || c.prepare != nil || c.complaint() != nil {
		t.Errorf("nil values set something: %+v", c)
	}
	if reflect.ValueOf(c.backoff).Pointer() == 0 || reflect.TypeOf(c.backoff) != reflect.TypeOf(d.backoff) {
		t.Errorf("backoff = %#v, want the default", c.backoff)
	}
	req := &http.Request{Method: http.MethodGet}
	if c.operationName != nil || c.attemptName(req) != "GET" {
		t.Errorf("span names = %q, %q; want the defaults", defaultOperationName(req), c.attemptName(req))
	}
}

// The default span names: "retry {method}" for the operation, the method
// for the attempt, as the HTTP semantic conventions name client spans, and
// HTTP for a method outside the standard set, in both (the operation's was
// "retry " and any string a client sent).
func TestConfigDefaultSpanNames(t *testing.T) {
	for method, want := range map[string][2]string{
		"":      {"retry GET", "GET"},
		"GET":   {"retry GET", "GET"},
		"PATCH": {"retry PATCH", "PATCH"},
		"PURGE": {"retry HTTP", "HTTP"},
		"get":   {"retry HTTP", "HTTP"},
	} {
		r := &http.Request{Method: method}
		if got := [2]string{defaultOperationName(r), defaultAttemptName(r)}; got != want {
			t.Errorf("method %q: names %q, want %q", method, got, want)
		}
	}
}

// WithIdempotentMethods upper-cases the standard methods, whatever their
// case, and keeps any other method as written (HTTP methods are
// case-sensitive).
func TestConfigNormalizesTheStandardMethodsOnly(t *testing.T) {
	c := newConfig([]Option{WithIdempotentMethods("put", "Delete", "PURGE", "purge")})
	want := map[string]bool{"PUT": true, "DELETE": true, "PURGE": true, "purge": true}
	if !reflect.DeepEqual(c.idempotentMethods, want) {
		t.Errorf("idempotent methods = %v, want %v", c.idempotentMethods, want)
	}
}

// The request's judgment reads buffering as off unless both limits are
// set, and the contract's headers only when WithIdempotencyKeyContract
// is given (its defaults, or the names given).
func TestConfigPolicyConfig(t *testing.T) {
	for _, tc := range []struct {
		opts       []Option
		wantBuffer int64
		wantNames  []string
	}{
		{nil, defaultBodyBufferPerRequest, nil},
		{[]Option{WithBodyBuffer(0, 0)}, 0, nil},
		{[]Option{WithBodyBuffer(1024, 0)}, 0, nil},
		{[]Option{WithBodyBuffer(0, 4096)}, 0, nil},
		{[]Option{WithBodyBuffer(1024, 4096), WithIdempotencyKeyContract()}, 1024, []string{"Idempotency-Key", "X-Idempotency-Key"}},
		{[]Option{WithIdempotencyKeyContract("Request-Id")}, defaultBodyBufferPerRequest, []string{"Request-Id"}},
	} {
		c := newConfig(tc.opts)
		p := c.policyConfig()
		if p.bufferPerRequest != tc.wantBuffer || !reflect.DeepEqual(p.contractHeaders, tc.wantNames) {
			t.Errorf("policy config = buffer %d, contract %v; want %d, %v", p.bufferPerRequest, p.contractHeaders, tc.wantBuffer, tc.wantNames)
		}
		if p.maxAttempts != c.maxAttempts || p.deadline != c.deadline || p.attemptTimeout != c.attemptTimeout || p.stateCheck {
			t.Errorf("policy config = %+v", p)
		}
	}
}

// The retryable statuses, as a set, hold exactly the statuses given, and
// nothing outside 400–599.
func TestConfigStatusSet(t *testing.T) {
	c := newConfig([]Option{WithRetryableStatuses(400, 500, 599)})
	s := c.statusSet()
	for code := 0; code < 1000; code++ {
		if want := code == 400 || code == 500 || code == 599; s.has(code) != want {
			t.Errorf("has(%d) = %v, want %v", code, s.has(code), want)
		}
	}
}

// The pause before retry n is the Backoff's, asked with n and the answer;
// a negative pause is none.
func TestConfigBackoffFor(t *testing.T) {
	c := newConfig([]Option{WithBackoff(func(n int, a Answer) time.Duration {
		return a.RetryAfter + time.Duration(n-3)*time.Second
	})})
	if d := c.backoffFor(5, Answer{RetryAfter: time.Millisecond}); d != 2*time.Second+time.Millisecond {
		t.Errorf("backoff for retry 5 = %v, want 2.001s (from n and the answer)", d)
	}
	if d := c.backoffFor(1, Answer{}); d != 0 {
		t.Errorf("backoff for retry 1 = %v, want 0 (its -2s clamped)", d)
	}
}

// The configured providers are used; without them, the global ones.
func TestConfigProviders(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(t.Context())
	prop := propagation.TraceContext{}
	c := newConfig([]Option{WithTracerProvider(tp), WithPropagators(prop)})
	gotTP, gotMP, gotProp := c.providers()
	if gotTP != tp || gotMP != otel.GetMeterProvider() || gotProp != prop {
		t.Errorf("providers = %T, %T, %T; want the configured tracer provider and propagator, the global meter provider", gotTP, gotMP, gotProp)
	}
	d := newConfig(nil)
	gotTP, _, gotProp = d.providers()
	if gotTP != otel.GetTracerProvider() || gotProp != otel.GetTextMapPropagator() {
		t.Errorf("default providers = %T, %T; want the global ones", gotTP, gotProp)
	}
}

// The classifier is asked when there is one; without one, every answer
// gets the zero Classification (the default rules).
func TestConfigClassify(t *testing.T) {
	d := newConfig(nil)
	if got := d.classify(Answer{StatusCode: 500}); got != (Classification{}) {
		t.Errorf("without a classifier: %+v", got)
	}
	c := newConfig([]Option{WithClassifier(func(a Answer) Classification {
		if a.StatusCode == 500 {
			return Retryable(time.Second)
		}
		return NotRetryable()
	})})
	if got := c.classify(Answer{StatusCode: 500}); got != Retryable(time.Second) {
		t.Errorf("500 classified %+v", got)
	}
	if got := c.classify(Answer{Err: errors.New("x")}); got != NotRetryable() {
		t.Errorf("an error classified %+v", got)
	}
}
