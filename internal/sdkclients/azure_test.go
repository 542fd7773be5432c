// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
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
// runtime.NewRequestIDPolicy): the server sees identical tries. A small
// fake service: PUT creates an item, GET reads it.

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

// azurePipeline is a pipeline over a fresh otelretry Transport in an
// http.Client; tries counts the pipeline's calls to otelretry.
func azurePipeline(opts ...otelretry.Option) (runtime.Pipeline, *tries) {
	rt := &tries{next: testTransport(opts...)}
	return runtime.NewPipeline("sdkclients", "v0.0.1", runtime.PipelineOptions{}, &policy.ClientOptions{
		Transport: &http.Client{Transport: rt},
		Retry:     policy.RetryOptions{RetryDelay: 10 * time.Millisecond},
	}), rt
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
// it, 3 executions in one pipeline try.
func TestAzureReadRetried(t *testing.T) {
	f := newCountingServer(t, methodAndPath, azureServe(func(n int, w http.ResponseWriter) bool {
		if n <= 2 {
			azureAnswer(w, 503, azureError)
			return true
		}
		return false
	}))
	pl, rt := azurePipeline()
	err := azureCall(t.Context(), pl, f.URL, azureRead)
	got := f.executed(azureRead)
	t.Logf("GET 503, 503, 200: executed %d in %d pipeline tries, err %v", got, rt.n.Load(), err)
	if err != nil || got != 3 || rt.n.Load() != 1 {
		t.Errorf("executed %d in %d tries, err %v; want 3 in 1 and the item", got, rt.n.Load(), err)
	}
}

// TestAzureCreateHung: a PUT the server read and never answered.
// otelretry waits for its answer until its deadline (2 s: the attempt
// timeout does not cut a write it could not retry) and ends each try
// check_state; azcore's retry policy resends it 3 times: 4 executions,
// the same bytes each time (its GetBody seeks). The caller's error still
// matches otelretry.ErrOutcomeUnknown (azcore returns the last try's error
// while the caller's context is live).
func TestAzureCreateHung(t *testing.T) {
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	pl, rt := azurePipeline()
	err := azureCall(t.Context(), pl, f.URL, azureCreate)
	got := f.executed(azureCreate)
	t.Logf("hung PUT: executed %d in %d pipeline tries, bodies %q, unknown outcome %v, err %v",
		got, rt.n.Load(), f.bodiesOf(azureCreate), errors.Is(err, otelretry.ErrOutcomeUnknown), err)
	if got != 4 || rt.n.Load() != 4 {
		t.Errorf("executed %d in %d tries; measured 4 in 4", got, rt.n.Load())
	}
	if !errors.Is(err, otelretry.ErrOutcomeUnknown) {
		t.Errorf("err %v does not match ErrOutcomeUnknown", err)
	}
	for _, b := range f.bodiesOf(azureCreate) {
		if b != `{"name":"a small item"}` {
			t.Errorf("executed body %q", b)
		}
	}
}

// TestAzure429Hints: a 429 carrying each hint Azure sends, then 200.
// otelretry waits a Retry-After on the read itself (1 try); it does not
// read retry-after-ms nor x-ms-retry-after-ms, and hands those 429s back
// (its budget holds retries for 1 s after a 429 without Retry-After), and
// every 429 of the PUT. azcore then waits the hint: 2 executions, the hint
// apart.
func TestAzure429Hints(t *testing.T) {
	for _, tc := range []struct {
		key, hint, value string
		tries            int32
		minGap           time.Duration
	}{
		{azureRead, "Retry-After", "1", 1, 900 * time.Millisecond},
		{azureRead, "retry-after-ms", "1200", 2, 1150 * time.Millisecond},
		{azureRead, "x-ms-retry-after-ms", "1200", 2, 1150 * time.Millisecond},
		{azureCreate, "Retry-After", "1", 2, 900 * time.Millisecond},
		{azureCreate, "retry-after-ms", "1200", 2, 1150 * time.Millisecond},
		{azureCreate, "x-ms-retry-after-ms", "1200", 2, 1150 * time.Millisecond},
	} {
		t.Run(tc.key+"/"+tc.hint, func(t *testing.T) {
			f := newCountingServer(t, methodAndPath, azureServe(func(n int, w http.ResponseWriter) bool {
				if n == 1 {
					w.Header().Set(tc.hint, tc.value)
					azureAnswer(w, 429, `{"error":{"code":"TooManyRequests","message":"slow down"}}`)
					return true
				}
				return false
			}))
			pl, rt := azurePipeline()
			err := azureCall(t.Context(), pl, f.URL, tc.key)
			got, gap := f.executed(tc.key), f.gap(tc.key)
			t.Logf("%s 429 %s: %s, then 200: executed %d in %d pipeline tries, gap %v, err %v", tc.key, tc.hint, tc.value, got, rt.n.Load(), gap.Round(10*time.Millisecond), err)
			if err != nil || got != 2 || rt.n.Load() != tc.tries {
				t.Errorf("executed %d in %d tries, err %v; want 2 in %d", got, rt.n.Load(), err, tc.tries)
			}
			if gap < tc.minGap {
				t.Errorf("gap %v, want at least %v (the hint)", gap, tc.minGap)
			}
		})
	}
}

// TestAzureCallerDeadlineResults: 10 creates (PUT), each under a caller's
// deadline of 300 ms, against a create that hangs. azcore's retry policy
// returns ctx.Err() once the context is done, so the caller's error never
// matches ErrOutcomeUnknown (issue 33: lost in 8 or 9 of 10 before
// otelretry waited for the caller's context; in 10 of 10 now). The result
// slot reports the unknown write for every create: 1 execution each, one
// operation, deadline_exceeded.
func TestAzureCallerDeadlineResults(t *testing.T) {
	const creates = 10
	f := newCountingServer(t, methodAndPath, func(k string, n int, w http.ResponseWriter, r *http.Request) { hang(r) })
	pl, rt := azurePipeline()
	kept := 0
	for i := range creates {
		var results otelretry.Results
		ctx, cancel := context.WithTimeout(otelretry.WithResults(t.Context(), &results), 300*time.Millisecond)
		err := azureCall(ctx, pl, f.URL, azureCreate)
		cancel()
		if errors.Is(err, otelretry.ErrOutcomeUnknown) {
			kept++
		}
		ops := results.Operations()
		if got := f.executed(azureCreate); got != i+1 || !errors.Is(err, context.DeadlineExceeded) || len(ops) != 1 ||
			!results.OutcomeUnknown() || ops[0].Outcome != attrs.OutcomeDeadlineExceeded {
			t.Errorf("create %d: executed %d in all, operations %+v, err %v; want 1 more, one unknown write ended deadline_exceeded", i, got, ops, err)
		}
	}
	t.Logf("%d hung creates, caller deadline 300ms: executed %d in %d pipeline tries; the error kept ErrOutcomeUnknown %d times, the slot every time", creates, f.executed(azureCreate), rt.n.Load(), kept)
	if rt.n.Load() != creates || kept != 0 {
		t.Errorf("%d tries, %d errors kept ErrOutcomeUnknown; measured %d and 0 (azcore returns ctx.Err())", rt.n.Load(), kept, creates)
	}
}
