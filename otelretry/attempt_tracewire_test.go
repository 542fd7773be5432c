// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/baggage"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// On a real 127.0.0.1 server instrumented with otelhttp's handler,
// every request carries one traceparent and one baggage, the caller's
// differently spelled stale ones never beside them, the caller's baggage
// kept, and the server span's parent is the attempt's span or the base's
// CLIENT span under it, never the operation's or the caller's, each
// attempt its own: in the three sending modes, stacked, and under otelhttp
// above (a reviewer's run, after otelretry began to inject under
// WithoutClientSpans and over otelhttp's Transport).
func TestOneTraceContextOnTheWireInEveryMode(t *testing.T) {
	const stale = "00-11111111111111111111111111111111-2222222222222222-01"
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	type mode struct {
		name  string
		build func(tp trace.TracerProvider) http.RoundTripper
		// noop: the client side records nothing; the server's parent is the caller's span then.
		noop bool
	}
	noopOpts := []otelretry.Option{otelretry.WithTracerProvider(tracenoop.NewTracerProvider()), otelretry.WithMeterProvider(metricnoop.NewMeterProvider())}
	common := func(tp trace.TracerProvider, extra ...otelretry.Option) []otelretry.Option {
		return append([]otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithMeterProvider(metricnoop.NewMeterProvider()),
			otelretry.WithPropagators(prop), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, extra...)
	}
	newBase := func() http.RoundTripper { return &http.Transport{} }
	modes := []mode{
		{"default", func(tp trace.TracerProvider) http.RoundTripper {
			return otelretry.NewTransport(newBase(), common(tp)...)
		}, false},
		{"WithoutClientSpans", func(tp trace.TracerProvider) http.RoundTripper {
			return otelretry.NewTransport(newBase(), common(tp, otelretry.WithoutClientSpans())...)
		}, false},
		{"otelhttp base", func(tp trace.TracerProvider) http.RoundTripper {
			b := otelhttp.NewTransport(newBase(), otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()), otelhttp.WithPropagators(prop))
			return otelretry.NewTransport(b, common(tp)...)
		}, false},
		{"otelhttp base TraceContext only", func(tp trace.TracerProvider) http.RoundTripper {
			b := otelhttp.NewTransport(newBase(), otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()), otelhttp.WithPropagators(propagation.TraceContext{}))
			return otelretry.NewTransport(b, common(tp)...)
		}, false},
		{"no-op providers", func(tp trace.TracerProvider) http.RoundTripper {
			return otelretry.NewTransport(newBase(), append(noopOpts, otelretry.WithPropagators(prop), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))...)
		}, true},
		{"stacked", func(tp trace.TracerProvider) http.RoundTripper {
			inner := otelretry.NewTransport(newBase(), common(tp, otelretry.WithMaxAttempts(1))...)
			return otelretry.NewTransport(inner, common(tp)...)
		}, false},
		{"stacked WithoutClientSpans", func(tp trace.TracerProvider) http.RoundTripper {
			inner := otelretry.NewTransport(newBase(), common(tp, otelretry.WithMaxAttempts(1), otelretry.WithoutClientSpans())...)
			return otelretry.NewTransport(inner, common(tp, otelretry.WithoutClientSpans())...)
		}, false},
		{"otelhttp above", func(tp trace.TracerProvider) http.RoundTripper {
			return otelhttp.NewTransport(otelretry.NewTransport(newBase(), common(tp)...),
				otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()), otelhttp.WithPropagators(prop))
		}, false},
	}
	for _, m := range modes {
		for _, spelling := range []string{"TRACEPARENT", "traceparent"} {
			t.Run(m.name+"/"+spelling, func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
				var mu sync.Mutex
				var seen []http.Header
				srv := httptest.NewServer(otelhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					seen = append(seen, r.Header.Clone())
					n := len(seen)
					mu.Unlock()
					if n == 1 {
						w.WriteHeader(503)
						return
					}
					w.Write([]byte("ok"))
				}), "server", otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()), otelhttp.WithPropagators(prop)))
				defer srv.Close()
				rt := m.build(tp)
				defer func() {
					if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
						c.CloseIdleConnections()
					}
				}()
				member, _ := baggage.NewMemberRaw("tenant", "acme")
				bag, _ := baggage.New(member)
				ctx := baggage.ContextWithBaggage(t.Context(), bag)
				ctx, caller := tp.Tracer("caller").Start(ctx, "caller")
				req := get(t, ctx, srv.URL+"/x")
				req.Header[spelling] = []string{stale}
				req.Header["BAGGAGE"] = []string{"stale=1"}
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				caller.End()
				srv.Close() // the server's spans end before it returns
				mu.Lock()
				got := append([]http.Header(nil), seen...)
				mu.Unlock()
				if len(got) != 2 {
					t.Fatalf("server got %d requests, want 2", len(got))
				}
				for i, h := range got {
					if v := h.Values("Traceparent"); len(v) != 1 || v[0] == stale {
						t.Errorf("request %d: traceparent values %q, want one, not the caller's stale one", i, v)
					}
					if v := h.Values("Baggage"); len(v) != 1 || !strings.Contains(v[0], "tenant=acme") {
						t.Errorf("request %d: baggage values %q, want one with the caller's tenant=acme", i, v)
					}
				}
				checkServerParents(t, rec.Ended(), caller.SpanContext().SpanID(), m.noop)
			})
		}
	}
}

// checkServerParents checks that each server span's parent is an attempt
// span or the base's CLIENT span under one, one server span each (with
// noop, the client records nothing: the caller's span).
func checkServerParents(t *testing.T, spans []sdktrace.ReadOnlySpan, caller trace.SpanID, noop bool) {
	t.Helper()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	attempts := map[trace.SpanID]bool{}
	for _, a := range spantest.Attempts(spans) {
		attempts[a.SpanContext().SpanID()] = true
	}
	parents := map[trace.SpanID]bool{}
	for _, s := range spans {
		if s.SpanKind() != trace.SpanKindServer {
			continue
		}
		p := s.Parent().SpanID()
		if parents[p] && !noop {
			t.Errorf("two server spans under %s", p)
		}
		parents[p] = true
		if noop {
			if p != caller {
				t.Errorf("server span's parent %s, want the caller's %s", p, caller)
			}
			continue
		}
		ps, ok := byID[p]
		switch {
		case !ok:
			t.Errorf("server span's parent %s is no recorded span", p)
		case attempts[p]:
		case ps.SpanKind() == trace.SpanKindClient && attempts[ps.Parent().SpanID()]:
		default:
			t.Errorf("server span's parent is %q (%v), want an attempt span or the base's CLIENT span under one\n%s", ps.Name(), ps.SpanKind(), dumpSpans(spans))
		}
	}
	if len(parents) != 2 && !noop {
		t.Errorf("%d server spans, want 2", len(parents))
	}
}
