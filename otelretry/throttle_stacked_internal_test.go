// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"testing"
)

// docs/layers.md: a Throttle given to an otelretry Transport and to one
// stacked over it, directly, is asked and counts in the layer below alone.
// Four GETs, one after another, each a request the base answers 200, over
// two and three layers (the middle one with and without the throttle):
// the throttle counts 4 requests and 4 accepts, and draws 4 times.
func TestAThrottleSharedByStackedTransportsCountsEachRequestOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layers []bool // from the innermost: given the throttle
	}{
		{"two layers", []bool{true, true}},
		{"three layers", []bool{true, true, true}},
		{"three layers, the middle without", []bool{true, false, true}},
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
			if r, a := throttleCounts(th, "stacked.test"); r != operations || a != operations || draws != operations {
				t.Errorf("the throttle counted %v requests, %v accepts, drew %d times for %d requests answered 200; want %d each",
					r, a, draws, operations, operations)
			}
		})
	}
}
