// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/otelretry"
)

type noPropagator struct{}

func (noPropagator) Inject(context.Context, propagation.TextMapCarrier) {}
func (noPropagator) Extract(ctx context.Context, _ propagation.TextMapCarrier) context.Context {
	return ctx
}
func (noPropagator) Fields() []string { return nil }

// WithPropagators "sets the propagators that inject trace context into
// each attempt's headers. Nil is ignored". An empty composite propagator
// (propagation.NewCompositeTextMapPropagator(), a non-nil interface
// holding a slice of none) is a propagator that injects nothing, not nil:
// the wire must carry no traceparent, whatever the global propagator.
func TestAnEmptyCompositePropagatorIsNotNil(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { tp.Shutdown(context.Background()) })

	for _, c := range []struct {
		name string
		p    propagation.TextMapPropagator
	}{
		{"struct no-op (control)", noPropagator{}},
		{"NewCompositeTextMapPropagator()", propagation.NewCompositeTextMapPropagator()},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got http.Header
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				got = r.Header.Clone()
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
			})
			rt := otelretry.NewTransport(base, otelretry.WithTracerProvider(tp), otelretry.WithPropagators(c.p), otelretry.WithoutBudget())
			req, err := http.NewRequest(http.MethodGet, "http://dependency.test/x", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if tp := got.Get("Traceparent"); tp != "" {
				t.Errorf("WithPropagators(%s): the wire carries traceparent %q: the global propagator was used", c.name, tp)
			}
		})
	}
}
