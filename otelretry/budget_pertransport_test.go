// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// The README's gotcha: one Transport per client, not per request. Ten GETs
// in an outage (every answer 503) send 12 requests through one Transport
// (the budget's two retries per host), 30 through a new Transport per
// request (each with a budget of its own: the bound multiplies), and 12
// again through a Transport per request sharing one Budget (a reviewer's
// run).
func TestATransportPerRequestMultipliesTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		outage := func(calls *atomic.Int64) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				calls.Add(1)
				return &http.Response{StatusCode: 503, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
			})
		}
		get := func(rt http.RoundTripper) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/x", nil)
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		opts := func(more ...otelretry.Option) []otelretry.Option {
			return quietOptions(append([]otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, more...)...)
		}
		var shared, perRequest, perRequestOneBudget atomic.Int64
		one := otelretry.NewTransport(outage(&shared), opts()...)
		budget := &otelretry.Budget{}
		for range 10 {
			get(one)
			get(otelretry.NewTransport(outage(&perRequest), opts()...))
			get(otelretry.NewTransport(outage(&perRequestOneBudget), opts(otelretry.WithBudget(budget))...))
		}
		if shared.Load() != 12 || perRequest.Load() != 30 || perRequestOneBudget.Load() != 12 {
			t.Errorf("10 GETs in an outage: %d requests through one Transport, %d through one per request, %d through one per request sharing a Budget; want 12, 30, 12",
				shared.Load(), perRequest.Load(), perRequestOneBudget.Load())
		}
	})
}
