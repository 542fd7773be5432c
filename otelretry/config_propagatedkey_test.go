// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/otelretry"
)

// An idempotency key's header named as a field the propagators write is
// written over on every attempt: a key per attempt, so a keyed write
// retried after a 503 was a new write to the server, and nothing was
// reported (a reviewer's find). Such a name is ignored and reported, in
// any spelling, as WithAttemptHeader's and WithOperationIDHeader's are;
// the write is then no keyed write, and is not resent.
func TestAKeyHeaderThePropagatorsWriteIsIgnoredAndReported(t *testing.T) {
	props := otelretry.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	for _, c := range []struct {
		opt  otelretry.Option
		want string
	}{
		{otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "traceparent"}), `WithIdempotencyKeys("Traceparent") ignored: want a header the propagators do not write`},
		{otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "BAGGAGE", Value: otelretry.DraftIdempotencyKey().Value}), `WithIdempotencyKeys("Baggage") ignored`},
	} {
		errs := captureOtelErrors(t)
		otelretry.NewTransport(nil, props, c.opt)
		if got := errs(); len(got) != 1 || !strings.Contains(got[0].Error(), c.want) {
			t.Errorf("reported %v; want one naming %s", got, c.want)
		}
	}

	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	})
	tr := otelretry.NewTransport(base, props, otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "traceparent"}),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget())
	resp, err := tr.RoundTrip(post(t, t.Context(), "http://api.test/orders", "x"))
	if err == nil {
		resp.Body.Close()
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("a POST under an ignored key header sent %d times; want once, as a write without a key", n)
	}
}

// A contract's or a recorded key's header named as a field the
// propagators write is ignored and reported too: the propagators' carrier
// keeps them off a key's header, so the field (the trace context) was lost
// on every request, with nothing reported (a reviewer's find, after the
// carrier came). The field then goes out on every attempt.
func TestAContractHeaderThePropagatorsWriteIsIgnoredAndReported(t *testing.T) {
	for name, opt := range map[string]otelretry.Option{
		"contract": otelretry.WithIdempotencyKeyContract("Traceparent"),
		"recorded": otelretry.WithRecordedIdempotencyKey("traceparent"),
	} {
		for _, mode := range []string{"client spans", "WithoutClientSpans"} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				errs := captureOtelErrors(t)
				var mu sync.Mutex
				var sent []string
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					mu.Lock()
					defer mu.Unlock()
					sent = append(sent, r.Header.Get("Traceparent"))
					code := http.StatusServiceUnavailable
					if len(sent) == 2 {
						code = http.StatusOK
					}
					return &http.Response{StatusCode: code, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
				})
				opts, b := sendingModeOptions(mode, sdktrace.NewTracerProvider(), base)
				opts = append(opts, otelretry.WithPropagators(propagation.TraceContext{}), opt,
					otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget())
				rt := otelretry.NewTransport(b, opts...)
				if got := errs(); len(got) != 1 || !strings.Contains(strings.ToLower(got[0].Error()), `("traceparent") ignored`) {
					t.Errorf("reported %v; want the header ignored", got)
				}
				resp, err := rt.RoundTrip(get(t, t.Context(), "http://api.test/orders"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				mu.Lock()
				defer mu.Unlock()
				if len(sent) != 2 || sent[0] == "" || sent[1] == "" {
					t.Errorf("traceparent sent %q; want the trace context on both attempts", sent)
				}
			})
		}
	}
}
