// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/layers.md: one Budget shared by an otelretry Transport and another
// over it counts every request beyond an operation's first once, in
// whichever layer asks for it: 8 GETs in flight together against an
// outage send the 8 first attempts and the 2 retries a fresh host allows,
// as one Transport would.
func TestABudgetSharedByStackedTransportsBoundsBothLayers(t *testing.T) {
	const operations = 8
	var arrived, received atomic.Int32
	allIn := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrived.Add(1) == operations {
			close(allIn)
		}
		select { // the first attempts are answered together
		case <-allIn:
		case <-r.Context().Done():
		}
		received.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	base := &http.Transport{MaxConnsPerHost: 2 * operations}
	defer base.CloseIdleConnections()
	budget := &otelretry.Budget{}
	pause := otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))
	inner := otelretry.NewTransport(base, otelretry.WithBudget(budget), pause)
	outer := otelretry.NewTransport(inner, otelretry.WithBudget(budget), pause)
	var wg sync.WaitGroup
	for range operations {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
			resp, err := outer.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	if n := received.Load(); n != operations+2 {
		t.Errorf("the server received %d requests for %d operations in an outage; want %d", n, operations, operations+2)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	if n := budget.Available(req); n != 0 {
		t.Errorf("Available %d after the outage, want 0", n)
	}
}
