// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"testing"
)

// docs/layers.md: each otelretry layer given a Throttle asks it at its own
// admission point, so one Throttle given to stacked layers counts and
// draws once per layer for the same request (refusing it with 1-(1-p)^n
// for n layers); given to the outer alone, it counts each of the outer's
// attempts, hedges and resends once, and the layer below asks nothing.
// Four GETs, one after another, each a request the base answers 200.
func TestAThrottleCountsOncePerLayerItIsGivenTo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layers []bool // from the innermost: given the throttle
		counts int    // per request
	}{
		{"outer alone", []bool{false, true}, 1},
		{"inner alone", []bool{true, false}, 1},
		{"both", []bool{true, true}, 2},
		{"three layers", []bool{true, true, true}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var draws int
			th := &Throttle{rand: func() float64 { draws++; return 1 }} // never refuses: counts the draws
			base := newWavesBase(0)
			var rt http.RoundTripper = base
			for _, given := range tc.layers {
				opts := append(quietInternal(), WithoutBudget())
				if given {
					opts = append(opts, WithThrottle(th))
				}
				rt = NewTransport(rt, opts...)
			}
			const operations = 4
			for range operations {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://stacked.test/v1", nil)
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			if c := base.calls.Load(); c != operations {
				t.Fatalf("base saw %d calls, want %d", c, operations)
			}
			want := operations * tc.counts
			if r, a := throttleCounts(th, "stacked.test"); int(r) != want || int(a) != want || draws != want {
				t.Errorf("the throttle counted %v requests, %v accepts, drew %d times for %d requests answered 200; want %d each",
					r, a, draws, operations, want)
			}
		})
	}
}
