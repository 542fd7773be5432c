// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// letGoOfPreparing "gives back its number and tokens at once" for the
// hedge being prepared when the race is over, and the loop gives back
// "once per hedge" (race.giveBack). A race won while its hedge is still
// being prepared lets go of it twice: in cancel, on the win, and again
// once the loop ends (its preparation is not among the attempts running).
// The hedge's hedge-rate token must come back once: the dependency ends
// with what it had plus what the operation earned, never one more (a
// reviewer's mutant, dropping the givenBack guard, passed every test
// before this one).
func TestAHedgeStillPreparedWhenItsRaceIsWonGivesItsTokenBackOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 0.05 // a burst of 5
		var slow atomic.Bool
		release := make(chan struct{})
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			if slow.Load() {
				select {
				case <-r.Context().Done():
					return nil, r.Context().Err()
				case <-time.After(50 * time.Millisecond):
				}
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		prep := func(_ *http.Request, attempt int) error {
			if attempt == 2 {
				<-release
			}
			return nil
		}
		tr := NewTransport(base, WithPrepareAttempt(prep),
			WithHedging(Hedging{Delay: 10 * time.Millisecond, MaxHedges: 1, MaxShare: rate}))
		call := func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.test/x", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			resp.Body.Close()
		}
		tokens := func() (sum float64, n int) {
			h := tr.shared.hedger
			h.mu.Lock()
			defer h.mu.Unlock()
			for _, e := range h.deps {
				sum += e.Value.(*dependency).tokens
				n++
			}
			return sum, n
		}
		call() // places the dependency, no hedge
		h := tr.shared.hedger
		h.mu.Lock()
		for _, e := range h.deps {
			e.Value.(*dependency).tokens = 1 // one hedge left, far under the burst
		}
		h.mu.Unlock()

		slow.Store(true)
		call() // hedged at 10 ms; the hedge still prepared when attempt 1 wins at 50 ms
		close(release)
		synctest.Wait()

		got, n := tokens()
		if want := 1 + rate; n != 1 || got < want-1e-9 || got > want+1e-9 {
			t.Errorf("hedge-rate tokens = %v (%d dependencies), want %v: the unsent hedge's token given back once", got, n, want)
		}
	})
}
