// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// openai-go v3.98.0 at its defaults (2 retries), over otelretry with the
// tests' short limits. It retries 408, 409, 429, every 5xx and any
// transport error, POSTs included, with no idempotency key; it reads
// x-should-retry first, then Retry-After-Ms, then Retry-After, and sends
// X-Stainless-Retry-Count: N on its N-th retry.

const (
	openaiModel       = `{"id":"gpt-4o","object":"model","created":1,"owned_by":"openai"}`
	openaiVectorStore = `{"id":"vs_1","object":"vector_store","created_at":1,"name":"docs","status":"completed"}`
	openaiError       = `{"error":{"message":"busy","type":"server_error","code":null}}`
	openaiRateLimit   = `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`

	openaiRead   = "GET /v1/models/gpt-4o"
	openaiCreate = "POST /v1/vector_stores" // a create: a new store each time it is executed
)

func openaiAnswer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// openaiClient is a client of the fake over a fresh otelretry Transport;
// tries counts the client's calls to otelretry. shortBackoff caps
// openai-go's own backoff (0.5 s, 1 s, less up to a quarter of jitter) at
// 10 ms with WithMaxRetryDelay; that option also refuses a server's hint
// above it, so the hints' tests keep the default.
func openaiClient(url string, shortBackoff bool) (openai.Client, *tries) {
	rt := &tries{next: testTransport()}
	opts := []option.RequestOption{option.WithAPIKey("sk-test"), option.WithBaseURL(url + "/v1/"), option.WithHTTPClient(&http.Client{Transport: rt})}
	if shortBackoff {
		opts = append(opts, option.WithMaxRetryDelay(10*time.Millisecond))
	}
	return openai.NewClient(opts...), rt
}

func openaiCall(t *testing.T, c openai.Client, key string) error {
	var err error
	if key == openaiRead {
		_, err = c.Models.Get(t.Context(), "gpt-4o")
	} else {
		_, err = c.VectorStores.New(t.Context(), openai.VectorStoreNewParams{Name: openai.String("docs")})
	}
	return err
}

// openaiServe answers every request of the fake: answer plays the first
// ones (n from 1), the rest succeed.
func openaiServe(answer func(n int, w http.ResponseWriter) bool) func(k string, n int, w http.ResponseWriter, r *http.Request) {
	return func(k string, n int, w http.ResponseWriter, r *http.Request) {
		if answer(n, w) {
			return
		}
		if k == openaiRead {
			openaiAnswer(w, 200, openaiModel)
			return
		}
		openaiAnswer(w, 200, openaiVectorStore)
	}
}

// TestOpenAIAnswered503: a read (GET a model) and a create (POST a vector
// store) answered 503, 503, 200. otelretry retries the read: 3 executions
// in one openai-go call, each with X-Stainless-Retry-Count: 0. openai-go
// retries the create, which otelretry does not repeat: 3 executions in 3
// calls, counted 0, 1, 2.
func TestOpenAIAnswered503(t *testing.T) {
	for _, tc := range []struct {
		key       string
		calls     int32
		retryHdrs []string
	}{
		{openaiRead, 1, []string{"0", "0", "0"}},
		{openaiCreate, 3, []string{"0", "1", "2"}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, openaiServe(func(n int, w http.ResponseWriter) bool {
				if n <= 2 {
					openaiAnswer(w, 503, openaiError)
					return true
				}
				return false
			}))
			c, rt := openaiClient(f.URL, true)
			err := openaiCall(t, c, tc.key)
			got, counts := f.executed(tc.key), f.headerOf(tc.key, "X-Stainless-Retry-Count")
			t.Logf("%s 503, 503, 200: executed %d in %d openai-go calls, X-Stainless-Retry-Count %q, err %v", tc.key, got, rt.n.Load(), counts, err)
			if err != nil || got != 3 || rt.n.Load() != tc.calls {
				t.Errorf("executed %d in %d calls, err %v; want 3 in %d and the answer", got, rt.n.Load(), err, tc.calls)
			}
			assertHeaders(t, "X-Stainless-Retry-Count", counts, tc.retryHdrs)
		})
	}
}

func assertHeaders(t *testing.T, name string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s per execution %q, want %q", name, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s per execution %q, want %q", name, got, want)
			return
		}
	}
}

// TestOpenAICreateHung: a vector store create the server read and never
// answered. otelretry waits for its answer until its deadline (2 s: the
// attempt timeout does not cut a write it could not retry) and ends each
// try check_state; openai-go resends it twice with no idempotency key
// (backoff shortened to 10 ms): 3 executions, 3
// stores. The caller's error still matches otelretry.ErrOutcomeUnknown
// (openai-go returns the last try's error while the caller's context is
// live).
func TestOpenAICreateHung(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	c, rt := openaiClient(f.URL, true)
	err := openaiCall(t, c, openaiCreate)
	got, counts := f.executed(openaiCreate), f.headerOf(openaiCreate, "X-Stainless-Retry-Count")
	t.Logf("hung POST: executed %d in %d openai-go calls, X-Stainless-Retry-Count %q, Idempotency-Key %q, unknown outcome %v, err %v",
		got, rt.n.Load(), counts, f.headerOf(openaiCreate, "Idempotency-Key"), errors.Is(err, otelretry.ErrOutcomeUnknown), err)
	if got != 3 || rt.n.Load() != 3 {
		t.Errorf("executed %d in %d calls; measured 3 in 3", got, rt.n.Load())
	}
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("err %v does not match ErrOutcomeUnknown", err)
	}
	assertHeaders(t, "X-Stainless-Retry-Count", counts, []string{"0", "1", "2"})
	assertHeaders(t, "Idempotency-Key", f.headerOf(openaiCreate, "Idempotency-Key"), []string{"", "", ""})
}

// TestOpenAI429Hints: a 429 carrying each hint OpenAI sends, then 200, at
// openai-go's default backoff. otelretry waits a Retry-After on the read
// itself (1 call); it does not read retry-after-ms, and hands the 429 back
// (its budget holds retries for 1 s after a 429 without Retry-After), and
// every 429 of the POST. openai-go then waits the hint: 2 executions, the
// hint apart (its own backoff would be 0.375–0.5 s).
func TestOpenAI429Hints(t *testing.T) {
	for _, tc := range []struct {
		key, hint, value string
		calls            int32
		minGap           time.Duration
	}{
		{openaiRead, "Retry-After", "1", 1, 900 * time.Millisecond},
		{openaiRead, "retry-after-ms", "1200", 2, 1150 * time.Millisecond},
		{openaiCreate, "Retry-After", "1", 2, 900 * time.Millisecond},
		{openaiCreate, "retry-after-ms", "1200", 2, 1150 * time.Millisecond},
	} {
		t.Run(tc.key+"/"+tc.hint, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, openaiServe(func(n int, w http.ResponseWriter) bool {
				if n == 1 {
					w.Header().Set(tc.hint, tc.value)
					openaiAnswer(w, 429, openaiRateLimit)
					return true
				}
				return false
			}))
			c, rt := openaiClient(f.URL, false)
			err := openaiCall(t, c, tc.key)
			got, gap := f.executed(tc.key), f.gap(tc.key)
			t.Logf("%s 429 %s: %s, then 200: executed %d in %d openai-go calls, gap %v, X-Stainless-Retry-Count %q, err %v",
				tc.key, tc.hint, tc.value, got, rt.n.Load(), gap.Round(10*time.Millisecond), f.headerOf(tc.key, "X-Stainless-Retry-Count"), err)
			if err != nil || got != 2 || rt.n.Load() != tc.calls {
				t.Errorf("executed %d in %d calls, err %v; want 2 in %d", got, rt.n.Load(), err, tc.calls)
			}
			if gap < tc.minGap {
				t.Errorf("gap %v, want at least %v (the hint)", gap, tc.minGap)
			}
		})
	}
}

// TestOpenAIShouldRetryFalse: a 503 with x-should-retry: false, then 200.
// otelretry ignores the header and retries the read (2 executions);
// openai-go honours it on the create, which otelretry does not repeat (1).
func TestOpenAIShouldRetryFalse(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int
	}{
		{openaiRead, 2},
		{openaiCreate, 1},
	} {
		t.Run(tc.key, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, openaiServe(func(n int, w http.ResponseWriter) bool {
				if n == 1 {
					w.Header().Set("x-should-retry", "false")
					openaiAnswer(w, 503, openaiError)
					return true
				}
				return false
			}))
			c, rt := openaiClient(f.URL, true)
			err := openaiCall(t, c, tc.key)
			got := f.executed(tc.key)
			t.Logf("%s 503 x-should-retry: false, then 200: executed %d in %d openai-go calls, err %v", tc.key, got, rt.n.Load(), err)
			if got != tc.want || rt.n.Load() != 1 || (err == nil) != (tc.want == 2) {
				t.Errorf("executed %d in %d calls, err %v; want %d in 1", got, rt.n.Load(), err, tc.want)
			}
		})
	}
}

// TestOpenAICallerDeadlineResults: 10 vector store creates, each under a
// caller's deadline of 300 ms, against a create that hangs. openai-go's
// request loop returns ctx.Err() once the context is done, so the caller's
// error never matches ErrOutcomeUnknown (issue 33: lost in 8 or 9 of 10
// before otelretry waited for the caller's context; in 10 of 10 now). The
// result slot reports the unknown write for every create: 1 execution
// each, one operation, deadline_exceeded.
func TestOpenAICallerDeadlineResults(t *testing.T) {
	const creates = 10
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	c, rt := openaiClient(f.URL, true)
	kept := 0
	for i := range creates {
		var results otelretry.Results
		ctx, cancel := context.WithTimeout(otelretry.WithResults(t.Context(), &results), 300*time.Millisecond)
		_, err := c.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("docs")})
		cancel()
		if errors.Is(err, otelretry.ErrOutcomeUnknown) {
			kept++
		}
		ops := results.Operations()
		if got := f.executed(openaiCreate); got != i+1 || !errors.Is(err, context.DeadlineExceeded) || len(ops) != 1 ||
			!results.OutcomeUnknown() || ops[0].Outcome != attrs.OutcomeDeadlineExceeded {
			t.Errorf("create %d: executed %d in all, operations %+v, err %v; want 1 more, one unknown write ended deadline_exceeded", i, got, ops, err)
		}
	}
	t.Logf("%d hung creates, caller deadline 300ms: executed %d in %d openai-go calls; the error kept ErrOutcomeUnknown %d times, the slot every time", creates, f.executed(openaiCreate), rt.n.Load(), kept)
	if rt.n.Load() != creates || kept != 0 {
		t.Errorf("%d calls, %d errors kept ErrOutcomeUnknown; measured %d and 0 (openai-go returns ctx.Err())", rt.n.Load(), kept, creates)
	}
}
