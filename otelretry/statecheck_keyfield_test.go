// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// fieldsOnlyPropagator declares fields it never sets (Fields is a
// declaration; Inject writes nothing).
type fieldsOnlyPropagator struct{ fields []string }

func (fieldsOnlyPropagator) Inject(context.Context, propagation.TextMapCarrier) {}
func (fieldsOnlyPropagator) Extract(ctx context.Context, _ propagation.TextMapCarrier) context.Context {
	return ctx
}
func (p fieldsOnlyPropagator) Fields() []string { return p.fields }

// sendingModes are the Transport's four ways of sending an attempt.
var sendingModes = []string{"client spans", "WithoutClientSpans", "over otelhttp", "no-op providers"}

// sendingModeOptions are the options and the base of one sending mode.
func sendingModeOptions(mode string, tp *sdktrace.TracerProvider, base http.RoundTripper) ([]otelretry.Option, http.RoundTripper) {
	opts := []otelretry.Option{otelretry.WithTracerProvider(tp), otelretry.WithMeterProvider(metricnoop.NewMeterProvider())}
	switch mode {
	case "WithoutClientSpans":
		opts = append(opts, otelretry.WithoutClientSpans())
	case "over otelhttp":
		base = otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tp))
	case "no-op providers":
		opts = append(opts, otelretry.WithTracerProvider(tracenoop.NewTracerProvider()))
	}
	return opts, base
}

// The state check's copy carries the write's idempotency key (the lookup
// finds the write by it), even where a propagator names the key's header
// among its Fields: the copy leaves out the propagators' fields, and took
// the key with them (a reviewer's find, after the copy began to leave the
// trace context out).
func TestAStateChecksCopyKeepsAKeyAPropagatorNames(t *testing.T) {
	for _, mode := range sendingModes {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// The caller's own key: a generated key's header named
				// among the propagators' fields is refused (see
				// TestAKeyHeaderThePropagatorsWriteIsIgnoredAndReported).
				req := post(t, t.Context(), "http://api.test/orders", "order")
				req.Header.Set("Idempotency-Key", "key-1")
				sent, seen := stateCheckCopyOf(t, mode, req,
					otelretry.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{},
						fieldsOnlyPropagator{fields: []string{"Idempotency-Key"}})),
					otelretry.WithRecordedIdempotencyKey())
				key := sent.Get("Idempotency-Key")
				if key == "" {
					t.Fatalf("the write went out without a key: %v", sent)
				}
				if got := seen.Get("Idempotency-Key"); got != key {
					t.Errorf("the state check's copy has Idempotency-Key %q, the write was sent with %q", got, key)
				}
			})
		})
	}
}

// keyValuesAnySpelling is every value h holds under name, in any spelling, sorted.
func keyValuesAnySpelling(h http.Header, name string) []string {
	var vs []string
	for k, v := range h {
		if strings.EqualFold(k, name) {
			vs = append(vs, v...)
		}
	}
	slices.Sort(vs)
	return vs
}

// stateCheckCopyOf runs one write whose outcome is unknown and returns
// the headers it was sent with and the state check copy's headers.
func stateCheckCopyOf(t *testing.T, mode string, req *http.Request, extra ...otelretry.Option) (sent, seen http.Header) {
	t.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	hook := func(_ context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
		seen = c.Request.Header.Clone()
		return otelretry.StateResult{State: attrs.StateUnknown}, nil
	}
	sc := scripted.New(scripted.Step{Hang: true})
	opts, base := sendingModeOptions(mode, tp, sc)
	opts = append(opts, otelretry.WithPropagators(propagation.TraceContext{}), otelretry.WithMaxAttempts(1),
		otelretry.WithAttemptTimeout(100*time.Millisecond), otelretry.WithStateCheck(hook))
	opts = append(opts, extra...)
	if _, err := otelretry.NewTransport(base, opts...).RoundTrip(req); err == nil {
		t.Fatal("want the outcome unknown")
	}
	calls := sc.Calls()
	if len(calls) != 1 {
		t.Fatalf("base called %d times, want 1", len(calls))
	}
	if seen == nil {
		t.Fatal("the hook did not run")
	}
	return calls[0].Header, seen
}

// A write that carries its key under both of net/http's spellings (the
// canonical one and the lower-case one, as an SDK writing the map
// directly does) is sent with both; the state check's copy carries every
// key value the write was sent with (it kept the lower-case spelling's
// alone: a reviewer's find).
func TestAStateChecksCopyKeepsBothSpellingsOfAKey(t *testing.T) {
	for _, mode := range sendingModes {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				req := post(t, t.Context(), "http://api.test/orders", "order")
				req.Header["Idempotency-Key"] = []string{"key-A"}
				req.Header["idempotency-key"] = []string{"key-B"}
				sent, seen := stateCheckCopyOf(t, mode, req, otelretry.WithRecordedIdempotencyKey())
				want := keyValuesAnySpelling(sent, "Idempotency-Key")
				if got := keyValuesAnySpelling(seen, "Idempotency-Key"); !slices.Equal(got, want) {
					t.Errorf("the state check's copy has Idempotency-Key values %q, the write was sent with %q (copy %v)", got, want, seen)
				}
			})
		})
	}
}
