// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package overhead

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/hashicorp/go-retryablehttp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/otelretry"
)

// payload is the body of every response.
const payload = `{"ok":true}`

// memTransport is the in-memory base: it answers without I/O, cycling
// through statuses (one per call), with a fresh *http.Response and body per
// call as a real transport does. The header map is canned and shared: no
// case writes to it.
type memTransport struct {
	statuses []int
	header   http.Header
	calls    atomic.Int64
}

func newMemTransport(statuses ...int) *memTransport {
	return &memTransport{statuses: statuses, header: http.Header{"Content-Type": {"application/json"}}}
}

func (t *memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	n := t.calls.Add(1) - 1
	code := t.statuses[int(n%int64(len(t.statuses)))]
	return &http.Response{
		Status:        http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        t.header,
		Body:          &cannedBody{s: payload},
		ContentLength: int64(len(payload)),
		Request:       req,
	}, nil
}

// cannedBody is a response body over a constant string: one allocation per
// response, the same for every case.
type cannedBody struct {
	s   string
	off int
}

func (b *cannedBody) Read(p []byte) (int, error) {
	if b.off >= len(b.s) {
		return 0, io.EOF
	}
	n := copy(p, b.s[b.off:])
	b.off += n
	return n, nil
}

func (b *cannedBody) Close() error { return nil }

// newLoopbackServer starts an httptest server on 127.0.0.1 that answers
// every request with 200 and payload. The caller closes it.
func newLoopbackServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, payload)
	}))
}

// newLoopbackTransport is a fresh keep-alive transport per case, so no case
// inherits another's connections.
func newLoopbackTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return t
}

// sdk holds the SDK providers shared by the otelhttp, otelretry-sdk and
// *-otelhttp cases: every span is sampled and recorded, then dropped when it
// ends (counted, not exported); metrics are aggregated by the SDK and read
// by nobody (ManualReader). Trace context is injected with W3C traceparent.
type sdk struct {
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	reader *sdkmetric.ManualReader
	prop   propagation.TextMapPropagator
	spans  *spanCounter
}

// extraProcessor, when set (by a test, never by a benchmark), also
// receives the spans of the providers newSDK builds.
var extraProcessor sdktrace.SpanProcessor

func newSDK(tb testing.TB) *sdk {
	s := &sdk{spans: &spanCounter{}, prop: propagation.TraceContext{}, reader: sdkmetric.NewManualReader()}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(s.spans)}
	if extraProcessor != nil {
		opts = append(opts, sdktrace.WithSpanProcessor(extraProcessor))
	}
	s.tp = sdktrace.NewTracerProvider(opts...)
	s.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	tb.Cleanup(func() {
		_ = s.tp.Shutdown(context.Background())
		_ = s.mp.Shutdown(context.Background())
	})
	return s
}

// otelhttp wraps rt in an otelhttp client transport on these providers.
func (s *sdk) otelhttp(rt http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(rt,
		otelhttp.WithTracerProvider(s.tp),
		otelhttp.WithMeterProvider(s.mp),
		otelhttp.WithPropagators(s.prop))
}

// spanCounter is a SpanProcessor that drops every span when it ends, after
// counting it.
type spanCounter struct{ ended atomic.Int64 }

func (c *spanCounter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c *spanCounter) OnEnd(sdktrace.ReadOnlySpan)                     { c.ended.Add(1) }
func (c *spanCounter) Shutdown(context.Context) error                  { return nil }
func (c *spanCounter) ForceFlush(context.Context) error                { return nil }

// operation sends one logical request (with whatever retries the case
// makes), reads the whole body and closes it.
type operation func() error

// built is a case ready to run; spans (and sdk) are nil for cases without
// the SDK.
type built struct {
	op    operation
	spans *spanCounter
	sdk   *sdk
}

// kind says which benchmark a case is built for.
type kind int

const (
	success  kind = iota // RoundTrip, RoundTripLoopback: one attempt per operation
	retrying             // Retry3: 503, 503, 200; zero backoff everywhere
)

// caseDef builds one case over base for requests to url.
type caseDef struct {
	name    string
	build   func(tb testing.TB, base http.RoundTripper, url string, k kind) built
	noRetry bool // no Retry3 entry
}

// cases are the contenders, in the order the tables show them. Each case
// is an http.RoundTripper over the base, and each operation calls its
// RoundTrip directly, as an http.Client would, so that no client's own
// cost is counted in the overhead (the benchmark's name: RoundTrip). Each
// operation builds its request with http.NewRequestWithContext, with the
// parent span's context in the *-otelhttp cases, then reads and closes
// the body. go-retryablehttp's RoundTripper is the one its
// Client.StandardClient installs; it sends through the library's Client,
// and so through an inner http.Client (see newRetryableTransport).
var cases = []caseDef{
	// bare: the base alone. In Retry3 it is the floor: a hand-written loop
	// of three calls that drains and closes each 503.
	{name: "bare", build: func(tb testing.TB, base http.RoundTripper, url string, k kind) built {
		if k == retrying {
			return built{op: func() error { return handLoop(base, url) }}
		}
		return built{op: func() error { return roundTrip(base, context.Background(), url) }}
	}},
	// otelhttp: otelhttp.NewTransport(base) with the SDK providers: one
	// CLIENT span per request, HTTP client metrics, traceparent injected. No
	// retries, so it has no Retry3 entry.
	{name: "otelhttp", noRetry: true, build: func(tb testing.TB, base http.RoundTripper, url string, _ kind) built {
		s := newSDK(tb)
		rt := s.otelhttp(base)
		return built{op: func() error { return roundTrip(rt, context.Background(), url) }, spans: s.spans}
	}},
	// otelretry-noop: otelretry.NewTransport(base) with no-op tracer and
	// meter providers and an empty propagator; otherwise defaults (3
	// attempts, deadline, attempt timeout, retry budget, exponential
	// backoff, otelhttp for attempts whose operation records). Retry3 adds
	// ConstantBackoff(0) and WithoutBudget (the default budget allows
	// max(10% of operations, 10) retries per 10s window, which three
	// attempts per operation would exhaust).
	{name: "otelretry-noop", build: func(tb testing.TB, base http.RoundTripper, url string, k kind) built {
		opts := []otelretry.Option{
			otelretry.WithTracerProvider(tracenoop.NewTracerProvider()),
			otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
			otelretry.WithPropagators(propagation.NewCompositeTextMapPropagator()),
		}
		rt := otelretry.NewTransport(base, append(opts, otelretryRetryOptions(k)...)...)
		return built{op: func() error { return roundTrip(rt, context.Background(), url) }}
	}},
	// otelretry-sdk: the same with the SDK providers and traceparent: per
	// operation an operation span, and per attempt an attempt span and an
	// otelhttp CLIENT span, with the retry attributes and the retry and HTTP
	// client metrics.
	{name: "otelretry-sdk", build: func(tb testing.TB, base http.RoundTripper, url string, k kind) built {
		s := newSDK(tb)
		opts := []otelretry.Option{
			otelretry.WithTracerProvider(s.tp),
			otelretry.WithMeterProvider(s.mp),
			otelretry.WithPropagators(s.prop),
		}
		rt := otelretry.NewTransport(base, append(opts, otelretryRetryOptions(k)...)...)
		return built{op: func() error { return roundTrip(rt, context.Background(), url) }, spans: s.spans, sdk: s}
	}},
	// retryablehttp: go-retryablehttp v0.7.8's RoundTripper with 3 attempts
	// (RetryMax=2), no logger, zero wait, the default retry policy, over the
	// base. No telemetry.
	{name: "retryablehttp", build: func(tb testing.TB, base http.RoundTripper, url string, k kind) built {
		rt := newRetryableTransport(base)
		return built{op: func() error { return roundTrip(rt, context.Background(), url) }}
	}},
	// retryablehttp-deadline: the same with the bounds otelretry sets by
	// default, as a user of go-retryablehttp would add them: a 10s timeout
	// per attempt (the inner http.Client's Timeout) and a 30s deadline per
	// operation (a context canceled once the body is read). It prices the
	// deadline that retryablehttp alone does not enforce, and is the
	// in-memory peer of otelretry-noop: the same bounds.
	{name: "retryablehttp-deadline", build: func(tb testing.TB, base http.RoundTripper, url string, k kind) built {
		rt := newRetryableTransport(base)
		rt.(*retryablehttp.RoundTripper).Client.HTTPClient.Timeout = 10 * time.Second
		return built{op: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return roundTrip(rt, ctx, url)
		}}
	}},
	// retryablehttp-otelhttp: the same over an otelhttp transport on the SDK
	// providers, plus a hand-made parent span per operation around the call
	// and the body read: one span per operation and one CLIENT span per
	// attempt, no retry attributes, no retry metrics.
	{name: "retryablehttp-otelhttp", build: func(tb testing.TB, base http.RoundTripper, url string, k kind) built {
		s := newSDK(tb)
		return withParentSpan(s, newRetryableTransport(s.otelhttp(base)), url)
	}},
	// retryablehttp-otelhttp-content: the content floor, retryablehttp-otelhttp
	// writing by hand what otelretry-sdk writes for a successful GET (see
	// floor_test.go). Successes only: it has no Retry3 entry.
	{name: "retryablehttp-otelhttp-content", noRetry: true, build: func(tb testing.TB, base http.RoundTripper, url string, _ kind) built {
		return contentFloor(tb, base, url)
	}},
	// failsafehttp: failsafe-go v0.9.8 failsafehttp.NewRoundTripper(base,
	// policy) with failsafehttp.NewRetryPolicyBuilder() (retries 429 and 5xx
	// but 501) limited to 3 attempts with WithDelay(0). No telemetry.
	// failsafehttp neither drains nor closes the body of a response it
	// retries; the in-memory base does not care, but see
	// failsafehttp-otelhttp.
	{name: "failsafehttp", build: func(tb testing.TB, base http.RoundTripper, url string, k kind) built {
		rt := failsafehttp.NewRoundTripper(base, newFailsafePolicy())
		return built{op: func() error { return roundTrip(rt, context.Background(), url) }}
	}},
	// failsafehttp-otelhttp: the same over an otelhttp transport on the SDK
	// providers, plus a hand-made parent span per operation, as for
	// retryablehttp-otelhttp. As failsafehttp never closes the bodies of the
	// 503s it retries, otelhttp never ends their CLIENT spans: Retry3 reports
	// 2 spans/op here (parent + last attempt), less work than the others do.
	// This is how the library behaves, so it is measured as it is.
	{name: "failsafehttp-otelhttp", build: func(tb testing.TB, base http.RoundTripper, url string, k kind) built {
		s := newSDK(tb)
		return withParentSpan(s, failsafehttp.NewRoundTripper(s.otelhttp(base), newFailsafePolicy()), url)
	}},
}

// withParentSpan is a case whose operations run rt under a hand-made
// INTERNAL parent span: what a user of a retry library without tracing
// writes to see the attempts of one operation together.
func withParentSpan(s *sdk, rt http.RoundTripper, url string) built {
	tracer := s.tp.Tracer("bench")
	return built{op: func() error {
		ctx, span := tracer.Start(context.Background(), "GET", trace.WithSpanKind(trace.SpanKindInternal))
		err := roundTrip(rt, ctx, url)
		span.End()
		return err
	}, spans: s.spans}
}

func otelretryRetryOptions(k kind) []otelretry.Option {
	if k != retrying {
		return nil
	}
	return []otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget()}
}

// newRetryableTransport is go-retryablehttp's RoundTripper over rt: its
// Client (3 attempts, no logger, zero wait, the default retry policy)
// sending through an http.Client whose Transport is rt.
func newRetryableTransport(rt http.RoundTripper) http.RoundTripper {
	return &retryablehttp.RoundTripper{Client: &retryablehttp.Client{
		HTTPClient:   &http.Client{Transport: rt},
		Logger:       nil,
		RetryWaitMin: 0,
		RetryWaitMax: 0,
		RetryMax:     2,
		CheckRetry:   retryablehttp.DefaultRetryPolicy,
		Backoff:      func(time.Duration, time.Duration, int, *http.Response) time.Duration { return 0 },
	}}
}

func newFailsafePolicy() retrypolicy.RetryPolicy[*http.Response] {
	return failsafehttp.NewRetryPolicyBuilder().WithMaxAttempts(3).WithDelay(0).Build()
}

// roundTrip is one operation: build the request, send it through rt,
// read and close the body.
func roundTrip(rt http.RoundTripper, ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	return consume(rt.RoundTrip(req))
}

// consume reads and closes the body of a successful operation.
func consume(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return err
}

// handLoop is the bare Retry3 floor: up to three calls, retrying 503.
func handLoop(rt http.RoundTripper, url string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	for range 3 {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			return consume(resp, nil)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	return errors.New("no 200 after 3 attempts")
}
