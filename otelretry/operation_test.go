// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// countingRoundTripper counts the RoundTrip calls a layer above makes.
type countingRoundTripper struct {
	rt    http.RoundTripper
	calls atomic.Int32
}

func (c *countingRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	c.calls.Add(1)
	return c.rt.RoundTrip(r)
}

// untilContextDone is the loop many SDKs run above the transport (stripe-go's
// among them): it calls again, after any error, until its context is done.
func untilContextDone(ctx context.Context, client *http.Client, newReq func(context.Context) *http.Request) error {
	for {
		resp, err := client.Do(newReq(ctx))
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
	}
}

// When the caller's deadline is the one that ends an operation, RoundTrip
// returns only once the caller's context is done: a loop above that stops
// only on ctx.Err() then makes no second call in that context, whose error
// would replace the first, and the caller's error keeps the write's
// unknown outcome. Over hundreds of runs on loopback, where the caller's
// timer and the operation's race for the same instant. A create the
// deadline cut before it had a connection was never sent, and its error
// says so (it does not match ErrOutcomeUnknown); every create the server
// executed ends with its outcome unknown.
func TestCallerDeadlineLeavesNoRoomForAnotherCall(t *testing.T) {
	var mu sync.Mutex
	executed := map[string]bool{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		executed[r.Header.Get("X-Run")] = true
		mu.Unlock()
		select { // the write is applied; its answer never comes in time
		case <-r.Context().Done():
		case <-release:
		}
	}))
	base := srv.Client().Transport.(*http.Transport).Clone()
	above := &countingRoundTripper{rt: otelretry.NewTransport(base, otelretry.WithoutBudget())}
	client := &http.Client{Transport: above}

	runs := 200 / raceScale
	unknown := make([]bool, runs)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 20)
	for i := range runs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
			defer cancel()
			err := untilContextDone(ctx, client, func(ctx context.Context) *http.Request {
				r := post(t, ctx, srv.URL+"/orders", "order")
				r.Header.Set("X-Run", fmt.Sprint(i))
				return r
			})
			var oe *otelretry.Error
			if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &oe) ||
				oe.Outcome != attrs.OutcomeDeadlineExceeded || oe.Reason != attrs.ReasonCaller {
				t.Errorf("err = %v; want deadline_exceeded (caller), matching context.DeadlineExceeded", err)
			}
			unknown[i] = errors.Is(err, otelretry.ErrOutcomeUnknown)
		})
	}
	wg.Wait()
	close(release)
	base.CloseIdleConnections()
	srv.Close() // waits for the handlers: every create that reached the server is counted
	if got := above.calls.Load(); got != int32(runs) {
		t.Errorf("the loop above made %d RoundTrip calls for %d creates: %d extra", got, runs, int(got)-runs)
	}
	unsent := 0
	for i, u := range unknown {
		if executed[fmt.Sprint(i)] && !u {
			t.Errorf("run %d: the server executed the create, but the caller's error does not match ErrOutcomeUnknown", i)
		}
		if !u {
			unsent++
		}
	}
	t.Logf("%d of %d creates executed; %d cut before they had a connection", len(executed), runs, unsent)
}

// In virtual time: the operation ends at the caller's deadline with the
// caller's context done, for a write in flight (unknown) and for a read;
// an operation that ends because a pause cannot fit before the caller's
// deadline returns at once, with the caller's context still alive.
func TestCallerDeadlineTiming(t *testing.T) {
	cases := []struct {
		name        string
		steps       []scripted.Step
		method      string
		wantAt      time.Duration
		wantDone    bool
		wantUnknown bool
		wantReason  attrs.Reason
	}{
		{"a write in flight", []scripted.Step{{Hang: true}}, http.MethodPost, 50 * time.Millisecond, true, true, attrs.ReasonCaller},
		{"a read in flight", []scripted.Step{{Hang: true}}, http.MethodGet, 50 * time.Millisecond, true, false, attrs.ReasonCaller},
		{"a pause that cannot fit", []scripted.Step{{Status: 503, Header: http.Header{"Retry-After": {"10"}}}}, http.MethodGet, 0, false, false, attrs.ReasonDeadline},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tc.steps, otelretry.WithoutBudget())
				ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
				defer cancel()
				var results otelretry.Results
				req, _ := http.NewRequestWithContext(otelretry.WithResults(ctx, &results), tc.method, "http://api.test/orders", nil)
				start := time.Now()
				resp, err := h.transprt.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				if got := time.Since(start); got != tc.wantAt {
					t.Errorf("RoundTrip returned after %v, want %v", got, tc.wantAt)
				}
				if done := ctx.Err() != nil; done != tc.wantDone {
					t.Errorf("caller's context done when RoundTrip returned: %v, want %v", done, tc.wantDone)
				}
				last, _ := results.Last()
				if last.Outcome != attrs.OutcomeDeadlineExceeded || last.Reason != tc.wantReason || last.OutcomeUnknown != tc.wantUnknown {
					t.Errorf("result = %+v; want deadline_exceeded (%s), unknown %v", last, tc.wantReason, tc.wantUnknown)
				}
				if tc.wantUnknown != errors.Is(err, otelretry.ErrOutcomeUnknown) {
					t.Errorf("err = %v; ErrOutcomeUnknown want %v", err, tc.wantUnknown)
				}
			})
		})
	}
}
