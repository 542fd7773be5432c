// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
)

// docs/budget.md: an attempt counts once it ends; one the throttle admitted
// that was never sent (its PrepareAttemptFunc failed) counts neither way:
// the dependency saw nothing of it (a reviewer's reading, written down).
func TestAnAdmittedAttemptNeverSentCountsNeitherWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := &Throttle{rand: func() float64 { return 1 }} // never refuses: counts alone
		var calls int
		base := baseFunc(func(r *http.Request) (*http.Response, error) {
			calls++
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
		})
		refuse := errors.New("no token")
		rt := NewTransport(base, append(quietInternal(), WithThrottle(th), WithoutBudget(),
			WithPrepareAttempt(func(r *http.Request, _ int) error {
				if r.Header.Get("X-Refuse") != "" {
					return refuse
				}
				return nil
			}))...)
		const url = "http://unsent.test/v1"

		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("X-Refuse", "1")
		if _, err := rt.RoundTrip(req); !errors.Is(err, refuse) {
			t.Fatalf("a failed preparation: err = %v, want it", err)
		}
		if calls != 0 {
			t.Fatalf("the base was called %d times; want none", calls)
		}
		if r, a := throttleCounts(th, "unsent.test"); r != 0 || a != 0 {
			t.Errorf("after an attempt never sent: %v requests, %v accepts; want 0, 0", r, a)
		}

		req, _ = http.NewRequest(http.MethodGet, url, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if r, a := throttleCounts(th, "unsent.test"); r != 1 || a != 1 {
			t.Errorf("after one answered: %v requests, %v accepts; want 1, 1", r, a)
		}
	})
}
