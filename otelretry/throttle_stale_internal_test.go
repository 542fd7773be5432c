// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The throttle counts every answer other operations gave within its
// window. A hedged race whose first answer's Classifier is slower than the
// window (500 ms, the window docs/benchmarks.md uses) hands the throttle a
// reading taken when the race's success came (asItStoodAt), a window in
// the past. The throttle filed that count in the slot of the past reading,
// whose ring index held a recent slot, and emptied it: the 200 that
// another operation got 90 ms before, well within the window, was no
// longer counted (nor were the race's own answers, filed out of the
// window). Such a reading now counts in the newest slot.
func TestAStaleRaceReadingKeepsAnotherOperationsCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := &Throttle{Window: 500 * time.Millisecond, rand: func() float64 { return 0.999 }} // admits all
		var aCalls atomic.Int32
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			status, wait := http.StatusOK, 30*time.Millisecond // /b: a 200 after 30 ms
			if r.URL.Path == "/a" {
				wait = 20 * time.Millisecond
				if aCalls.Add(1) == 1 { // the first attempt: a 503, slow to classify
					status = http.StatusServiceUnavailable
					h.Set("X-Slow", "1")
				} // the hedge, sent at 10 ms: a 200 at 30 ms
			}
			select {
			case <-time.After(wait):
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
			return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
		})
		slow := func(a Answer) Classification {
			if a.Header.Get("X-Slow") != "" {
				time.Sleep(600 * time.Millisecond)
			}
			return Classification{}
		}
		tr := NewTransport(base, WithoutBudget(), WithThrottle(th), WithClassifier(slow),
			WithHedging(Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))
		get := func(path string) {
			req, _ := http.NewRequest(http.MethodGet, "http://api.test"+path, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return
			}
			resp.Body.Close()
		}
		var wg sync.WaitGroup
		wg.Go(func() { get("/a") })
		wg.Go(func() { time.Sleep(500 * time.Millisecond); get("/b") }) // its 200 counted at 530 ms
		wg.Wait()
		synctest.Wait()
		th.mu.Lock()
		at, slot := th.clock(time.Now())
		requests, accepts := th.deps["api.test"].Value.(*throttleDep).counts(slot)
		th.mu.Unlock()
		if requests < 1 || accepts < 1 {
			t.Errorf("at %v, the window of 500 ms holds %v requests, %v accepts; want at least /b's 200, answered and counted at 530 ms", at, requests, accepts)
		}
	})
}
