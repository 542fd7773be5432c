// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// mixedOutageBase is a base for the mixed tests: every request is an outage
// answer (503 after its kind's delay), or a cut write for /cut, or a 200
// when ok is set. It counts the requests per kind.
type mixedOutageBase struct {
	mu    sync.Mutex
	calls map[string]int
	ok    atomic.Bool
}

func (b *mixedOutageBase) count(kind string) {
	b.mu.Lock()
	if b.calls == nil {
		b.calls = map[string]int{}
	}
	b.calls[kind]++
	b.mu.Unlock()
}

func (b *mixedOutageBase) total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range b.calls {
		n += c
	}
	return n
}

func (b *mixedOutageBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	kind := strings.TrimPrefix(r.URL.Path, "/")
	b.count(kind)
	d := 5 * time.Millisecond
	if kind == "hedged" {
		d = 60 * time.Millisecond
	}
	select {
	case <-time.After(d):
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	if kind == "cut" && !b.ok.Load() {
		return nil, errors.New("connection reset by peer")
	}
	status := http.StatusServiceUnavailable
	if kind == "verdict" {
		status = http.StatusInternalServerError
	}
	if b.ok.Load() {
		status = http.StatusOK
	}
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// Operations of every kind in flight together (hedged reads, keyed writes
// resent, a Classifier's verdict retries, cut writes resolved by a state
// check, a stacked layer's retries), over two Transports and a stacked
// layer sharing one Budget, in an outage: a fresh host's extra requests,
// whatever asked for them, are its two retries (docs/budget.md, "One
// admission point"; a reviewer's run, 50 and 200 operations).
func TestEveryKindOfExtraRequestInFlightTogetherPassesOneAdmissionPoint(t *testing.T) {
	for _, n := range []int{50, 200} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				budget := &otelretry.Budget{}
				base := &mixedOutageBase{}
				common := []otelretry.Option{otelretry.WithBudget(budget),
					otelretry.WithBackoff(otelretry.ConstantBackoff(10 * time.Millisecond))}
				hedged := otelretry.NewTransport(base, append(common,
					otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}))...)
				keyed := otelretry.NewTransport(base, append(common, otelretry.WithIdempotencyKeyContract(),
					otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification {
						if a.Request != nil && a.Request.URL.Path == "/verdict" {
							return otelretry.Retryable(0)
						}
						return otelretry.Classification{}
					}),
					otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
						return otelretry.StateResult{State: attrs.StateNotApplied}, nil
					}))...)
				stacked := otelretry.NewTransport(otelretry.NewTransport(base, common...), common...)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						<-start
						var (
							rt  http.RoundTripper
							req *http.Request
						)
						switch i % 5 {
						case 0:
							rt, req = hedged, get(t, context.Background(), "http://api.test/hedged")
						case 1:
							rt, req = keyed, post(t, context.Background(), "http://api.test/keyed", "{}")
							req.Header.Set("Idempotency-Key", fmt.Sprint("k", i))
						case 2:
							rt, req = keyed, get(t, context.Background(), "http://api.test/verdict")
						case 3:
							rt, req = keyed, post(t, context.Background(), "http://api.test/cut", "{}")
						case 4:
							rt, req = stacked, get(t, context.Background(), "http://api.test/stacked")
						}
						resp, err := rt.RoundTrip(req)
						if err == nil {
							resp.Body.Close()
						}
					})
				}
				close(start)
				wg.Wait()
				base.mu.Lock()
				calls := fmt.Sprint(base.calls)
				base.mu.Unlock()
				t.Logf("%d operations: %s", n, calls)
				if extra := base.total() - n; extra > 2 {
					t.Errorf("%d requests beyond the %d operations' first, want at most 2 (a fresh host's retries): %s", extra, n, calls)
				}
				req := get(t, context.Background(), "http://api.test/x")
				if got := budget.Available(req); got != 0 {
					t.Errorf("Available after the outage = %d, want 0", got)
				}
				// Recovery: six successes bring the host back to its full tokens.
				base.ok.Store(true)
				for range 6 {
					resp, err := hedged.RoundTrip(get(t, context.Background(), "http://api.test/plain"))
					if err == nil {
						resp.Body.Close()
					}
				}
				if got := budget.Available(req); got != 2 {
					t.Errorf("Available after six successes = %d, want 2 (a fresh host)", got)
				}
			})
		})
	}
}
