// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// azcore v1.24.0's pipeline (runtime.NewPipeline) at its defaults: 3
// retries of 408, 429, 500, 502, 503, 504 and of any transport error,
// PUTs and POSTs included, with no idempotency key; a server's hint is
// read from retry-after-ms, then x-ms-retry-after-ms, then Retry-After.
// Its backoff (0.8 s × (2^try − 1), ×0.8 to ×1.3) is shortened to a
// RetryDelay of 10 ms, which changes no count and no hint's wait. It adds
// no header per try (no request id unless a client adds
// runtime.NewRequestIDPolicy): the server sees identical tries. And with
// the recipe (otelretryOwnsAzureRetries). A small fake service: PUT
// creates an item, GET reads it.

const (
	azureItem  = `{"id":"a","name":"a small item"}`
	azureError = `{"error":{"code":"ServerBusy","message":"busy"}}`

	azureRead   = "GET /items/a"
	azureCreate = "PUT /items/a"
)

func azureAnswer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// azurePipeline is a pipeline over otelretry with the tests' short limits
// (then opts), at azcore's defaults or with the recipe; tries counts the
// pipeline's calls to otelretry.
func azurePipeline(s setup, opts ...otelretry.Option) (runtime.Pipeline, *tries) {
	var o policy.ClientOptions
	var rt *tries
	if s == recipe {
		otelretryOwnsAzureRetries(&o, http.DefaultTransport.(*http.Transport).Clone(), testOptions(opts...)...)
		hc := o.Transport.(*http.Client)
		rt = &tries{next: hc.Transport}
		hc.Transport = rt
	} else {
		rt = &tries{next: testTransport(opts...)}
		o.Transport = &http.Client{Transport: rt}
		o.Retry = policy.RetryOptions{RetryDelay: 10 * time.Millisecond}
	}
	return runtime.NewPipeline("sdkclients", "v0.0.1", runtime.PipelineOptions{}, &o), rt
}

// azureCall sends key ("GET /items/a" or "PUT /items/a") through the
// pipeline; a status other than 200 or 201 is an *azcore.ResponseError.
func azureCall(ctx context.Context, pl runtime.Pipeline, url, key string) error {
	method, path, _ := strings.Cut(key, " ")
	req, err := runtime.NewRequest(ctx, method, url+path)
	if err != nil {
		return err
	}
	if method == http.MethodPut {
		if err := req.SetBody(streaming.NopCloser(strings.NewReader(`{"name":"a small item"}`)), "application/json"); err != nil {
			return err
		}
	}
	resp, err := pl.Do(req)
	if err != nil {
		return err
	}
	if !runtime.HasStatusCode(resp, http.StatusOK, http.StatusCreated) {
		return runtime.NewResponseError(resp)
	}
	return nil
}

func azureServe(answer func(n int, w http.ResponseWriter) bool) func(k string, n int, w http.ResponseWriter, r *http.Request) {
	return func(k string, n int, w http.ResponseWriter, r *http.Request) {
		if answer(n, w) {
			return
		}
		status := http.StatusOK
		if r.Method == http.MethodPut {
			status = http.StatusCreated
		}
		azureAnswer(w, status, azureItem)
	}
}

// TestAzureReadRetried: a GET answered 503, 503, 200: otelretry retries
// it, 3 executions in one pipeline try, in both setups.
func TestAzureReadRetried(t *testing.T) {
	for _, s := range []setup{sdkDefaults, recipe} {
		t.Run(s.String(), func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, azureServe(func(n int, w http.ResponseWriter) bool {
				if n <= 2 {
					azureAnswer(w, 503, azureError)
					return true
				}
				return false
			}))
			pl, rt := azurePipeline(s)
			err := azureCall(t.Context(), pl, f.URL, azureRead)
			got := f.executed(azureRead)
			t.Logf("%s: GET 503, 503, 200: executed %d in %d pipeline tries, err %v", s, got, rt.n.Load(), err)
			if err != nil || got != 3 || rt.n.Load() != 1 {
				t.Errorf("executed %d in %d tries, err %v; want 3 in 1 and the item", got, rt.n.Load(), err)
			}
		})
	}
}

// TestAzureCreateHung: a PUT the server read and never answered, under an
// otelretry deadline of 300 ms (the attempt timeout does not cut a write
// it could not retry): otelretry ends each try check_state. At the
// defaults azcore's retry policy resends it 3 times: 4 executions, the
// same bytes each time (its GetBody seeks). With the recipe: 1. Either
// way the caller's error matches otelretry.ErrOutcomeUnknown (azcore
// returns the last try's error while the caller's context is live).
func TestAzureCreateHung(t *testing.T) {
	for _, s := range []setup{sdkDefaults, recipe} {
		t.Run(s.String(), func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
			pl, rt := azurePipeline(s, otelretry.WithDeadline(300*time.Millisecond))
			err := azureCall(t.Context(), pl, f.URL, azureCreate)
			got := f.executed(azureCreate)
			t.Logf("%s: hung PUT: executed %d in %d pipeline tries, bodies %q, unknown outcome %v, err %v",
				s, got, rt.n.Load(), f.bodiesOf(azureCreate), errors.Is(err, otelretry.ErrOutcomeUnknown), err)
			if want := map[setup]int{sdkDefaults: 4, recipe: 1}[s]; got != want || int(rt.n.Load()) != want {
				t.Errorf("executed %d in %d tries; measured %d in %d", got, rt.n.Load(), want, want)
			}
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err %v does not match ErrOutcomeUnknown", err)
			}
			for _, b := range f.bodiesOf(azureCreate) {
				if b != `{"name":"a small item"}` {
					t.Errorf("executed body %q", b)
				}
			}
		})
	}
}

// TestAzurePerCallRetryOptionsReplaceTheRecipes: a call's own
// policy.WithRetryOptions replaces the client's RetryOptions whole, the
// recipe's MaxRetries -1 with them, so a hung PUT is resent three times
// unless the call's options turn retries off too, as docs/sdk-recipes.md
// says (a reviewer's find).
func TestAzurePerCallRetryOptionsReplaceTheRecipes(t *testing.T) {
	for _, c := range []struct {
		name    string
		options policy.RetryOptions
		want    int
	}{
		{"per-call options without MaxRetries", policy.RetryOptions{RetryDelay: 10 * time.Millisecond}, 4},
		{"per-call options with MaxRetries -1", policy.RetryOptions{RetryDelay: 10 * time.Millisecond, MaxRetries: -1}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
			pl, rt := azurePipeline(recipe, otelretry.WithDeadline(100*time.Millisecond))
			err := azureCall(policy.WithRetryOptions(t.Context(), c.options), pl, f.URL, azureCreate)
			if got := f.executed(azureCreate); got != c.want || int(rt.n.Load()) != c.want {
				t.Errorf("hung PUT executed %d in %d tries, want %d", got, rt.n.Load(), c.want)
			}
			if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
				t.Errorf("err %v does not match ErrOutcomeUnknown", err)
			}
		})
	}
}

// TestAzure429Hints: a 429 carrying each hint Azure sends, then 200.
// otelretry reads all three and waits the hint of the GET itself: 2
// executions in one try, in both setups. It does not resend a PUT's 429:
// at the defaults azcore waits the hint and resends it (2 in 2); with the
// recipe the 429 is the answer (1), unless PUT is declared idempotent
// (WithIdempotentMethods): 2 in 1. Where a retry was made, the hint apart.
func TestAzure429Hints(t *testing.T) {
	for _, hint := range []struct {
		name, value string
		wait        time.Duration
	}{
		{"retry-after-ms", "300", 300 * time.Millisecond},
		{"x-ms-retry-after-ms", "300", 300 * time.Millisecond},
		{"Retry-After", "1", time.Second},
	} {
		for _, tc := range []struct {
			name     string
			s        setup
			key      string
			opts     []otelretry.Option
			executed int
			tries    int32
		}{
			{"SDK defaults", sdkDefaults, azureRead, nil, 2, 1},
			{"SDK defaults", sdkDefaults, azureCreate, nil, 2, 2},
			{"recipe", recipe, azureRead, nil, 2, 1},
			{"recipe", recipe, azureCreate, nil, 1, 1},
			{"recipe, PUT idempotent", recipe, azureCreate, []otelretry.Option{otelretry.WithIdempotentMethods(http.MethodPut)}, 2, 1},
		} {
			t.Run(tc.name+"/"+tc.key+"/"+hint.name, func(t *testing.T) {
				t.Parallel()
				f := newCountingServer(t, methodAndPath, azureServe(func(n int, w http.ResponseWriter) bool {
					if n == 1 {
						w.Header().Set(hint.name, hint.value)
						azureAnswer(w, 429, `{"error":{"code":"TooManyRequests","message":"slow down"}}`)
						return true
					}
					return false
				}))
				pl, rt := azurePipeline(tc.s, tc.opts...)
				err := azureCall(t.Context(), pl, f.URL, tc.key)
				got, gap := f.executed(tc.key), f.gap(tc.key)
				t.Logf("%s: %s 429 %s: %s, then 200: executed %d in %d pipeline tries, gap %v, err %v", tc.name, tc.key, hint.name, hint.value, got, rt.n.Load(), gap.Round(10*time.Millisecond), err)
				if got != tc.executed || rt.n.Load() != tc.tries || (err == nil) != (got == 2) {
					t.Errorf("executed %d in %d tries, err %v; want %d in %d", got, rt.n.Load(), err, tc.executed, tc.tries)
				}
				if got == 2 && gap < hint.wait {
					t.Errorf("gap %v, want at least %v (the hint)", gap, hint.wait)
				}
			})
		}
	}
}

// TestAzureMsHintOfZeroFallsThrough: a 429 with retry-after-ms 0 or 0.5
// and Retry-After: 1, then 200. azcore v1.24.0 accepts in retry-after-ms
// only a whole number above 0, so it reads Retry-After: at its defaults it
// waits 1 s before it resends a PUT (2 in 2 tries). otelretry's defaults
// read retry-after-ms as openai-go does (0 and fractions are hints): a GET
// is retried after a hint of 0 or 0.5 ms. The recipe reads the headers as
// azcore does (HintWholeMilliseconds): the GET waits Retry-After's second.
// The hint otelretry read is what its Backoff was shown.
func TestAzureMsHintOfZeroFallsThrough(t *testing.T) {
	for _, ms := range []struct {
		value string
		hint  time.Duration // as otelretry's defaults read it
	}{{"0", 0}, {"0.5", 500 * time.Microsecond}} {
		for _, tc := range []struct {
			name     string
			s        setup
			key      string
			executed int
			tries    int32
			hint     time.Duration // what otelretry's Backoff was shown; -1: not asked
			wait     time.Duration // the least gap between the two executions
		}{
			{"SDK defaults", sdkDefaults, azureCreate, 2, 2, -1, time.Second},
			{"SDK defaults", sdkDefaults, azureRead, 2, 1, ms.hint, 0},
			{"recipe", recipe, azureRead, 2, 1, time.Second, time.Second},
		} {
			t.Run(tc.name+"/"+tc.key+"/retry-after-ms "+ms.value, func(t *testing.T) {
				t.Parallel()
				f := newCountingServer(t, methodAndPath, azureServe(func(n int, w http.ResponseWriter) bool {
					if n == 1 {
						w.Header().Set("retry-after-ms", ms.value)
						w.Header().Set("Retry-After", "1")
						azureAnswer(w, 429, `{"error":{"code":"TooManyRequests","message":"slow down"}}`)
						return true
					}
					return false
				}))
				var mu sync.Mutex
				shown := time.Duration(-1)
				pl, rt := azurePipeline(tc.s, otelretry.WithBackoff(otelretry.Backoff(func(_ int, a otelretry.Answer) time.Duration {
					mu.Lock()
					shown = a.RetryAfter
					mu.Unlock()
					return 10 * time.Millisecond
				})))
				err := azureCall(t.Context(), pl, f.URL, tc.key)
				got, gap := f.executed(tc.key), f.gap(tc.key)
				mu.Lock()
				defer mu.Unlock()
				t.Logf("%s: %s 429 retry-after-ms: %s, Retry-After: 1, then 200: executed %d in %d pipeline tries, gap %v, otelretry's hint %v, err %v",
					tc.name, tc.key, ms.value, got, rt.n.Load(), gap.Round(10*time.Millisecond), shown, err)
				if err != nil || got != tc.executed || rt.n.Load() != tc.tries {
					t.Errorf("executed %d in %d tries, err %v; want %d in %d", got, rt.n.Load(), err, tc.executed, tc.tries)
				}
				if shown != tc.hint {
					t.Errorf("otelretry's Backoff was shown a hint of %v, want %v", shown, tc.hint)
				}
				if gap < tc.wait {
					t.Errorf("gap %v, want at least %v", gap, tc.wait)
				}
			})
		}
	}
}

// TestAzureCallerDeadlineResults: 5 creates (PUT), each under a caller's
// deadline of 200 ms, against a create that hangs: 1 execution each.
// azcore's retry policy returns ctx.Err() once the context is done, so at
// its defaults the caller's error never matches ErrOutcomeUnknown (issue
// 33), while a result slot reports the unknown write every time (one
// operation, deadline_exceeded). With the recipe, keepOutcomeUnknown puts
// otelretry's error back: it matches ErrOutcomeUnknown and
// context.DeadlineExceeded every time.
func TestAzureCallerDeadlineResults(t *testing.T) {
	const creates = 5
	for _, s := range []setup{sdkDefaults, recipe} {
		t.Run(s.String(), func(t *testing.T) {
			t.Parallel()
			f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
			pl, rt := azurePipeline(s)
			kept := 0
			for i := range creates {
				ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
				var results otelretry.Results
				var err error
				if s == recipe {
					err = keepOutcomeUnknown(ctx, func(ctx context.Context) error { return azureCall(ctx, pl, f.URL, azureCreate) })
				} else {
					err = azureCall(otelretry.WithResults(ctx, &results), pl, f.URL, azureCreate)
				}
				cancel()
				if errors.Is(err, otelretry.ErrOutcomeUnknown) {
					kept++
				}
				if got := f.executed(azureCreate); got != i+1 || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("create %d: executed %d in all, err %v; want 1 more and a deadline", i, got, err)
				}
				if ops := results.Operations(); s == sdkDefaults && (len(ops) != 1 || !results.OutcomeUnknown() || ops[0].Outcome != attrs.OutcomeDeadlineExceeded) {
					t.Errorf("create %d: operations %+v; want one unknown write ended deadline_exceeded", i, ops)
				}
			}
			t.Logf("%s: %d hung creates, caller deadline 200ms: executed %d in %d pipeline tries; the error matched ErrOutcomeUnknown %d times", s, creates, f.executed(azureCreate), rt.n.Load(), kept)
			if want := map[setup]int{sdkDefaults: 0, recipe: creates}[s]; rt.n.Load() != creates || kept != want {
				t.Errorf("%d tries, %d errors matched ErrOutcomeUnknown; want %d and %d", rt.n.Load(), kept, creates, want)
			}
		})
	}
}
