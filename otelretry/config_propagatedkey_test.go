// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/propagation"

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
