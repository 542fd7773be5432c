// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"testing"
)

// docs/layers.md: "A Budget (or a Throttle) shared by the two layers
// counts each request once, in the layer that asks for it". Four GETs,
// one after another, through an otelretry Transport stacked on another,
// both given one Throttle; each GET is one request the base answers 200:
// the throttle should count 4 requests and 4 accepts, and ask for each
// request once.
func TestAThrottleSharedByStackedTransportsCountsEachRequestOnce(t *testing.T) {
	var draws int
	th := &Throttle{rand: func() float64 { draws++; return 1 }} // never refuses: counts the admissions
	base := newWavesBase(0)
	inner := NewTransport(base, append(quietInternal(), WithThrottle(th), WithoutBudget())...)
	outer := NewTransport(inner, append(quietInternal(), WithThrottle(th), WithoutBudget())...)
	const operations = 4
	for range operations {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://stacked.test/v1", nil)
		resp, err := outer.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if c := base.calls.Load(); c != operations {
		t.Fatalf("base saw %d calls, want %d", c, operations)
	}
	if r, a := throttleCounts(th, "stacked.test"); r != operations || a != operations {
		t.Errorf("throttle counted %v requests, %v accepts for %d requests the base answered 200; want %d, %d",
			r, a, operations, operations, operations)
	}
	if draws != operations {
		t.Errorf("the throttle was asked %d times for %d requests; want %d (each ask may refuse: two asks refuse a request with 1-(1-p)^2)",
			draws, operations, operations)
	}
}
