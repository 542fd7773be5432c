// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

type gotOp struct {
	outcome  attrs.Outcome
	reason   attrs.Reason
	attempts int
	unknown  bool
	isUnk    bool
	hits     int64
	checks   int
	spans    int
	status   int
}

func (g gotOp) String() string {
	return fmt.Sprintf("%s/%s attempts=%d unknown=%v errIsUnknown=%v hits=%d checks=%d attemptSpans=%d status=%d",
		g.outcome, g.reason, g.attempts, g.unknown, g.isUnk, g.hits, g.checks, g.spans, g.status)
}

// runPrep runs one operation over a real *http.Transport against a
// loopback server; hook is the PrepareAttemptFunc; mk builds the request.
func runPrep(t *testing.T, handler func(n int64, w http.ResponseWriter, r *http.Request), hook func(*http.Request, int) error,
	mk func(ctx context.Context, url string) *http.Request, extra ...otelretry.Option) (gotOp, *countedBodies) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		handler(n, w, r)
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	rec, opts := tracingProviders()
	var checks atomic.Int32
	opts = append(opts, otelretry.WithPrepareAttempt(hook), otelretry.WithoutBudget(),
		otelretry.WithStateCheck(func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
			checks.Add(1)
			return otelretry.StateResult{State: attrs.StateUnknown}, nil
		}))
	opts = append(opts, extra...)
	tr := otelretry.NewTransport(base, opts...)
	var res otelretry.Results
	ctx := otelretry.WithResults(t.Context(), &res)
	req := mk(ctx, srv.URL)
	resp, err := tr.RoundTrip(req)
	g := gotOp{}
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		g.status = resp.StatusCode
	}
	last, _ := res.Last()
	g.outcome, g.reason, g.attempts, g.unknown = last.Outcome, last.Reason, last.Attempts, last.OutcomeUnknown
	g.isUnk = errors.Is(err, otelretry.ErrOutcomeUnknown)
	g.hits = hits.Load()
	g.checks = int(checks.Load())
	g.spans = len(spantest.Attempts(rec.Ended()))
	return g, nil
}

// A first attempt whose hook breaks a header stops at its preparation as
// one whose hook fails: same Results, no call, caller's body closed once.
func TestFirstAttemptHookBreaksHeaderIsPrepareFailed(t *testing.T) {
	ok := func(_ int64, w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body); w.WriteHeader(200) }
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		for _, mode := range []string{"fail", "header", "headername", "trailer"} {
			t.Run(method+"/"+mode, func(t *testing.T) {
				var c countedBodies
				hook := func(r *http.Request, n int) error {
					switch mode {
					case "fail":
						return errors.New("signer down")
					case "header":
						r.Header.Set("X-Signature", "a\r\nX-Evil: 1")
					case "headername":
						r.Header["Bad Name"] = []string{"v"}
					case "trailer":
						r.Trailer = http.Header{"X-Sum": {"a\nb"}}
					}
					return nil
				}
				g, _ := runPrep(t, ok, hook, func(ctx context.Context, url string) *http.Request {
					req := c.request(t, ctx, method, true)
					req.URL = mustURL(t, url+"/things")
					req.Host = ""
					return req
				})
				t.Logf("%s", g)
				if g.outcome != attrs.DecisionStop.Outcome() || g.reason != attrs.ReasonPrepareFailed || g.hits != 0 || g.unknown || g.isUnk {
					t.Errorf("got %s; want stop/prepare_failed, no call, known", g)
				}
				c.check(t)
			})
		}
	}
}

// A keyed write whose first attempt's answer is lost (the connection cut
// after the request was read) and whose resend the hook breaks is looked
// up, as when the hook fails (decisions.md row 7, footnote 2).
func TestKeyedResendHookBreaksHeaderIsLookedUp(t *testing.T) {
	cut := func(n int64, w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if n == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(201)
	}
	var want gotOp
	for _, mode := range []string{"fail", "header", "trailer"} {
		t.Run(mode, func(t *testing.T) {
			var c countedBodies
			c.getBodyOK = -1
			hook := func(r *http.Request, n int) error {
				if n < 2 {
					return nil
				}
				switch mode {
				case "fail":
					return errors.New("signer down")
				case "header":
					r.Header.Set("X-Signature", "a\nb")
				case "trailer":
					r.Trailer = http.Header{"Bad Name": nil}
				}
				return nil
			}
			g, _ := runPrep(t, cut, hook, func(ctx context.Context, url string) *http.Request {
				req := c.request(t, ctx, http.MethodPost, true)
				req.URL = mustURL(t, url+"/orders")
				req.Host = ""
				return req
			}, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithBackoff(otelretry.ConstantBackoff(0)))
			t.Logf("%s", g)
			if mode == "fail" {
				want = g
			} else if g != want {
				t.Errorf("got %s; want %s, as a failed hook", g, want)
			}
			if g.outcome != attrs.DecisionCheckState.Outcome() || g.checks != 1 || !g.unknown || g.hits != 1 {
				t.Errorf("got %s; want check_state, one check, unknown, one call", g)
			}
		})
	}
}

// A hook that repairs the caller's invalid header is not refused; a
// caller's invalid header a hook leaves is row 24 (invalid_request).
func TestCallersInvalidHeaderWithHook(t *testing.T) {
	ok := func(_ int64, w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }
	mk := func(hdr string) func(ctx context.Context, url string) *http.Request {
		return func(ctx context.Context, url string) *http.Request {
			req := get(t, ctx, url)
			req.Header[hdr] = []string{"a\nb"}
			return req
		}
	}
	t.Run("repaired", func(t *testing.T) {
		g, _ := runPrep(t, ok, func(r *http.Request, _ int) error { r.Header.Set("X-A", "fine"); return nil }, mk("X-A"))
		t.Logf("%s", g)
		if g.status != 200 || g.hits != 1 {
			t.Errorf("got %s; want 200 after one call", g)
		}
	})
	t.Run("repairedName", func(t *testing.T) {
		g, _ := runPrep(t, ok, func(r *http.Request, _ int) error { delete(r.Header, "Bad Name"); return nil }, mk("Bad Name"))
		t.Logf("%s", g)
		if g.status != 200 || g.hits != 1 {
			t.Errorf("got %s; want 200 after one call", g)
		}
	})
	t.Run("left", func(t *testing.T) {
		g, _ := runPrep(t, ok, func(r *http.Request, _ int) error { r.Header.Set("X-B", "x"); return nil }, mk("X-A"))
		t.Logf("%s", g)
		if g.outcome != attrs.DecisionStop.Outcome() || g.reason != attrs.ReasonInvalidRequest || g.hits != 0 {
			t.Errorf("got %s; want stop/invalid_request", g)
		}
	})
	t.Run("leftAndBrokeAnother", func(t *testing.T) {
		g, _ := runPrep(t, ok, func(r *http.Request, _ int) error { r.Header.Set("X-B", "x\ny"); return nil }, mk("X-A"))
		t.Logf("%s", g)
		if g.hits != 0 {
			t.Errorf("got %s; want no call", g)
		}
	})
}

var _ = sync.Mutex{}
var _ = time.Second

// hedgeRun runs n operations in flight together, each a GET whose first
// attempt answers 200 once its hedge's hook ran; mode "none" hedges not.
func hedgeRun(t *testing.T, n int, mode string, share float64, sequential bool) (available int, hooked int32) {
	t.Helper()
	var mu sync.Mutex
	gates := map[string]chan struct{}{}
	gate := func(id string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if gates[id] == nil {
			gates[id] = make(chan struct{})
		}
		return gates[id]
	}
	var hookCalls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mode != "none" {
			select {
			case <-gate(r.Header.Get("X-Op")):
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Second): // a guard: the hedge never came
				t.Errorf("op %s: no hedge was prepared", r.Header.Get("X-Op"))
			}
		}
		w.WriteHeader(200)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := &http.Transport{MaxIdleConnsPerHost: 64}
	defer base.CloseIdleConnections()
	budget := &otelretry.Budget{Tokens: 100}
	opts := []otelretry.Option{otelretry.WithBudget(budget),
		otelretry.WithPrepareAttempt(func(r *http.Request, attempt int) error {
			if attempt < 2 {
				return nil
			}
			hookCalls.Add(1)
			defer close(gate(r.Header.Get("X-Op")))
			if mode == "fail" {
				return errors.New("signer down")
			}
			r.Header.Set("X-Signature", "a\nb")
			return nil
		})}
	if mode != "none" {
		opts = append(opts, otelretry.WithHedging(otelretry.Hedging{Delay: time.Millisecond, MaxShare: share}))
	}
	tr := otelretry.NewTransport(base, opts...)
	var wg sync.WaitGroup
	one := func(i int) {
		defer wg.Done()
		req := get(t, t.Context(), srv.URL)
		req.Header.Set("X-Op", fmt.Sprint(i))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Errorf("op %d: %v", i, err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for i := range n {
		wg.Add(1)
		if sequential {
			one(i)
		} else {
			go one(i)
		}
	}
	wg.Wait()
	r, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	return budget.Available(r), hookCalls.Load()
}

// 16 operations in flight together, each with a hedge its hook makes
// unsendable: every hedge gives its token back (Budget.Available as
// without hedging).
func TestSixteenBrokenHedgesTogetherGiveTokensBack(t *testing.T) {
	a, _ := hedgeRun(t, 16, "none", 1, false)
	f, fh := hedgeRun(t, 16, "fail", 1, false)
	b, bh := hedgeRun(t, 16, "header", 1, false)
	t.Logf("Available: unhedged %d, failed hooks %d (%d hooks), broken headers %d (%d hooks)", a, f, fh, b, bh)
	if a != b || a != f || fh != 16 || bh != 16 {
		t.Errorf("Available %d/%d/%d, hooks %d/%d; want equal, 16 hooks", a, f, b, fh, bh)
	}
}

// The hedge rate's burst is one hedge (a tiny MaxShare): a hedge refused
// at its preparation gives its hedge back, so each of 4 operations one
// after another gets its hedge prepared.
func TestBrokenHedgeGivesItsHedgeRateBack(t *testing.T) {
	_, fh := hedgeRun(t, 4, "fail", 0.0001, true)
	_, bh := hedgeRun(t, 4, "header", 0.0001, true)
	t.Logf("hedges prepared: failed hooks %d, broken headers %d", fh, bh)
	if fh != bh {
		t.Errorf("hedges prepared %d with broken headers, %d with failed hooks", bh, fh)
	}
}

// The caller's header is invalid; the hook repairs it for attempt 1 only,
// so the hedge's fields are unsendable after its hook: a hedge's are
// checked whatever they were before it, so it is refused at its
// preparation and gives its token back (budget.md, hedging.md). (Sent, it
// reached net/http's refusal and kept its token: a reviewer's find.)
func TestHedgeRefusedByNetHTTPAfterRepairOnlyOnFirstGivesTokenBack(t *testing.T) {
	run := func(hedge bool) (int, int32) {
		var hookCalls atomic.Int32
		hedged := make(chan struct{}, 64)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if hedge {
				select {
				case <-hedged:
				case <-r.Context().Done():
					return
				}
			}
			w.WriteHeader(200)
		}))
		defer srv.Close()
		base := &http.Transport{}
		defer base.CloseIdleConnections()
		budget := &otelretry.Budget{Tokens: 100}
		rec, topts := tracingProviders()
		opts := append(topts, otelretry.WithBudget(budget),
			otelretry.WithPrepareAttempt(func(r *http.Request, attempt int) error {
				if attempt == 1 {
					r.Header.Set("X-A", "fine") // repairs the caller's header
				} else {
					hookCalls.Add(1)
					hedged <- struct{}{}
				}
				return nil
			}))
		if hedge {
			opts = append(opts, otelretry.WithHedging(otelretry.Hedging{Delay: time.Millisecond, MaxShare: 1}))
		}
		tr := otelretry.NewTransport(base, opts...)
		for range 4 {
			req := get(t, t.Context(), srv.URL)
			req.Header["X-A"] = []string{"a\nb"}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if hedge {
			for _, s := range spantest.Attempts(rec.Ended()) {
				if v, _ := spantestAttr(s, attrs.AttemptKey); v == "2" {
					d, _ := spantestAttr(s, "retry.decision")
					r, _ := spantestAttr(s, "retry.reason")
					t.Logf("hedge span: %s, %s, %q", d, r, s.Status().Description)
					break
				}
			}
		}
		r, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		return budget.Available(r), hookCalls.Load()
	}
	a, _ := run(false)
	b, hooks := run(true)
	t.Logf("Available: unhedged %d, hedged %d (%d hedge hooks)", a, b, hooks)
	if hooks != 4 {
		t.Fatalf("%d hedges prepared; want 4", hooks)
	}
	if a != b {
		t.Errorf("Available after 4 operations whose hedge net/http refused = %d; want %d, as without hedging", b, a)
	}
}
