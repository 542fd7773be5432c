// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// Hedged requests that carry a body: every attempt of a race sends the
// caller's bytes, and every body handed out is closed once (a reviewer's
// tests, adopted as they held).

// bodyBase reads each attempt's body whole, records it, and answers: the
// first call to a path (or the first call of all) after 100ms or its
// cancel, the others after 5ms.
type bodyBase struct {
	mu     sync.Mutex
	bodies [][]byte
	cls    []int64
	errs   []error
	calls  atomic.Int32
	seen   sync.Map
}

func (b *bodyBase) RoundTrip(req *http.Request) (*http.Response, error) {
	n := b.calls.Add(1)
	var got []byte
	var rerr error
	if req.Body != nil {
		got, rerr = io.ReadAll(req.Body)
		req.Body.Close()
	}
	b.mu.Lock()
	b.bodies = append(b.bodies, got)
	b.cls = append(b.cls, req.ContentLength)
	b.errs = append(b.errs, rerr)
	b.mu.Unlock()
	d := 5 * time.Millisecond
	first := false
	if p := req.URL.Path; strings.HasPrefix(p, "/s/") {
		_, seen := b.seen.LoadOrStore(p, true)
		first = !seen
	}
	if n == 1 || first {
		d = 100 * time.Millisecond
	}
	select {
	case <-time.After(d):
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(fmt.Sprint(n))), Header: http.Header{}, Request: req, ContentLength: -1}, nil
}

// closeCountingBody counts its Closes.
type closeCountingBody struct {
	io.Reader
	closes *atomic.Int32
}

func (c *closeCountingBody) Close() error { c.closes.Add(1); return nil }

func hedgedTransport(b http.RoundTripper, opts ...otelretry.Option) http.RoundTripper {
	opts = append([]otelretry.Option{otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1})}, opts...)
	return otelretry.NewTransport(b, opts...)
}

func repeatablePost(t *testing.T, ctx context.Context, data []byte, withGetBody bool, cl int64, closes *atomic.Int32) *http.Request {
	t.Helper()
	ctx = otelretry.WithIntent(ctx, otelretry.Intent{Repeatable: true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/search", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Body = &closeCountingBody{Reader: bytes.NewReader(data), closes: closes}
	req.ContentLength = cl
	if withGetBody {
		req.GetBody = func() (io.ReadCloser, error) {
			return &closeCountingBody{Reader: bytes.NewReader(data), closes: closes}, nil
		}
	}
	return req
}

// Every attempt of a race sends the caller's bytes and Content-Length,
// and each body handed out is closed once; a body without GetBody is
// hedged within the default buffer (64 KiB a request, WithBodyBuffer),
// and one past it, or of unknown length, is not.
func TestAHedgedRepeatablePostSendsIdenticalBodies(t *testing.T) {
	type tc struct {
		name      string
		size      int
		getBody   bool
		cl        int // -2: len
		wantCalls int
	}
	cases := []tc{
		{"0 GetBody", 0, true, -2, 2},
		{"1 GetBody", 1, true, -2, 2},
		{"64KiB GetBody", 64 << 10, true, -2, 2},
		{"1MiB GetBody", 1 << 20, true, -2, 2},
		{"1 buffered", 1, false, -2, 2},
		{"64KiB buffered", 64 << 10, false, -2, 2},
		{"64KiB+1 not buffered", 64<<10 + 1, false, -2, 1},
		{"unknown length not buffered", 10, false, -1, 1},
		{"unknown length GetBody", 1 << 20, true, -1, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				data := bytes.Repeat([]byte("abcdefg"), c.size/7+1)[:c.size]
				b := &bodyBase{}
				rt := hedgedTransport(b)
				var closes atomic.Int32
				cl := int64(c.size)
				if c.cl == -1 {
					cl = -1
				}
				req := repeatablePost(t, t.Context(), data, c.getBody, cl, &closes)
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				synctest.Wait()
				b.mu.Lock()
				defer b.mu.Unlock()
				if len(b.bodies) != c.wantCalls {
					t.Fatalf("%d calls, want %d", len(b.bodies), c.wantCalls)
				}
				for i, got := range b.bodies {
					if !bytes.Equal(got, data) || b.errs[i] != nil {
						t.Errorf("attempt %d sent %d bytes (err %v), want the caller's %d", i+1, len(got), b.errs[i], len(data))
					}
					if b.cls[i] != cl {
						t.Errorf("attempt %d ContentLength %d, want %d", i+1, b.cls[i], cl)
					}
				}
				opened := int32(1)
				if c.getBody && c.wantCalls == 2 {
					opened = 2
				}
				if n := closes.Load(); n != opened {
					t.Errorf("%d closes of %d bodies handed out, want each closed once", n, opened)
				}
			})
		})
	}
}

// 200 races with bodies in flight together: every call's bytes are its
// Content-Length's, the rate's burst bounds the hedges, and every body
// handed out is closed.
func TestManyHedgedRacesWithBodiesInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &bodyBase{}
		rt := hedgedTransport(b, otelretry.WithBudget(&otelretry.Budget{Tokens: 1000, TokenRatio: 1}))
		var wg sync.WaitGroup
		var closes, opens atomic.Int32
		const n = 200
		for i := range n {
			wg.Go(func() {
				data := bytes.Repeat([]byte{byte(i)}, 100+i)
				req := repeatablePost(t, t.Context(), data, i%2 == 0, int64(len(data)), &closes)
				opens.Add(1)
				if gb := req.GetBody; gb != nil {
					req.GetBody = func() (io.ReadCloser, error) { opens.Add(1); return gb() }
				}
				req.URL.Path = fmt.Sprintf("/s/%d", i)
				resp, err := rt.RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			})
		}
		wg.Wait()
		synctest.Wait()
		b.mu.Lock()
		defer b.mu.Unlock()
		for i, got := range b.bodies {
			if b.errs[i] != nil || int64(len(got)) != b.cls[i] {
				t.Errorf("call %d: %d bytes, ContentLength %d, err %v", i, len(got), b.cls[i], b.errs[i])
			}
		}
		t.Logf("%d operations, %d calls, %d closes", n, len(b.bodies), closes.Load())
		// The rate's burst (100 at MaxShare 1) bounds the hedges: 100 of 200.
		if len(b.bodies) != n+100 {
			t.Errorf("%d calls, want %d: the rate's burst of hedges", len(b.bodies), n+100)
		}
		if c, o := closes.Load(), opens.Load(); c != o {
			t.Errorf("%d closes of %d bodies handed out", c, o)
		}
	})
}
