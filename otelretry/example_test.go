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
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Wrap an existing client: a read that gets two 503s is retried within one
// 400ms budget and the real 200 is returned.
func ExampleNewTransport() {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()

	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithMaxAttempts(3),
		otelretry.WithDeadline(400*time.Millisecond),
		otelretry.WithBackoff(otelretry.ConstantBackoff(40*time.Millisecond)))}
	ctx := otelretry.WithOperationID(context.Background(), "op-42") // at the operation boundary
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body), "after", calls.Load(), "calls")
	// Output: 200 ok after 3 calls
}

// A write whose answer is lost is not sent again: the error says the
// outcome is unknown and names the operation to check.
func ExampleErrOutcomeUnknown() {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		hang(r) // the answer never comes
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()

	// The write waits for its answer until the operation's deadline: a cut
	// of a write could not be retried, so the attempt timeout (10ms here)
	// does not cut it (WithAttemptTimeout).
	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithAttemptTimeout(10*time.Millisecond), otelretry.WithDeadline(100*time.Millisecond))}
	ctx := otelretry.WithOperationID(context.Background(), "order-7")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"sku":"A-1"}`))
	start := time.Now()
	_, err := client.Do(req)

	var rerr *otelretry.Error
	if errors.Is(err, otelretry.ErrOutcomeUnknown) && errors.As(err, &rerr) {
		fmt.Println("check the state of", rerr.OperationID, "- calls made:", calls.Load())
		fmt.Println("waited for the deadline:", time.Since(start) >= 100*time.Millisecond)
	}
	// Output:
	// check the state of order-7 - calls made: 1
	// waited for the deadline: true
}

// A state check resolves an unknown write: here the server reports the
// order as applied, so its stored record is the operation's result.
func ExampleWithStateCheck() {
	var writes, checks atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writes.Add(1)
		hang(r) // the write is applied, its answer lost
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()

	check := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
		checks.Add(1)
		// A real check would GET the record by c.OperationID.
		stored := &http.Response{StatusCode: http.StatusOK, Header: http.Header{},
			Body: io.NopCloser(strings.NewReader(`{"order":"` + c.OperationID + `"}`))}
		return otelretry.StateResult{State: attrs.StateApplied, Response: stored}, nil
	}
	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithAttemptTimeout(50*time.Millisecond), otelretry.WithStateCheck(check))}
	ctx := otelretry.WithOperationID(context.Background(), "order-8")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{}`))
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	fmt.Println("writes sent:", writes.Load(), "- state checks:", checks.Load())
	// Output:
	// 200 {"order":"order-8"}
	// writes sent: 1 - state checks: 1
}

// A key per write: the first attempt's answer is lost after the server
// applied the write; the resend carries the same key, and a server that
// stores answers by key returns the stored one instead of applying the
// write again.
func ExampleWithIdempotencyKeys() {
	srv, applied := ordersServer()
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()

	client := &http.Client{Transport: otelretry.NewTransport(base,
		otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))}
	var results otelretry.Results
	ctx := otelretry.WithResults(otelretry.WithOperationID(context.Background(), "order-9"), &results)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"sku":"A-1"}`))
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	last, _ := results.Last()
	fmt.Println(string(body), "- applied:", applied.Load(), "- attempts:", last.Attempts)
	// Output: order 1 - applied: 1 - attempts: 2
}

// A layer above the Transport that sends a call again (an SDK's retryer)
// gives its tries one operation id, so that they share one idempotency
// key: here otelretry makes one attempt per call, the first try's answer
// is lost after the server applied the write, and the layer's second try
// gets the stored answer. EnsureOperationID adds an id only where the
// calls have none, in a hook's context too.
func ExampleEnsureOperationID() {
	srv, applied := ordersServer()
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: otelretry.NewTransport(base, otelretry.WithMaxAttempts(1),
		otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()))}

	ctx := otelretry.EnsureOperationID(context.Background()) // the layer's top
	for range 2 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"sku":"A-1"}`))
		resp, err := client.Do(req)
		if err != nil {
			continue // the layer tries again
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(string(body), "- applied:", applied.Load())
		break
	}
	// Output: order 1 - applied: 1
}

func ExampleSanitizeURL() {
	u, _ := url.Parse("https://alice:s3cret@api.example.com/v1/items?token=abc&page=2#top")
	fmt.Println(otelretry.SanitizeURL(u))
	// Output: https://REDACTED:REDACTED@api.example.com/v1/items?token=REDACTED&page=REDACTED
}

// Share one budget between clients of the same dependency so that their
// failures and successes throttle their retries together; its zero value
// has the defaults, and a field tunes one setting: 10 tokens allow a fresh
// host four retries in a row, where the default 6 allow two. In an outage,
// orders takes those four retries, and payments, on the same budget, is
// left none.
func ExampleBudget() {
	fmt.Println("a fresh host's retries, default:", new(otelretry.Budget).Available(httptest.NewRequest(http.MethodGet, "http://dependency.example/", nil)))

	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable) // an outage
	}))
	defer srv.Close()
	budget := &otelretry.Budget{Tokens: 10}
	pause := otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))
	orders := &http.Client{Transport: otelretry.NewTransport(nil, otelretry.WithBudget(budget), otelretry.WithMaxAttempts(10), pause)}
	payments := &http.Client{Transport: otelretry.NewTransport(nil, otelretry.WithBudget(budget), otelretry.WithMaxAttempts(10), pause)}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	fmt.Println("a fresh host's retries, 10 tokens:", budget.Available(req))
	for _, c := range []struct {
		name   string
		client *http.Client
	}{{"orders", orders}, {"payments", payments}} {
		calls.Store(0)
		resp, err := c.client.Get(srv.URL)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(c.name+":", resp.StatusCode, "- calls:", calls.Load())
	}
	// Output:
	// a fresh host's retries, default: 2
	// a fresh host's retries, 10 tokens: 4
	// orders: 503 - calls: 5
	// payments: 503 - calls: 1
}

// hang reads the request, so the server notices when the client gives up,
// then waits for that (at most 5s).
func hang(r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

// ordersServer applies each order it is sent once per Idempotency-Key
// ("<32 hex digits>", quoted, as the draft's sf-string: any other key is
// refused with a 400), storing its answer: the first time a key comes, it
// applies the order and loses the answer (the connection closes); a
// resend under the key gets the stored answer. applied counts the orders
// applied.
// draftKeyForm is a key as DraftIdempotencyKey sends it: 32 hex digits,
// quoted.
var draftKeyForm = regexp.MustCompile(`^"[0-9a-f]{32}"$`)

func ordersServer() (srv *httptest.Server, applied *atomic.Int32) {
	applied = new(atomic.Int32)
	var mu sync.Mutex
	stored := map[string]string{}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if !draftKeyForm.MatchString(key) {
			http.Error(w, "bad Idempotency-Key "+strconv.Quote(key), http.StatusBadRequest)
			return
		}
		mu.Lock()
		answer, seen := stored[key]
		if !seen {
			answer = fmt.Sprintf("order %d", applied.Add(1))
			stored[key] = answer
		}
		mu.Unlock()
		if !seen { // applied, then the answer is lost
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		fmt.Fprint(w, answer)
	})), applied
}
