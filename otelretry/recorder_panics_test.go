// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Every span of otelretry's carries retry.operation.id (docs/telemetry.md
// gives a Collector filter that keeps them by it), the span a base's panic
// ended too: the attempt span carries the operation id, the request id and
// the attempt number, with client spans or without (otelretry's own
// INTERNAL span, which carried no attribute at all). Before, the panic
// event, the one record of what happened, was on a span that filter drops.
func TestAPanickedAttemptSpanCarriesTheOperationID(t *testing.T) {
	for _, own := range []bool{true, false} {
		t.Run(fmt.Sprintf("withoutClientSpans=%v", own), func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			var base = scripted.New(scripted.Step{Panic: "base exploded"})
			opts := []otelretry.Option{otelretry.WithTracerProvider(tp)}
			tr := otelretry.NewTransport(base, opts...)
			if own {
				tr = otelretry.NewTransport(otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tp)), append(opts, otelretry.WithoutClientSpans())...)
			}
			func() {
				defer func() { recover() }()
				tr.RoundTrip(get(t, t.Context(), "http://api.test/"))
			}()
			ops := spantest.Operations(rec.Ended())
			var op sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				if _, ok := spantest.Attr(s, attrs.OperationIDKey); ok && s.Parent().SpanID() == (trace.SpanID{}) {
					op = s
				}
			}
			if op == nil {
				t.Fatalf("no operation span (%d with an outcome)", len(ops))
			}
			id, _ := spantest.Attr(op, attrs.OperationIDKey)
			children := spantest.Children(rec.Ended(), op)
			if len(children) != 1 {
				t.Fatalf("%d spans under the operation span, want the attempt span", len(children))
			}
			a := children[0]
			var kv []string
			for _, x := range a.Attributes() {
				kv = append(kv, string(x.Key)+"="+x.Value.Emit())
			}
			got, ok := spantest.Attr(a, attrs.OperationIDKey)
			if !ok || got.AsString() != id.AsString() {
				t.Errorf("the panicked attempt span %q (%v, events %d) carries retry.operation.id %q (set %v), want %q; its attributes: %v",
					a.Name(), a.SpanKind(), len(a.Events()), got.AsString(), ok, id.AsString(), kv)
			}
		})
	}
}

// The same for the state_check span a hook's panic ended: it carries
// retry.operation.id, as its normal end writes it (it carried none).
func TestAPanickedStateCheckSpanCarriesTheOperationID(t *testing.T) {
	for _, own := range []bool{true, false} {
		t.Run(fmt.Sprintf("withoutClientSpans=%v", own), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
				var base http.RoundTripper = scripted.New(scripted.Step{Hang: true})
				opts := []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithAttemptTimeout(time.Second),
					otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
						panic("lookup exploded")
					})}
				if own {
					base = otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tp))
					opts = append(opts, otelretry.WithoutClientSpans())
				}
				tr := otelretry.NewTransport(base, opts...)
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/orders", strings.NewReader(`{}`))
				func() {
					defer func() { recover() }()
					tr.RoundTrip(req)
				}()
				checks := spantest.Named(rec.Ended(), attrs.StateCheckSpanName)
				if len(checks) != 1 {
					t.Fatalf("%d state_check spans, want 1", len(checks))
				}
				if _, ok := spantest.Attr(checks[0], attrs.OperationIDKey); !ok {
					t.Errorf("the state_check span ended by the hook's panic (status %v, %d events) carries no retry.operation.id; attributes %v",
						checks[0].Status().Code, len(checks[0].Events()), checks[0].Attributes())
				}
			})
		})
	}
}

// A state check hook's panic goes on to the caller when recording it
// panics too (a faulty tracer), as every other panic does: before, the
// telemetry's panic replaced the hook's.
func TestAStateCheckHooksPanicGoesOnWhenRecordingItPanics(t *testing.T) {
	_ = captureOtelErrors(t)
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := addEventPanicsTP(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), attrs.EventPanic)
		base := scripted.New(scripted.Step{Hang: true})
		tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithAttemptTimeout(time.Second),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				panic("lookup exploded")
			}))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/orders", strings.NewReader(`{}`))
		got := roundTripRecovered(tr, req)
		if got != "lookup exploded" {
			t.Errorf("the caller recovered %v, want the state check hook's own panic %q", got, "lookup exploded")
		}
		if open := openSpans(rec); len(open) > 0 {
			t.Errorf("spans left open: %v", open)
		}
	})
}

// A faulty tracer whose AddEvent panics as the state_check span is ended
// (the body_not_replayable event of a not_applied answer for a body that
// cannot be sent again): the panic reaches the caller, and the
// state_check span is ended, as endWithPanic ends a span whatever the
// telemetry does (it was left open).
func TestAStateCheckEndsItsSpanWhenItsTelemetryPanics(t *testing.T) {
	_ = captureOtelErrors(t)
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := addEventPanicsTP(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), attrs.EventBodyNotReplayable)
		base := scripted.New(scripted.Step{Hang: true}, scripted.Step{Hang: true}, scripted.Step{Hang: true})
		tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithAttemptTimeout(time.Second),
			otelretry.WithBodyBuffer(0, 0),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateNotApplied}, nil
			}))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/orders", io.NopCloser(strings.NewReader(`{}`)))
		req.ContentLength = 2
		got := roundTripRecovered(tr, req)
		if got != "AddEvent exploded" {
			t.Errorf("the caller recovered %v, want the tracer's panic", got)
		}
		if open := openSpans(rec); len(open) > 0 {
			t.Errorf("spans left open: %v", open)
		}
	})
}

// closeExplodes is a stored response body whose Close panics.
type closeExplodes struct{ io.Reader }

func (closeExplodes) Close() error { panic("close exploded") }

// A state check that answers not_applied with a response (ignored, and
// closed by otelretry) whose body's Close panics: the panic reaches the
// caller and the state_check span is ended, as after every other panic
// (it was left open).
func TestAStateCheckEndsItsSpanWhenTheIgnoredResponsesClosePanics(t *testing.T) {
	_ = captureOtelErrors(t)
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		base := scripted.New(scripted.Step{Hang: true}, scripted.Step{Hang: true}, scripted.Step{Hang: true})
		tr := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithAttemptTimeout(time.Second),
			otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
				return otelretry.StateResult{State: attrs.StateNotApplied, Response: &http.Response{StatusCode: 404, Header: http.Header{},
					Body: closeExplodes{strings.NewReader("none")}}}, nil
			}))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/orders", strings.NewReader(`{}`))
		got := roundTripRecovered(tr, req)
		if got != "close exploded" {
			t.Errorf("the caller recovered %v, want the body's Close panic", got)
		}
		if open := openSpans(rec); len(open) > 0 {
			t.Errorf("spans left open: %v", open)
		}
	})
}

// panickingInject is a propagator whose Inject panics.
type panickingInject struct{ propagation.TraceContext }

func (panickingInject) Inject(context.Context, propagation.TextMapCarrier) { panic("inject exploded") }

// A propagator (WithPropagators) whose Inject panics, in each mode that
// injects while spans record: with client spans otelhttp has started the
// attempt's CLIENT span by then and ends none on a panic, so the attempt
// must know its span before the propagator runs; under WithoutClientSpans,
// and over otelhttp's Transport, otelretry injects from its own attempt
// span. The panic goes on, every span ended.
func TestAPanickingPropagatorLeavesNoSpanOpen(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	ht := http.DefaultTransport.(*http.Transport).Clone()
	defer ht.CloseIdleConnections()
	for _, tc := range []struct {
		name string
		base func(*sdktrace.TracerProvider) http.RoundTripper
		opts []otelretry.Option
	}{
		{"client spans", func(*sdktrace.TracerProvider) http.RoundTripper { return ht }, nil},
		{"WithoutClientSpans", func(*sdktrace.TracerProvider) http.RoundTripper { return ht }, []otelretry.Option{otelretry.WithoutClientSpans()}},
		{"over otelhttp", func(tp *sdktrace.TracerProvider) http.RoundTripper {
			return otelhttp.NewTransport(ht, otelhttp.WithTracerProvider(tp))
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			tr := otelretry.NewTransport(tc.base(tp), append(tc.opts, otelretry.WithTracerProvider(tp),
				otelretry.WithPropagators(panickingInject{}))...)
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/items", nil)
			var recovered any
			func() {
				defer func() { recovered = recover() }()
				tr.RoundTrip(req)
			}()
			if recovered != "inject exploded" {
				t.Fatalf("recovered %v, want the propagator's panic", recovered)
			}
			if open := openSpans(rec); len(open) > 0 {
				t.Errorf("spans left open after the propagator's panic: %q (started %d, ended %d)", open, len(rec.Started()), len(rec.Ended()))
			}
			for _, s := range spantest.Attempts(rec.Ended()) {
				if s.Status().Code != codes.Error {
					t.Errorf("attempt span status %v, want Error", s.Status())
				}
			}
		})
	}
}

// TestAnAttemptWhoseHooksPanickedHasNoAttemptMetric pins what
// docs/telemetry.md says: the attempt whose Classifier panicked has no
// decision to label retry.attempts with, and the operation records no
// metric; its span ends with a panic event. The attempt before it, judged,
// is in the metric.
func TestAnAttemptWhoseHooksPanickedHasNoAttemptMetric(t *testing.T) {
	var answers atomic.Int32
	h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 503}}, otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
		otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification {
			if answers.Add(1) == 2 {
				panic("classifier")
			}
			return otelretry.Classification{}
		}))
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the Classifier's panic did not reach the caller")
			}
		}()
		h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
	}()
	rm := h.collect(t)
	if got := sumBy(t, rm, "retry.attempts", attrs.DecisionKey); !maps.Equal(got, map[string]int64{"retry": 1}) {
		t.Errorf("retry.attempts by decision %v; want the first attempt's retry alone", got)
	}
	if got := sumBy(t, rm, "retry.operations", attrs.OutcomeKey); len(got) != 0 {
		t.Errorf("retry.operations %v; want none", got)
	}
	panicked := 0
	for _, s := range h.spans.Ended() {
		for _, e := range s.Events() {
			if e.Name == attrs.EventPanic {
				panicked++
			}
		}
	}
	if panicked == 0 {
		t.Error("no span ended with a panic event")
	}
}

// A panic event names the panic by its type alone, under semconv's
// exception.type: its value may hold a URL or a secret, and is never
// recorded (docs/telemetry.md). Nothing checked the key or the value left
// out (a reviewer's mutations: the value recorded, the key changed).
func TestAPanicEventNamesThePanicsTypeOnly(t *testing.T) {
	const secret = "https://alice:SECRET@api.test/?token=SECRET"
	h := newHarness(t, []scripted.Step{{Status: 503}},
		otelretry.WithClassifier(func(otelretry.Answer) otelretry.Classification { panic(secret) }))
	func() {
		defer func() { _ = recover() }()
		h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/"))
	}()
	events := 0
	for _, s := range h.spans.Ended() {
		for _, e := range s.Events() {
			if e.Name != attrs.EventPanic {
				continue
			}
			events++
			if len(e.Attributes) != 1 || e.Attributes[0].Key != "exception.type" || e.Attributes[0].Value.AsString() != "string" {
				t.Errorf("panic event attributes %v; want exception.type=string alone", e.Attributes)
			}
			if strings.Contains(fmt.Sprint(e.Attributes), "SECRET") {
				t.Errorf("the panic's value reached the event: %v", e.Attributes)
			}
		}
	}
	if events == 0 {
		t.Fatal("no panic event")
	}
}
