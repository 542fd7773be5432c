// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"

	"github.com/otelretry/otelretry-go/otelretry"
)

// stripe-go v82.5.1 at its defaults (2 retries, its own sleeps of 0.5 s
// and 1 s less up to a quarter of jitter, which it lets no one shorten but
// its own tests), over otelretry with the tests' short limits. It retries
// a POST under one Idempotency-Key, a transport error always, a status of
// 409 or 5xx only when its body holds no Stripe error object, and a 429
// only when its error's code is lock_timeout. It reads Stripe-Should-Retry
// only on an answer below 400: on an error status the body decides.

const (
	stripeCustomer    = `{"id":"cus_1","object":"customer","email":"a@example.com"}`
	stripeAPIError    = `{"error":{"type":"api_error","message":"busy"}}`
	stripeRateLimit   = `{"error":{"type":"invalid_request_error","code":"rate_limit","message":"Too many requests"}}`
	stripeLockTimeout = `{"error":{"type":"invalid_request_error","code":"lock_timeout","message":"Conflict"}}`
	// stripeProxyError is a 5xx body that holds no Stripe error object, as
	// a load balancer answers.
	stripeProxyError = "upstream connect error"

	stripeRead   = "GET /v1/customers/cus_1"
	stripeCreate = "POST /v1/customers"
)

func stripeAnswer(w http.ResponseWriter, status int, body string) {
	if body != stripeProxyError {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// stripeClient is a client of the fake over a fresh otelretry Transport,
// in an http.Client with stripe-go's default timeout (80 s); tries counts
// the client's calls to otelretry.
func stripeClient(url string, opts ...otelretry.Option) (*stripe.Client, *tries) {
	rt := &tries{next: testTransport(opts...)}
	b := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		HTTPClient:    &http.Client{Transport: rt, Timeout: 80 * time.Second},
		URL:           stripe.String(url),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	return stripe.NewClient("sk_test_123", stripe.WithBackends(&stripe.Backends{API: b, Connect: b, Uploads: b, MeterEvents: b})), rt
}

func stripeCall(t *testing.T, c *stripe.Client, key string) (*stripe.Customer, error) {
	if key == stripeRead {
		return c.V1Customers.Retrieve(t.Context(), "cus_1", nil)
	}
	return c.V1Customers.Create(t.Context(), &stripe.CustomerCreateParams{Email: stripe.String("a@example.com")})
}

// TestStripeReadRetried: a customer retrieved (GET) answered 503, 503, 200:
// otelretry retries it, 3 executions in one stripe-go call.
func TestStripeReadRetried(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			stripeAnswer(w, 503, stripeAPIError)
			return
		}
		stripeAnswer(w, 200, stripeCustomer)
	})
	c, rt := stripeClient(f.URL)
	cus, err := stripeCall(t, c, stripeRead)
	got := f.executed(stripeRead)
	t.Logf("GET 503, 503, 200: executed %d in %d stripe-go calls, err %v", got, rt.n.Load(), err)
	if err != nil || cus.ID != "cus_1" || got != 3 || rt.n.Load() != 1 {
		t.Errorf("executed %d in %d calls, err %v; want 3 in 1 and the customer", got, rt.n.Load(), err)
	}
}

// TestStripeCreateAnswered503: a create (POST) answered 503, 503, 200.
// otelretry does not repeat the POST; stripe-go does, under one
// Idempotency-Key, only when the 503's body holds no Stripe error object:
// 3 executions and the customer for a proxy's 503, 1 and the 503 for
// Stripe's own.
func TestStripeCreateAnswered503(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       int
	}{
		{"Stripe error object", stripeAPIError, 1},
		{"proxy body", stripeProxyError, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if n <= 2 {
					stripeAnswer(w, 503, tc.body)
					return
				}
				stripeAnswer(w, 200, stripeCustomer)
			})
			c, rt := stripeClient(f.URL)
			_, err := stripeCall(t, c, stripeCreate)
			got, keys := f.executed(stripeCreate), f.headerOf(stripeCreate, "Idempotency-Key")
			t.Logf("POST 503 (%s), 503, 200: executed %d in %d stripe-go calls, gap %v, Idempotency-Key %q, err %v",
				tc.name, got, rt.n.Load(), f.gap(stripeCreate).Round(10*time.Millisecond), keys, err)
			if got != tc.want || int(rt.n.Load()) != tc.want {
				t.Errorf("executed %d in %d calls, want %d in %d", got, rt.n.Load(), tc.want, tc.want)
			}
			if (err == nil) != (tc.want == 3) {
				t.Errorf("err %v with %d executions", err, got)
			}
			assertOneKey(t, keys)
		})
	}
}

// assertOneKey checks that every execution carried the same, non-empty
// idempotency key.
func assertOneKey(t *testing.T, keys []string) {
	t.Helper()
	for _, k := range keys {
		if k == "" || k != keys[0] {
			t.Errorf("Idempotency-Key per execution %q, want one key on all", keys)
			return
		}
	}
}

// TestStripeCreateHung: a create the server read and never answered.
// otelretry waits for its answer until its deadline (2 s: the attempt
// timeout does not cut a write it could not retry) and ends each try
// check_state; stripe-go resends the POST twice under the same
// Idempotency-Key (so Stripe applies it once): 3 executions, its own
// sleeps (0.375–0.5 s, 0.75–1 s) after each 2 s. The
// caller's error still matches otelretry.ErrOutcomeUnknown (stripe-go
// returns the last try's error as it is).
func TestStripeCreateHung(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	c, rt := stripeClient(f.URL)
	_, err := stripeCall(t, c, stripeCreate)
	got, keys := f.executed(stripeCreate), f.headerOf(stripeCreate, "Idempotency-Key")
	t.Logf("hung POST: executed %d in %d stripe-go calls, gap %v, Idempotency-Key %q, unknown outcome %v, err %v",
		got, rt.n.Load(), f.gap(stripeCreate).Round(10*time.Millisecond), keys, errors.Is(err, otelretry.ErrOutcomeUnknown), err)
	if got != 3 || rt.n.Load() != 3 {
		t.Errorf("executed %d in %d calls; measured 3 in 3", got, rt.n.Load())
	}
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("err %v does not match ErrOutcomeUnknown", err)
	}
	assertOneKey(t, keys)
}

// TestStripe429Hints: a 429 carrying each hint Stripe sends, then 200. On a
// read, otelretry waits a Retry-After itself (2 executions, 1 s apart); a
// 429 without Retry-After it hands back, since its budget holds retries
// for 1 s. stripe-go retries none of these 429s: their rate_limit error
// object says no, whatever Stripe-Should-Retry says. Only a lock_timeout
// 429 is retried by stripe-go, after its own sleep (0.375–0.5 s).
func TestStripe429Hints(t *testing.T) {
	for _, tc := range []struct {
		key, hint, value string
		body, name       string // name: the body's error code
		want             int
		minGap           time.Duration
	}{
		{stripeRead, "Retry-After", "1", stripeRateLimit, "rate_limit", 2, 900 * time.Millisecond},
		{stripeRead, "Stripe-Should-Retry", "true", stripeRateLimit, "rate_limit", 1, 0},
		{stripeCreate, "Retry-After", "1", stripeRateLimit, "rate_limit", 1, 0},
		{stripeCreate, "Stripe-Should-Retry", "true", stripeRateLimit, "rate_limit", 1, 0},
		{stripeCreate, "Stripe-Should-Retry", "true", stripeLockTimeout, "lock_timeout", 2, 350 * time.Millisecond},
	} {
		t.Run(tc.key+"/"+tc.hint+"/"+tc.name, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set(tc.hint, tc.value)
					stripeAnswer(w, 429, tc.body)
					return
				}
				stripeAnswer(w, 200, stripeCustomer)
			})
			c, rt := stripeClient(f.URL)
			_, err := stripeCall(t, c, tc.key)
			got, gap := f.executed(tc.key), f.gap(tc.key)
			t.Logf("%s 429 (%s) %s: %s, then 200: executed %d in %d stripe-go calls, gap %v, err %v", tc.key, tc.name, tc.hint, tc.value, got, rt.n.Load(), gap.Round(10*time.Millisecond), err)
			if got != tc.want || (err == nil) != (tc.want == 2) {
				t.Errorf("executed %d, err %v; want %d", got, err, tc.want)
			}
			if gap < tc.minGap {
				t.Errorf("gap %v, want at least %v", gap, tc.minGap)
			}
		})
	}
}

// TestStripeShouldRetryFalse: a 503 with Stripe-Should-Retry: false, then
// 200. otelretry ignores the header and retries the read (2 executions).
// stripe-go ignores it too on an error status: it retries the create when
// the 503's body holds no Stripe error object (2 executions), and not when
// it does (1), as it would without the header.
func TestStripeShouldRetryFalse(t *testing.T) {
	for _, tc := range []struct {
		key, name, body string
		want            int
	}{
		{stripeRead, "Stripe error object", stripeAPIError, 2},
		{stripeCreate, "Stripe error object", stripeAPIError, 1},
		{stripeCreate, "proxy body", stripeProxyError, 2},
	} {
		t.Run(tc.key+"/"+tc.name, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set("Stripe-Should-Retry", "false")
					stripeAnswer(w, 503, tc.body)
					return
				}
				stripeAnswer(w, 200, stripeCustomer)
			})
			c, rt := stripeClient(f.URL)
			_, err := stripeCall(t, c, tc.key)
			got := f.executed(tc.key)
			t.Logf("%s 503 Stripe-Should-Retry: false (%s), then 200: executed %d in %d stripe-go calls, err %v", tc.key, tc.name, got, rt.n.Load(), err)
			if got != tc.want || (err == nil) != (tc.want == 2) {
				t.Errorf("executed %d, err %v; want %d", got, err, tc.want)
			}
		})
	}
}

// TestStripeCallerDeadlineNoExtraCalls: 50 creates, one after another,
// each under a caller's deadline of 50 ms, against a create that hangs.
// stripe-go stops only on ctx.Err(): had otelretry returned before the
// caller's context was done, stripe-go would have called it again in the
// same context (issue 33: 3 to 13 extra calls in 50). Each create is one
// RoundTrip call and at most one execution, and the error of an executed
// create keeps ErrOutcomeUnknown. The fake tells the creates apart by
// their email.
func TestStripeCallerDeadlineNoExtraCalls(t *testing.T) {
	const creates = 50
	f := newCountingServer(t, func(r *http.Request) string { return r.PostFormValue("email") },
		func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	c, rt := stripeClient(f.URL)
	executed, lost := 0, 0
	for i := range creates {
		email := fmt.Sprintf("c%d@example.com", i)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		_, err := c.V1Customers.Create(ctx, &stripe.CustomerCreateParams{Email: stripe.String(email)})
		cancel()
		got := f.executed(email)
		executed += got
		if got > 1 || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("create %d: executed %d, err %v; want at most 1 and a deadline", i, got, err)
		}
		if got == 1 && !errors.Is(err, otelretry.ErrOutcomeUnknown) {
			lost++
			t.Logf("create %d executed, err %v", i, err)
		}
	}
	t.Logf("%d creates, 50 ms caller deadline, hung: executed %d in %d RoundTrip calls, %d executed creates lost ErrOutcomeUnknown", creates, executed, rt.n.Load(), lost)
	if rt.n.Load() != creates || executed == 0 || lost != 0 {
		t.Errorf("%d RoundTrip calls, %d executions, %d lost the unknown outcome; want %d calls, executions, 0 lost", rt.n.Load(), executed, lost, creates)
	}
}
