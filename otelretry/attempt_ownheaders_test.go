// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/otelretry"
)

// writesHeaders is a propagator that writes a value of its own, new on
// every Inject, into each of names, whatever its Fields say.
type writesHeaders struct {
	names  []string
	fields []string
	n      *atomic.Int32
}

func (p writesHeaders) Inject(_ context.Context, c propagation.TextMapCarrier) {
	v := "prop-" + strconv.Itoa(int(p.n.Add(1)))
	for _, name := range p.names {
		c.Set(name, v)
	}
}

func (p writesHeaders) Extract(ctx context.Context, _ propagation.TextMapCarrier) context.Context {
	return ctx
}

func (p writesHeaders) Fields() []string { return p.fields }

// The headers otelretry adds to every attempt (the idempotency key, the
// operation's id) go out as otelretry set them, whatever a propagator
// writes: one whose Fields leave a header out (or a global set after
// NewTransport, whose Fields NewTransport could not read) wrote over the
// key on each attempt, so a keyed write retried after a 503 went out under
// a new "key" each time (a reviewer's find). In every sending mode.
func TestThePropagatorsCannotWriteOverAnAttemptsOwnHeaders(t *testing.T) {
	for _, mode := range sendingModes {
		t.Run(mode, func(t *testing.T) {
			var mu sync.Mutex
			var keys, ids []string
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				mu.Lock()
				defer mu.Unlock()
				keys, ids = append(keys, r.Header.Get("Idem-Key")), append(ids, r.Header.Get("X-Op"))
				code := http.StatusServiceUnavailable
				if len(keys) == 3 {
					code = http.StatusOK
				}
				return &http.Response{StatusCode: code, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
			})
			opts, b := sendingModeOptions(mode, sdktrace.NewTracerProvider(), base)
			opts = append(opts,
				otelretry.WithPropagators(writesHeaders{names: []string{"idem-key", "x-op"}, fields: []string{"traceparent"}, n: new(atomic.Int32)}),
				otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{Name: "Idem-Key"}), otelretry.WithOperationIDHeader("X-Op"),
				otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget())
			resp, err := otelretry.NewTransport(b, opts...).RoundTrip(post(t, otelretry.WithOperationID(t.Context(), "op-9"), "http://api.test/orders", "x"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			if len(keys) != 3 || keys[0] == "" || keys[1] != keys[0] || keys[2] != keys[0] || len(keys[0]) != 32 {
				t.Errorf("keys sent %q; want one generated key on all three attempts", keys)
			}
			for _, id := range ids {
				if id != "op-9" {
					t.Errorf("X-Op sent %q; want the operation's id on every attempt", ids)
					break
				}
			}
		})
	}
}
