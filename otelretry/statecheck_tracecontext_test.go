// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"testing"
	"testing/synctest"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The state check's copy of the write carries no trace context, in any
// sending mode: the write's (its attempt span's, ended by then) is not the
// lookup's, whose client injects its own. Where otelretry injects into the
// attempt's request itself (WithoutClientSpans, over otelhttp's
// Transport, the no-op providers), the copy carried the write's
// traceparent (a reviewer's find); a caller's own, in any spelling, is
// left out too.
func TestAStateChecksCopyCarriesNoTraceContext(t *testing.T) {
	for _, mode := range sendingModes {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, caller := sdktrace.NewTracerProvider().Tracer("caller").Start(t.Context(), "caller")
				defer caller.End()
				req := post(t, ctx, "http://api.test/orders", "order")
				req.Header["TRACEPARENT"] = []string{"00-11111111111111111111111111111111-2222222222222222-01"}
				sent, seen := stateCheckCopyOf(t, mode, req,
					otelretry.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})))
				if len(keyValuesAnySpelling(sent, "Traceparent")) == 0 {
					t.Fatalf("the write went out without a trace context: %v", sent)
				}
				for k := range seen {
					if http.CanonicalHeaderKey(k) == "Traceparent" || http.CanonicalHeaderKey(k) == "Baggage" {
						t.Errorf("the state check's copy carries %s %q: the write's trace context", k, seen[k])
					}
				}
			})
		})
	}
}
