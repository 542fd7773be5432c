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
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/otelretry/otelretry-go/otelretry"
)

// flaky answers the first n calls with status, then 200 "ok", and counts
// the calls.
func flaky(n int32, status int, header http.Header) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if calls.Add(1) <= n {
			for k, v := range header {
				w.Header()[k] = v
			}
			w.WriteHeader(status)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	return srv, &calls
}

// A read-only POST, such as a Prometheus query, a GraphQL query or a
// search, is marked safe to repeat for that one request: a 503 is retried
// as it would be for a GET, and every other POST on the Transport stays
// protected.
func ExampleWithIntent() {
	srv, calls := flaky(1, http.StatusServiceUnavailable, nil)
	defer srv.Close()
	client := &http.Client{Transport: otelretry.NewTransport(nil, otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))}

	query := func(ctx context.Context) {
		calls.Store(0)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v1/query", strings.NewReader("query=up"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, "- calls:", calls.Load())
	}
	query(otelretry.WithIntent(context.Background(), otelretry.Intent{Repeatable: true}))
	query(context.Background()) // a POST not marked: its 503 is returned
	// Output:
	// 200 - calls: 2
	// 503 - calls: 1
}

// A layer that marks the reads it sends (here a search sent as POST) adds
// Repeatable to the Intent its caller gave, read with CallIntent: the
// caller's attempt limit of 2 is kept, and a call the layer sends inside a
// hook would take none of the calling operation's Intent.
func ExampleCallIntent() {
	srv, calls := flaky(2, http.StatusServiceUnavailable, nil)
	defer srv.Close()
	client := &http.Client{Transport: otelretry.NewTransport(nil, otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))}
	search := func(ctx context.Context) (*http.Response, error) {
		in := otelretry.CallIntent(ctx) // what the caller asked, kept
		in.Repeatable = true
		req, _ := http.NewRequestWithContext(otelretry.WithIntent(ctx, in), http.MethodPost, srv.URL+"/search", strings.NewReader("q=up"))
		return client.Do(req)
	}

	resp, err := search(otelretry.WithIntent(context.Background(), otelretry.Intent{MaxAttempts: 2}))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, "after", calls.Load(), "calls")
	// Output: 503 after 2 calls
}

// A classifier teaches the policy what only the API knows: here a 500
// that carries X-Transient is worth another attempt, after at least 20ms.
// The deadline, the attempt limit, the budget and the protection of
// writes still apply.
func ExampleWithClassifier() {
	srv, calls := flaky(1, http.StatusInternalServerError, http.Header{"X-Transient": {"1"}})
	defer srv.Close()
	transient := func(a otelretry.Answer) otelretry.Classification {
		if a.StatusCode == http.StatusInternalServerError && a.Header.Get("X-Transient") == "1" {
			return otelretry.Retryable(20 * time.Millisecond)
		}
		return otelretry.Classification{} // the default rules decide
	}
	client := &http.Client{Transport: otelretry.NewTransport(nil, otelretry.WithClassifier(transient))}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, "after", calls.Load(), "calls")
	// Output: 200 after 2 calls
}

// Each attempt is prepared on its own copy of the request: a fresh token
// (or signature) per attempt, the caller's request untouched. An error
// from the hook ends the operation before anything is sent: an *Error
// with no attempts.
func ExampleWithPrepareAttempt() {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		if len(seen) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	token := func(r *http.Request, attempt int) error {
		if attempt > 5 {
			return errors.New("token source exhausted")
		}
		r.Header.Set("Authorization", "Bearer token-"+strconv.Itoa(attempt))
		return nil
	}
	client := &http.Client{Transport: otelretry.NewTransport(nil, otelretry.WithPrepareAttempt(token),
		otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(seen, "caller's header:", req.Header.Get("Authorization") == "")

	noToken := func(*http.Request, int) error { return errors.New("no token") }
	client.Transport = otelretry.NewTransport(nil, otelretry.WithPrepareAttempt(noToken))
	_, err = client.Get(srv.URL)
	var rerr *otelretry.Error
	fmt.Println(errors.As(err, &rerr) && rerr.Attempts == 0, "- requests the server saw:", len(seen))
	// Output:
	// [Bearer token-1 Bearer token-2] caller's header: true
	// true - requests the server saw: 2
}

// A backoff that sees the answer honours the API's own hint, here the
// RateLimit-Reset (in seconds) an overloaded API sends with its 503;
// without one it falls back to a short pause. A hint the operation's
// deadline cannot wait for ends it at once, with the answer in hand: the
// second server asks for a minute, and the 503 is returned after one call
// (the default backoff would have retried it).
func ExampleBackoff() {
	reset := otelretry.Backoff(func(retry int, a otelretry.Answer) time.Duration {
		if secs, err := strconv.Atoi(a.Header.Get("RateLimit-Reset")); err == nil {
			return time.Duration(secs) * time.Second
		}
		return 50 * time.Millisecond
	})
	client := &http.Client{Transport: otelretry.NewTransport(nil, otelretry.WithBackoff(reset), otelretry.WithDeadline(2*time.Second))}
	for _, wait := range []string{"0", "60"} {
		srv, calls := flaky(1, http.StatusServiceUnavailable, http.Header{"Ratelimit-Reset": {wait}})
		resp, err := client.Get(srv.URL)
		srv.Close()
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println("reset", wait+":", resp.StatusCode, "calls", calls.Load())
	}
	// Output:
	// reset 0: 200 calls 2
	// reset 60: 503 calls 1
}

// Decorrelated jitter grows each pause from the last one taken, up to 3
// times it: first pauses are drawn from [base, 3·base], and after a 600ms
// pause from [base, 1.8s] (of 1 000 draws each, some land in the top
// third of the range, above twice the last pause).
func ExampleDecorrelatedJitter() {
	b := otelretry.DecorrelatedJitter(100*time.Millisecond, 2*time.Second)
	draw := func(previous, top time.Duration) (within, nearTop bool) {
		within = true
		for range 1000 {
			next := b(2, otelretry.Answer{PreviousPause: previous})
			within = within && next >= 100*time.Millisecond && next <= top
			nearTop = nearTop || next > top*2/3
		}
		return within, nearTop
	}
	within, nearTop := draw(0, 300*time.Millisecond)
	fmt.Println("first pauses within [100ms, 300ms]:", within, "- some above 200ms:", nearTop)
	within, nearTop = draw(600*time.Millisecond, 1800*time.Millisecond)
	fmt.Println("after 600ms, within [100ms, 1.8s]:", within, "- some above 1.2s:", nearTop)
	// Output:
	// first pauses within [100ms, 300ms]: true - some above 200ms: true
	// after 600ms, within [100ms, 1.8s]: true - some above 1.2s: true
}

// A read whose answer is merely slow is hedged: after the delay with no
// answer, a second attempt is sent, and the first answer wins; the slow
// attempt is canceled (superseded). MaxShare 1 lets every operation hedge,
// for the example; the default (5 %) bounds the extra load when every
// answer is slow.
func ExampleWithHedging() {
	var calls atomic.Int32
	slowCut := make(chan bool, 1) // whether the slow attempt was canceled
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select { // the slow tail: this answer would take a second
			case <-time.After(time.Second):
				slowCut <- false
			case <-r.Context().Done():
				slowCut <- true
				return
			}
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	client := &http.Client{Transport: otelretry.NewTransport(nil,
		otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 1}))}

	var results otelretry.Results
	req, _ := http.NewRequestWithContext(otelretry.WithResults(context.Background(), &results), http.MethodGet, srv.URL+"/items/1", nil)
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	last, _ := results.Last()
	fmt.Println(resp.StatusCode, string(body), "after", last.Attempts, "attempts")
	fmt.Println("the slow attempt canceled:", <-slowCut)
	// Output:
	// 200 ok after 2 attempts
	// the slow attempt canceled: true
}
