// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// stripe-go v82.5.1 at its defaults (2 retries, its own sleeps of 0.5 s,
// then 0.75 to 1 s, which it lets no one shorten but its own tests), over
// otelretry with the tests' short limits, and with the recipe
// (otelretryUnderStripe, withStripeCall). It retries a POST under one
// Idempotency-Key, a transport error always, a status of 409 or 5xx only
// when its body holds no Stripe error object, and a 429 only when its
// error's code is lock_timeout. It reads Stripe-Should-Retry only on an
// answer below 400: on an error status the body decides. The recipe
// changes what otelretry records, not what either layer sends: every count
// below is the same in both setups.

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

// stripeSetups are the two setups every Stripe scenario runs in.
var stripeSetups = []setup{sdkDefaults, recipe}

func stripeAnswer(w http.ResponseWriter, status int, body string) {
	if body != stripeProxyError {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// stripeClient is a client of the fake in an http.Client with stripe-go's
// default timeout (80 s), over otelretry with the tests' short limits
// (then opts): at its defaults, or with the recipe. tries counts the
// client's calls to otelretry.
func stripeClient(url string, s setup, opts ...otelretry.Option) (*stripe.Client, *tries) {
	cfg := &stripe.BackendConfig{
		HTTPClient:    &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 80 * time.Second},
		URL:           stripe.String(url),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	}
	if s == recipe {
		otelretryUnderStripe(cfg, testOptions(opts...)...)
	} else {
		cfg.HTTPClient.Transport = otelretry.NewTransport(cfg.HTTPClient.Transport, testOptions(opts...)...)
	}
	rt := &tries{next: cfg.HTTPClient.Transport}
	cfg.HTTPClient.Transport = rt
	return stripe.NewClient("sk_test_123", stripe.WithBackends(stripe.NewBackendsWithConfig(cfg))), rt
}

// stripeCall sends key (a retrieve or a create) in ctx.
func stripeCall(ctx context.Context, c *stripe.Client, key string) (*stripe.Customer, error) {
	if key == stripeRead {
		return c.V1Customers.Retrieve(ctx, "cus_1", nil)
	}
	return c.V1Customers.Create(ctx, &stripe.CustomerCreateParams{Email: stripe.String("a@example.com")})
}

// TestStripeReadRetried: a customer retrieved (GET) answered 503, 503, 200
// (Stripe's error object): otelretry retries it, 3 executions in one
// stripe-go try, in both setups.
func TestStripeReadRetried(t *testing.T) {
	for _, s := range stripeSetups {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if n <= 2 {
					stripeAnswer(w, 503, stripeAPIError)
					return
				}
				stripeAnswer(w, 200, stripeCustomer)
			})
			c, rt := stripeClient(f.URL, s)
			cus, err := stripeCall(t.Context(), c, stripeRead)
			got := f.executed(stripeRead)
			t.Logf("%s: GET 503, 503, 200: executed %d in %d stripe-go tries, err %v", s, got, rt.n.Load(), err)
			if err != nil || cus.ID != "cus_1" || got != 3 || rt.n.Load() != 1 {
				t.Errorf("executed %d in %d tries, err %v; want 3 in 1 and the customer", got, rt.n.Load(), err)
			}
		})
	}
}

// TestStripeReadBothLayersRetry: a GET answered 503 by a proxy (no Stripe
// error object), always. Both layers retry it: otelretry makes 3 attempts
// in stripe-go's first try, then its retry budget (3 failures in) lets
// each of stripe-go's 2 resends make 1: 5 executions in 3 tries.
func TestStripeReadBothLayersRetry(t *testing.T) {
	for _, s := range stripeSetups {
		t.Run(s.String(), func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				stripeAnswer(w, 503, stripeProxyError)
			})
			c, rt := stripeClient(f.URL, s)
			_, err := stripeCall(t.Context(), c, stripeRead)
			got := f.executed(stripeRead)
			t.Logf("%s: GET 503 (proxy body) always: executed %d in %d stripe-go tries, err %v", s, got, rt.n.Load(), err)
			if err == nil || got != 5 || rt.n.Load() != 3 {
				t.Errorf("executed %d in %d tries, err %v; measured 5 in 3 and the 503", got, rt.n.Load(), err)
			}
		})
	}
}

// TestStripeCreateAnswered503: a create (POST) answered 503, 503, 200.
// otelretry does not repeat the POST; stripe-go does, under one
// Idempotency-Key, only when the 503's body holds no Stripe error object:
// 3 executions and the customer for a proxy's 503, the first resend after
// stripe-go's sleep of 0.5 s, and 1 and the 503 for Stripe's own.
func TestStripeCreateAnswered503(t *testing.T) {
	for _, s := range stripeSetups {
		for _, tc := range []struct {
			name, body string
			want       int
		}{
			{"Stripe error object", stripeAPIError, 1},
			{"proxy body", stripeProxyError, 3},
		} {
			t.Run(s.String()+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
					if n <= 2 {
						stripeAnswer(w, 503, tc.body)
						return
					}
					stripeAnswer(w, 200, stripeCustomer)
				})
				c, rt := stripeClient(f.URL, s)
				_, err := stripeCall(t.Context(), c, stripeCreate)
				got, keys := f.executed(stripeCreate), f.headerOf(stripeCreate, "Idempotency-Key")
				t.Logf("%s: POST 503 (%s), 503, 200: executed %d in %d stripe-go tries, gap %v, Idempotency-Key %q, err %v",
					s, tc.name, got, rt.n.Load(), f.gap(stripeCreate).Round(10*time.Millisecond), keys, err)
				if got != tc.want || int(rt.n.Load()) != tc.want {
					t.Errorf("executed %d in %d tries, want %d in %d", got, rt.n.Load(), tc.want, tc.want)
				}
				if (err == nil) != (tc.want == 3) {
					t.Errorf("err %v with %d executions", err, got)
				}
				if gap := f.gap(stripeCreate); tc.want == 3 && gap < 500*time.Millisecond {
					t.Errorf("resent after %v, before stripe-go's sleep of 0.5 s", gap)
				}
				assertOneKey(t, keys)
			})
		}
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

// TestStripeCreateHung: a create the server read and never answered, under
// an otelretry deadline of 300 ms (the attempt timeout does not cut a
// write otelretry could not retry). otelretry ends each try check_state;
// stripe-go resends the POST twice under the same Idempotency-Key (so
// Stripe applies it once): 3 executions, and the caller's error matches
// otelretry.ErrOutcomeUnknown (stripe-go returns the last try's error as
// it is), in both setups. What differs is the record: at the defaults the
// 3 operation spans carry 3 operation ids and no contract, so retryinspect
// reports each resend as outer-layer-resend; with the recipe they share
// withStripeCall's operation id, count retry.operation.repeat 1 and 2, and
// carry retry.idempotency_contract=true, which retryinspect reads as a
// safe repeat; createCustomer sends them under its caller's key, and says
// the create must be sent again under it.
func TestStripeCreateHung(t *testing.T) {
	for _, s := range stripeSetups {
		t.Run(s.String(), func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
			spans, traced := newSpanLog()
			c, rt := stripeClient(f.URL, s, traced, otelretry.WithDeadline(300*time.Millisecond))
			var err error
			if s == recipe {
				_, err = createCustomer(t.Context(), c, "a@example.com", "create-a")
			} else {
				_, err = stripeCall(t.Context(), c, stripeCreate)
			}
			got, keys, ops := f.executed(stripeCreate), f.headerOf(stripeCreate, "Idempotency-Key"), spans.operations()
			t.Logf("%s: hung POST: executed %d in %d stripe-go tries, gap %v, Idempotency-Key %q, unknown outcome %v, err %v",
				s, got, rt.n.Load(), f.gap(stripeCreate).Round(10*time.Millisecond), keys, errors.Is(err, otelretry.ErrOutcomeUnknown), err)
			if got != 3 || rt.n.Load() != 3 || len(ops) != 3 {
				t.Fatalf("executed %d in %d tries, %d operation spans; measured 3 in 3", got, rt.n.Load(), len(ops))
			}
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err %v does not match ErrOutcomeUnknown", err)
			}
			assertOneKey(t, keys)
			ids := map[string]bool{}
			for i, op := range ops {
				ids[op[attrs.OperationIDKey].AsString()] = true
				contract, repeat := op[attrs.IdempotencyContractKey].AsBool(), op[attrs.RepeatKey].AsInt64()
				t.Logf("operation %d: id %s, contract %v, repeat %d, outcome %s", i, op[attrs.OperationIDKey].AsString(), contract, repeat, op[attrs.OutcomeKey].AsString())
				if contract != (s == recipe) || (s == recipe && repeat != int64(i)) {
					t.Errorf("operation %d: contract %v, repeat %d", i, contract, repeat)
				}
			}
			if want := map[setup]int{sdkDefaults: 3, recipe: 1}[s]; len(ids) != want {
				t.Errorf("%d operation ids, want %d", len(ids), want)
			}
			if s == recipe && (keys[0] != "create-a" || !strings.Contains(err.Error(), `send it again under key "create-a"`)) {
				t.Errorf("Idempotency-Key %q, err %v; want createCustomer's key, and its error for an unknown create", keys[0], err)
			}
		})
	}
}

// TestStripeCreateHungCallersSlot: withStripeCall's slot nests under the
// caller's own: after createCustomer's hung create (3 tries, each lost),
// the caller's outer slot holds the 3 tries, the last one unknown, and
// says OutcomeUnknown, as createCustomer's error does.
func TestStripeCreateHungCallersSlot(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	c, _ := stripeClient(f.URL, recipe, otelretry.WithDeadline(300*time.Millisecond))
	var outer otelretry.Results
	_, err := createCustomer(otelretry.WithResults(t.Context(), &outer), c, "a@example.com", "create-a")
	last, ok := outer.Last()
	t.Logf("hung create: executed %d, err %v, the caller's slot: %d operations, last unknown %v", f.executed(stripeCreate), err, len(outer.Operations()), last.OutcomeUnknown)
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) || !strings.Contains(err.Error(), `send it again under key "create-a"`) {
		t.Errorf("err %v, want createCustomer's error for an unknown create", err)
	}
	if len(outer.Operations()) != 3 || !ok || !last.OutcomeUnknown || !outer.OutcomeUnknown() {
		t.Errorf("the caller's slot holds %+v, want the 3 tries, the last unknown", outer.Operations())
	}
}

// TestStripeCreateHungOnce: a create whose first try hangs (300 ms
// deadline) and whose resend is answered 200: 2 executions under one
// Idempotency-Key, and the customer. A result slot holds both tries, and
// Results.OutcomeUnknown reports the first one's lost answer; the last
// try, which withStripeCall's function reads, has none: the resend's
// answer is the create's. createCustomer returns the customer.
func TestStripeCreateHungOnce(t *testing.T) {
	for _, slot := range []string{"Results", "createCustomer"} {
		t.Run(slot, func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					hang(r)
					return
				}
				stripeAnswer(w, 200, stripeCustomer)
			})
			c, rt := stripeClient(f.URL, recipe, otelretry.WithDeadline(300*time.Millisecond))
			var results otelretry.Results
			var cus *stripe.Customer
			var err error
			if slot == "createCustomer" {
				cus, err = createCustomer(t.Context(), c, "a@example.com", "create-a")
			} else {
				cus, err = stripeCall(otelretry.WithResults(t.Context(), &results), c, stripeCreate)
			}
			got := f.executed(stripeCreate)
			last, _ := results.Last()
			t.Logf("%s: POST hung, then 200: executed %d in %d tries, err %v, any try unknown %v, last try unknown %v", slot, got, rt.n.Load(), err, results.OutcomeUnknown(), last.OutcomeUnknown)
			if err != nil || cus.ID != "cus_1" || got != 2 || rt.n.Load() != 2 {
				t.Errorf("executed %d in %d tries, err %v; want 2 in 2 and the customer", got, rt.n.Load(), err)
			}
			assertOneKey(t, f.headerOf(stripeCreate, "Idempotency-Key"))
			if slot == "Results" && (!results.OutcomeUnknown() || last.OutcomeUnknown) {
				t.Errorf("Results.OutcomeUnknown %v, the last try's %v; want true, false", results.OutcomeUnknown(), last.OutcomeUnknown)
			}
		})
	}
}

// TestStripeCreateHungThenNotStored: the first try is applied and its
// answer lost; stripe-go's later tries are answered with what is not the
// result Stripe stored under the key: its 409 for a key whose first
// request is still in progress, or a proxy's 503. The customer may exist;
// createCustomer said nothing of it (withStripeCall read the last try
// alone, which was answered).
func TestStripeCreateHungThenNotStored(t *testing.T) {
	const inProgress = `{"error":{"type":"idempotency_error","message":"There is currently another in-progress request using this Idempotent Key: create-a. Please try again later."}}`
	for name, answer := range map[string]struct {
		status int
		body   string
	}{"409 key in progress": {http.StatusConflict, inProgress}, "a proxy's 503": {http.StatusServiceUnavailable, stripeProxyError}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					hang(r)
					return
				}
				stripeAnswer(w, answer.status, answer.body)
			})
			c, rt := stripeClient(f.URL, recipe, otelretry.WithDeadline(300*time.Millisecond))
			_, err := createCustomer(t.Context(), c, "a@example.com", "create-a")
			if err == nil || !strings.Contains(err.Error(), "may exist") {
				t.Errorf("executed %d in %d tries: %v; want an error that says the customer may exist", f.executed(stripeCreate), rt.n.Load(), err)
			}
		})
	}
}

// TestStripe429Hints: a 429 carrying each hint Stripe sends, then 200, in
// both setups. On a read, otelretry waits a Retry-After itself (2
// executions, 1 s apart); a 429 without a hint it hands back
// (budget_exhausted: its budget holds retries for 1 s after one),
// Stripe-Should-Retry: true included (the verdict never lifts the budget),
// and a write's 429 (stop). stripe-go retries none of these 429s:
// their rate_limit error object says no, whatever Stripe-Should-Retry
// says. Only a lock_timeout 429 is retried by stripe-go, after its own
// sleep (0.5 s).
func TestStripe429Hints(t *testing.T) {
	for _, s := range stripeSetups {
		for _, tc := range []struct {
			key, hint, value string
			body, name       string // name: the body's error code
			want             int
			minGap           time.Duration
			first            attrs.Outcome // how otelretry ended stripe-go's first try
		}{
			{stripeRead, "Retry-After", "1", stripeRateLimit, "rate_limit", 2, time.Second, attrs.OutcomeReturn},
			{stripeRead, "Stripe-Should-Retry", "true", stripeRateLimit, "rate_limit", 1, 0, attrs.OutcomeBudgetExhausted},
			{stripeCreate, "Retry-After", "1", stripeRateLimit, "rate_limit", 1, 0, attrs.OutcomeStop},
			{stripeCreate, "Stripe-Should-Retry", "true", stripeRateLimit, "rate_limit", 1, 0, attrs.OutcomeStop},
			{stripeCreate, "Stripe-Should-Retry", "true", stripeLockTimeout, "lock_timeout", 2, 500 * time.Millisecond, attrs.OutcomeStop},
		} {
			t.Run(s.String()+"/"+tc.key+"/"+tc.hint+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
					if n == 1 {
						w.Header().Set(tc.hint, tc.value)
						stripeAnswer(w, 429, tc.body)
						return
					}
					stripeAnswer(w, 200, stripeCustomer)
				})
				c, rt := stripeClient(f.URL, s)
				var results otelretry.Results
				_, err := stripeCall(otelretry.WithResults(t.Context(), &results), c, tc.key)
				got, gap := f.executed(tc.key), f.gap(tc.key)
				t.Logf("%s: %s 429 (%s) %s: %s, then 200: executed %d in %d stripe-go tries, gap %v, err %v, operations %+v", s, tc.key, tc.name, tc.hint, tc.value, got, rt.n.Load(), gap.Round(10*time.Millisecond), err, results.Operations())
				if got != tc.want || (err == nil) != (tc.want == 2) {
					t.Errorf("executed %d, err %v; want %d", got, err, tc.want)
				}
				if gap < tc.minGap {
					t.Errorf("gap %v, want at least %v", gap, tc.minGap)
				}
				if ops := results.Operations(); len(ops) == 0 || ops[0].Outcome != tc.first {
					t.Errorf("operations %+v, want the first to end %s", ops, tc.first)
				}
			})
		}
	}
}

// TestStripeShouldRetryFalse: a 503 with Stripe-Should-Retry: false, then
// 200, in both setups. otelretry honours the header and does not retry the
// read (1 execution). stripe-go ignores it on an error status: it retries
// the create when the 503's body holds no Stripe error object (2
// executions), and not when it does (1), as it would without the header.
func TestStripeShouldRetryFalse(t *testing.T) {
	for _, s := range stripeSetups {
		for _, tc := range []struct {
			key, name, body string
			want            int
		}{
			{stripeRead, "Stripe error object", stripeAPIError, 1},
			{stripeCreate, "Stripe error object", stripeAPIError, 1},
			{stripeCreate, "proxy body", stripeProxyError, 2},
		} {
			t.Run(s.String()+"/"+tc.key+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) {
					if n == 1 {
						w.Header().Set("Stripe-Should-Retry", "false")
						stripeAnswer(w, 503, tc.body)
						return
					}
					stripeAnswer(w, 200, stripeCustomer)
				})
				c, rt := stripeClient(f.URL, s)
				_, err := stripeCall(t.Context(), c, tc.key)
				got := f.executed(tc.key)
				t.Logf("%s: %s 503 Stripe-Should-Retry: false (%s), then 200: executed %d in %d stripe-go tries, err %v", s, tc.key, tc.name, got, rt.n.Load(), err)
				if got != tc.want || (err == nil) != (tc.want == 2) {
					t.Errorf("executed %d, err %v; want %d", got, err, tc.want)
				}
			})
		}
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
	c, rt := stripeClient(f.URL, sdkDefaults)
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
