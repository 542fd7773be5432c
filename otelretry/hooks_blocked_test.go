// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/otelretry"
)

type hookGateKey struct{}

// hookGate blocks the first user-code call made for the marked operation
// (its context holds hookGateKey) until release is closed.
type hookGate struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func newHookGate() *hookGate {
	return &hookGate{entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *hookGate) maybe(ctx context.Context) {
	if ctx == nil || ctx.Value(hookGateKey{}) == nil {
		return
	}
	g.once.Do(func() {
		close(g.entered)
		<-g.release
	})
}

type gatedSpanProcessor struct{ g *hookGate }

func (p gatedSpanProcessor) OnStart(ctx context.Context, _ sdktrace.ReadWriteSpan) { p.g.maybe(ctx) }
func (gatedSpanProcessor) OnEnd(sdktrace.ReadOnlySpan)                             {}
func (gatedSpanProcessor) Shutdown(context.Context) error                          { return nil }
func (gatedSpanProcessor) ForceFlush(context.Context) error                        { return nil }

type gatedLogProcessor struct{ g *hookGate }

func (p gatedLogProcessor) OnEmit(ctx context.Context, _ *sdklog.Record) error {
	p.g.maybe(ctx)
	return nil
}
func (gatedLogProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (gatedLogProcessor) Shutdown(context.Context) error                         { return nil }
func (gatedLogProcessor) ForceFlush(context.Context) error                       { return nil }

type gatedSlogHandler struct{ g *hookGate }

func (h gatedSlogHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h gatedSlogHandler) Handle(ctx context.Context, _ slog.Record) error {
	h.g.maybe(ctx)
	return nil
}
func (h gatedSlogHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h gatedSlogHandler) WithGroup(string) slog.Handler      { return h }

type gatedPropagator struct{ g *hookGate }

func (p gatedPropagator) Inject(ctx context.Context, _ propagation.TextMapCarrier) { p.g.maybe(ctx) }
func (gatedPropagator) Extract(ctx context.Context, _ propagation.TextMapCarrier) context.Context {
	return ctx
}
func (gatedPropagator) Fields() []string { return nil }

// gatedBase answers 503 to each operation's first attempt and 200 after.
func gatedBase(g *hookGate, blockBase bool) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if blockBase {
			g.maybe(r.Context())
		}
		code := 200
		if r.Header.Get("X-Attempt") == "1" {
			code = 503
		}
		return &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader("ok")),
			Header: http.Header{"Retry-After": {"0"}}, Request: r}, nil
	})
}

// No user code runs under a lock of otelretry's: one kind of user code
// (a hook, the base, a span or log processor, a slog handler, a
// propagator) blocked in one operation holds none of 40 others on the same
// Transport, on another sharing its Budget and Throttle, and hedged ones
// on the same host; every other one ends while it is blocked (a reviewer's
// run, adopted; the wait is a bound on a deadlock, not a timing).
func TestUserCodeBlockedInOneOperationHoldsNoOther(t *testing.T) {
	hooks := map[string]func(g *hookGate) ([]otelretry.Option, bool){
		"classifier": func(g *hookGate) ([]otelretry.Option, bool) {
			return []otelretry.Option{otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				g.maybe(a.Request.Context())
				return otelretry.Classification{}
			})}, false
		},
		"backoff": func(g *hookGate) ([]otelretry.Option, bool) {
			return []otelretry.Option{otelretry.WithBackoff(func(_ int, a otelretry.Answer) time.Duration {
				g.maybe(a.Request.Context())
				return time.Millisecond
			})}, false
		},
		"prepare": func(g *hookGate) ([]otelretry.Option, bool) {
			return []otelretry.Option{otelretry.WithPrepareAttempt(func(r *http.Request, _ int) error {
				g.maybe(r.Context())
				return nil
			})}, false
		},
		"spanname": func(g *hookGate) ([]otelretry.Option, bool) {
			return []otelretry.Option{otelretry.WithSpanNameFormatter(func(r *http.Request) string {
				g.maybe(r.Context())
				return "op"
			}), otelretry.WithAttemptSpanNameFormatter(func(r *http.Request) string {
				g.maybe(r.Context())
				return "at"
			})}, false
		},
		"metricattrs": func(g *hookGate) ([]otelretry.Option, bool) {
			return []otelretry.Option{otelretry.WithMetricAttributes(func(r *http.Request) []attribute.KeyValue {
				g.maybe(r.Context())
				return nil
			})}, false
		},
		"base": func(g *hookGate) ([]otelretry.Option, bool) { return nil, true },
		"spanprocessor": func(g *hookGate) ([]otelretry.Option, bool) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(gatedSpanProcessor{g}))
			return []otelretry.Option{otelretry.WithTracerProvider(tp)}, false
		},
		"logprocessor": func(g *hookGate) ([]otelretry.Option, bool) {
			lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(gatedLogProcessor{g}))
			return []otelretry.Option{otelretry.WithLoggerProvider(lp)}, false
		},
		"slog": func(g *hookGate) ([]otelretry.Option, bool) {
			return []otelretry.Option{otelretry.WithLogger(slog.New(gatedSlogHandler{g}))}, false
		},
		"propagator": func(g *hookGate) ([]otelretry.Option, bool) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
			return []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithPropagators(gatedPropagator{g})}, false
		},
	}
	for name, mk := range hooks {
		t.Run(name, func(t *testing.T) {
			g := newHookGate()
			hookOpts, blockBase := mk(g)
			budget := &otelretry.Budget{}
			throttle := &otelretry.Throttle{}
			common := append([]otelretry.Option{
				otelretry.WithBudget(budget), otelretry.WithThrottle(throttle),
				otelretry.WithAttemptHeader("X-Attempt"),
				otelretry.WithBackoff(func(int, otelretry.Answer) time.Duration { return time.Millisecond }),
			}, hookOpts...)
			base := gatedBase(g, blockBase)
			tr1 := otelretry.NewTransport(base, common...)
			tr2 := otelretry.NewTransport(base, common...)
			tr3 := otelretry.NewTransport(base, append(common, otelretry.WithHedging(otelretry.Hedging{Delay: time.Millisecond, MaxShare: 1}))...)

			blockedDone := make(chan error, 1)
			go func() {
				ctx := context.WithValue(context.Background(), hookGateKey{}, true)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/blocked", nil)
				resp, err := tr1.RoundTrip(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				blockedDone <- err
			}()
			select {
			case <-g.entered:
			case err := <-blockedDone:
				t.Fatalf("the hook was never called for the marked operation (err %v)", err)
			case <-time.After(10 * time.Second):
				t.Fatal("the hook was never called for the marked operation")
			}
			const others = 40
			var done atomic.Int32
			var wg sync.WaitGroup
			for i := range others {
				tr := []*otelretry.Transport{tr1, tr2, tr3}[i%3]
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:1/o%d", i), nil)
					resp, err := tr.RoundTrip(req)
					if err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					_ = budget.Available(req)
					done.Add(1)
				}()
			}
			allDone := make(chan struct{})
			go func() { wg.Wait(); close(allDone) }()
			select {
			case <-allDone:
			case <-time.After(15 * time.Second): // a bound on a deadlock, not a timing assertion
				t.Errorf("%s blocked in one operation: only %d of %d other operations ended", name, done.Load(), others)
			}
			close(g.release)
			<-allDone
			if err := <-blockedDone; err != nil && !errors.Is(err, context.Canceled) {
				t.Logf("blocked operation: %v", err)
			}
		})
	}
}
