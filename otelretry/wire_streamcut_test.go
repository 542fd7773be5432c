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
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// countedStreamedBody is a streamed request body that counts its closes; a stalling
// one blocks its Read until it is closed.
type countedStreamedBody struct {
	r       io.Reader
	stall   bool
	mu      *sync.Mutex
	closes  *int
	closed  chan struct{}
	closeMu sync.Once
}

func (b *countedStreamedBody) Read(p []byte) (int, error) {
	if b.stall {
		<-b.closed
		return 0, errors.New("read on closed body")
	}
	select {
	case <-b.closed:
		return 0, errors.New("read on closed body")
	default:
	}
	return b.r.Read(p)
}

func (b *countedStreamedBody) Close() error {
	b.mu.Lock()
	*b.closes++
	b.mu.Unlock()
	b.closeMu.Do(func() { close(b.closed) })
	return nil
}

type streamedBodies struct {
	mu     sync.Mutex
	closes []*int
	made   []*countedStreamedBody
}

func (c *streamedBodies) all() []*countedStreamedBody {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*countedStreamedBody(nil), c.made...)
}

func (c *streamedBodies) next(stall bool) *countedStreamedBody {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := new(int)
	c.closes = append(c.closes, n)
	b := &countedStreamedBody{r: strings.NewReader("payload"), stall: stall, mu: &c.mu, closes: n, closed: make(chan struct{})}
	c.made = append(c.made, b)
	return b
}

// 32 Repeatable PUTs with streamed bodies and GetBody in flight together
// over one hedging Transport, with an attempt timeout shorter than some
// uploads, some copies stalling, some answering (some before reading
// their body, as net/http may), some callers canceling: every body is
// closed exactly once, no RoundTrip outlives its deadline, and no
// goroutine is left.
func TestStreamedHedgedPutsUnderConcurrency(t *testing.T) {
	for seed := range 4 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var bodies streamedBodies
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					// mode is carried by the request's header.
					mode := r.Header.Get("X-Mode")
					body := r.Body
					switch mode {
					case "stall":
						// Reads (net/http HTTP/1 waits for its Read of the body
						// even past its context).
						_, err := io.Copy(io.Discard, body)
						body.Close()
						if err == nil {
							return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
						}
						return nil, err
					case "slow":
						time.Sleep(30 * time.Millisecond)
						io.Copy(io.Discard, body)
						body.Close()
						return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
					case "early":
						// Answers before it read the body, writes it on.
						go func() {
							io.Copy(io.Discard, body)
							body.Close()
						}()
						return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
					}
					io.Copy(io.Discard, body)
					body.Close()
					return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
				})
				tr := otelretry.NewTransport(base,
					otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxHedges: 2, MaxShare: 1}),
					otelretry.WithAttemptTimeout(20*time.Millisecond),
					otelretry.WithDeadline(200*time.Millisecond),
					otelretry.WithBudget(&otelretry.Budget{Tokens: 1000, TokenRatio: 1}))
				var wg sync.WaitGroup
				for i := range 32 {
					wg.Go(func() {
						k := (i + seed) % 6
						ctx, cancel := context.WithCancel(otelretry.WithIntent(context.Background(), otelretry.Intent{Repeatable: true}))
						defer cancel()
						if k == 5 {
							time.AfterFunc(time.Duration(i%7+1)*3*time.Millisecond, cancel)
						}
						req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://api.test/x", nil)
						modes := []string{"stall", "slow", "early", "plain", "stall", "stall"}
						mode := modes[k]
						// The caller's body stalls in mode stall; GetBody copies
						// alternate stalling and answering.
						req.Body = bodies.next(mode == "stall")
						req.ContentLength = int64(len("payload"))
						var copies int
						var mu sync.Mutex
						req.GetBody = func() (io.ReadCloser, error) {
							mu.Lock()
							copies++
							stall := mode == "stall" && copies%2 == 0
							mu.Unlock()
							return bodies.next(stall), nil
						}
						req.Header.Set("X-Mode", mode)
						start := time.Now()
						resp, err := tr.RoundTrip(req)
						if el := time.Since(start); el > 200*time.Millisecond {
							t.Errorf("op %d (%s): RoundTrip took %v, past its 200ms deadline", i, mode, el)
						}
						if err == nil {
							io.ReadAll(resp.Body)
							resp.Body.Close()
						}
					})
				}
				wg.Wait()
				time.Sleep(time.Second)
				synctest.Wait()
				bodies.mu.Lock()
				for i, n := range bodies.closes {
					if *n != 1 {
						t.Errorf("body %d of %d closed %d times, want once", i, len(bodies.closes), *n)
					}
				}
				bodies.mu.Unlock()
			})
		})
	}
}
