// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// wrappingTP is a TracerProvider whose spans wrap puts around the SDK's:
// a faulty tracing SDK or wrapper, one fault of the telemetry.
type wrappingTP struct {
	trace.TracerProvider
	wrap func(trace.Span) trace.Span
}

func (p wrappingTP) Tracer(name string, o ...trace.TracerOption) trace.Tracer {
	return wrappingTracer{p.TracerProvider.Tracer(name, o...), p.wrap}
}

type wrappingTracer struct {
	trace.Tracer
	wrap func(trace.Span) trace.Span
}

func (t wrappingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	ctx, s := t.Tracer.Start(ctx, name, opts...)
	w := t.wrap(s)
	return trace.ContextWithSpan(ctx, w), w
}

// addEventPanicsTP is a tracer whose spans' AddEvent panics: on the event
// named only, or on every event when only is "".
func addEventPanicsTP(tp trace.TracerProvider, only string) wrappingTP {
	return wrappingTP{tp, func(s trace.Span) trace.Span { return addEventPanicsSpan{s, only} }}
}

type addEventPanicsSpan struct {
	trace.Span
	only string
}

func (s addEventPanicsSpan) AddEvent(name string, o ...trace.EventOption) {
	if s.only == "" || s.only == name {
		panic("AddEvent exploded")
	}
	s.Span.AddEvent(name, o...)
}

func raceWithTracer(t *testing.T, only string, classifierPanics bool) (recovered any, closed, calls int32, spans *tracetest.SpanRecorder) {
	_ = captureOtelErrors(t)
	spans = tracetest.NewSpanRecorder()
	tp := addEventPanicsTP(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)), only)
	var cl, ca atomic.Int32
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			ca.Add(1)
			time.Sleep(15 * time.Millisecond)
			return &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {"soon"}}, Request: r,
				Body: closeTracked{strings.NewReader("busy"), &cl}}, nil
		})
		var n atomic.Int32
		rt := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp),
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}),
			otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
				if n.Add(1) == 1 {
					time.Sleep(20 * time.Millisecond)
				}
				if classifierPanics {
					panic("classifier exploded")
				}
				return otelretry.Classification{}
			}))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/items", nil)
		recovered = roundTripRecovered(rt, req)
		time.Sleep(time.Second)
		synctest.Wait()
	})
	return recovered, cl.Load(), ca.Load(), spans
}

// doc.go: "A base, a hook or the telemetry (a span processor, a log
// exporter, a metric view, a slog handler) that panics has what the
// operation holds released (buffers, bodies, the response being handed
// over) and its spans ended, with a panic event, and the panic goes on."
// A hedged race (an attempt and its hedge, each answered 503 with a
// malformed Retry-After) whose goroutines panicked, after which recording
// the race's hedge_sent event panics too, on the operation's goroutine:
// the attempts are let go of first, every span ends, and the race's first
// panic goes on.
//   - every AddEvent: one fault, a tracer whose spans' AddEvent panics
//     (retry_after_invalid on both attempts' goroutines, then hedge_sent);
//   - hedge_sent after the Classifiers: both attempts' Classifiers panic,
//     and the tracer panics on hedge_sent only;
//   - retry_after_invalid only: hedge_sent is recorded fine.
func TestARacesPanicsThenARecordPanicLetGoOfTheirAttempts(t *testing.T) {
	for _, c := range []struct {
		name, only       string
		classifierPanics bool
	}{
		{"every_AddEvent", "", false},
		{"hedge_sent_after_classifier", "hedge_sent", true},
		{"control_retry_after_invalid", "retry_after_invalid", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec, closed, calls, spans := raceWithTracer(t, c.only, c.classifierPanics)
			if rec == nil {
				t.Fatal("no panic reached the caller")
			}
			if calls != 2 {
				t.Fatalf("%d calls, want 2 (the attempt and its hedge)", calls)
			}
			if c.classifierPanics && rec != "classifier exploded" {
				t.Errorf("the panic %q went on, want the race's first (%q)", rec, "classifier exploded")
			}
			if closed != calls {
				t.Errorf("%d of %d base response bodies closed after the panic %q went on: the race's attempts were not let go of", closed, calls, rec)
			}
			if s, e := len(spans.Started()), len(spans.Ended()); s != e {
				t.Errorf("%d spans started, %d ended", s, e)
			}
		})
	}
}

// The same tracer, no hedging: the operation's only attempt is answered
// 503 with a malformed Retry-After, and recording its retry_after_invalid
// event panics on the operation's goroutine. Ending the spans with a panic
// event panics again (AddEvent): the spans end all the same.
func TestAPanickingAddEventStillEndsTheSpans(t *testing.T) {
	_ = captureOtelErrors(t)
	spans := tracetest.NewSpanRecorder()
	tp := addEventPanicsTP(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)), "")
	var closed atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {"soon"}}, Request: r,
			Body: closeTracked{strings.NewReader("busy"), &closed}}, nil
	})
	rt := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/items", nil)
	recovered := roundTripRecovered(rt, req)
	if recovered == nil {
		t.Fatal("no panic reached the caller")
	}
	if closed.Load() != 1 {
		t.Errorf("%d base bodies closed, want 1", closed.Load())
	}
	if s, e := len(spans.Started()), len(spans.Ended()); s != e || s == 0 {
		t.Errorf("%d spans started, %d ended after the panic %q went on: want every span ended", s, e, recovered)
	}
}

// setAttrPanicsTP is a tracer whose spans' SetAttributes panics:
//   - "url.full": when asked to set url.full alone;
//   - "after_first": on every call after a span's first (otelhttp's
//     request attributes go through).
func setAttrPanicsTP(tp trace.TracerProvider, mode string) wrappingTP {
	return wrappingTP{tp, func(s trace.Span) trace.Span { return &setAttrPanicsSpan{Span: s, mode: mode} }}
}

type setAttrPanicsSpan struct {
	trace.Span
	mode  string
	calls atomic.Int32
}

func (s *setAttrPanicsSpan) SetAttributes(kv ...attribute.KeyValue) {
	n := s.calls.Add(1)
	switch {
	case s.mode == "url.full" && len(kv) == 1 && kv[0].Key == "url.full",
		s.mode == "after_first" && n > 1:
		panic("SetAttributes exploded")
	}
	s.Span.SetAttributes(kv...)
}

// doc.go: "A base, a hook or the telemetry (a span processor, a log
// exporter, a metric view, a slog handler) that panics has what the
// operation holds released (buffers, bodies, the response being handed
// over) and its spans ended, with a panic event, and the panic goes on."
// CHANGELOG: a span ended after a panic ends even if recording the panic
// panics. The attempt's CLIENT span (otelhttp's, the default mode) is
// ended by endAttemptAfterPanic, whose SetAttributes(url.full) comes
// before endWithPanic's deferred End: when it panics, the span stays open.
func TestAPanickingSetAttributesStillEndsTheSpans(t *testing.T) {
	for _, c := range []struct {
		name, mode       string
		classifierPanics bool
	}{
		{"classifier_panics_then_url_full", "url.full", true},
		{"every_SetAttributes_after_the_first", "after_first", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_ = captureOtelErrors(t)
			spans := tracetest.NewSpanRecorder()
			tp := setAttrPanicsTP(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)), c.mode)
			var closed, calls atomic.Int32
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				calls.Add(1)
				return &http.Response{StatusCode: 200, Request: r,
					Body: closeTracked{strings.NewReader("ok"), &closed}}, nil
			})
			opts := []otelretry.Option{otelretry.WithTracerProvider(tp)}
			if c.classifierPanics {
				opts = append(opts, otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification {
					panic("classifier exploded")
				}))
			}
			rt := otelretry.NewTransport(base, opts...)
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/items", nil)
			recovered := roundTripRecovered(rt, req)
			if recovered == nil {
				t.Fatal("no panic reached the caller")
			}
			if closed.Load() != calls.Load() {
				t.Errorf("%d of %d base bodies closed", closed.Load(), calls.Load())
			}
			ended := map[trace.SpanID]bool{}
			for _, s := range spans.Ended() {
				ended[s.SpanContext().SpanID()] = true
			}
			var open []string
			for _, s := range spans.Started() {
				if !ended[s.SpanContext().SpanID()] {
					open = append(open, s.Name())
				}
			}
			if len(open) > 0 || len(spans.Started()) == 0 {
				t.Errorf("%d spans started, %d ended after the panic %q went on: still open %q",
					len(spans.Started()), len(spans.Ended()), recovered, open)
			}
		})
	}
}
