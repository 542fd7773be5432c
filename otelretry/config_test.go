// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// WithRetryableStatuses replaces the set: a status in it is retried, one
// outside it (even a default one) is not.
func TestWithRetryableStatusesReplacesTheSet(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   []string
	}{
		{500, []string{"500 retry retryable_status", "200 return response"}},
		{503, []string{"503 stop status"}},
	} {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, []scripted.Step{{Status: tc.status}, {Status: 200}},
				append(seedLike, otelretry.WithRetryableStatuses(500))...)
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			sameTuples(t, h, tc.want...)
		})
	}
}

// Both formatters name their spans, for every attempt; with client spans
// the attempt formatter names otelhttp's CLIENT span.
func TestSpanNameFormatters(t *testing.T) {
	for _, clientSpans := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			opts := append(seedLike,
				otelretry.WithSpanNameFormatter(func(r *http.Request) string { return "orders " + r.Method }),
				otelretry.WithAttemptSpanNameFormatter(func(r *http.Request) string { return "orders call " + r.Method }))
			if !clientSpans {
				opts = append(opts, otelretry.WithoutClientSpans())
			}
			h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, opts...)
			resp, err := h.client.Do(get(t, t.Context(), "http://api.test/orders/1"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := h.operation(t).Name(); got != "orders GET" {
				t.Errorf("clientSpans=%v: operation span %q, want %q", clientSpans, got, "orders GET")
			}
			attempts := h.attempts()
			if len(attempts) != 2 {
				t.Fatalf("attempt spans = %d, want 2", len(attempts))
			}
			for _, a := range attempts {
				if a.Name() != "orders call GET" {
					t.Errorf("clientSpans=%v: attempt span %q, want %q", clientSpans, a.Name(), "orders call GET")
				}
			}
		})
	}
}

// Options say when they ignore a value: once, through otel.Handle.
func TestOptionsReportIgnoredValues(t *testing.T) {
	var mu sync.Mutex
	var reported []string
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		reported = append(reported, err.Error())
		mu.Unlock()
	}))
	defer otel.SetErrorHandler(prev)
	otelretry.NewTransport(scripted.New(), otelretry.WithMaxAttempts(0), otelretry.WithDeadline(-time.Second),
		otelretry.WithRetryableStatuses(200, 503), otelretry.WithRetryableStatuses(), otelretry.WithIdempotentMethods("put", ""))
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 {
		t.Fatalf("reported %d times, want once: %q", len(reported), reported)
	}
	for _, want := range []string{"WithMaxAttempts(0)", "WithDeadline(-1s)", "WithRetryableStatuses(200)", "WithRetryableStatuses([])", `WithIdempotentMethods("")`} {
		if !strings.Contains(reported[0], want) {
			t.Errorf("report %q does not name %s", reported[0], want)
		}
	}
}

// A bad value given twice, as the same shared Budget or Throttle on a
// Transport's options twice or the same bad option repeated, is named once
// in the one report (it was named twice: a reviewer's find).
func TestABadValueGivenTwiceIsReportedOnce(t *testing.T) {
	reported := captureOtelErrors(t)
	b, th := &otelretry.Budget{Tokens: -1}, &otelretry.Throttle{Window: -1}
	otelretry.NewTransport(scripted.New(), otelretry.WithBudget(b), otelretry.WithThrottle(th), otelretry.WithMaxAttempts(0),
		otelretry.WithBudget(b), otelretry.WithThrottle(th), otelretry.WithMaxAttempts(0), otelretry.WithMaxAttempts(-1),
		// Another Budget sharing the bad value, with one of its own (named
		// twice after the first fix: a reviewer's find).
		otelretry.WithBudget(&otelretry.Budget{Tokens: -1, MaxHosts: -1}))
	errs := reported()
	if len(errs) != 1 {
		t.Fatalf("reported %d times, want once: %q", len(errs), errs)
	}
	for want, n := range map[string]int{"Tokens": 1, "MaxHosts": 1, "Window": 1, "WithMaxAttempts(0)": 1, "WithMaxAttempts(-1)": 1} {
		if got := strings.Count(errs[0].Error(), want); got != n {
			t.Errorf("the report names %s %d times, want %d: %q", want, got, n, errs[0])
		}
	}
}

// README.md: given twice, an option's last value counts, but
// WithIdempotentMethods and WithRetryHint add to the methods and hints.
func TestAnOptionGivenTwice(t *testing.T) {
	steps := func(status int, h http.Header) []scripted.Step {
		return []scripted.Step{{Status: status, Header: h}, {Status: status, Header: h}, {Status: status, Header: h}, {Status: 200}}
	}
	for _, tc := range []struct {
		name   string
		method string
		steps  []scripted.Step
		opts   []otelretry.Option
		calls  int
	}{
		{"WithMaxAttempts: the last", http.MethodGet, steps(503, nil),
			[]otelretry.Option{otelretry.WithMaxAttempts(4), otelretry.WithMaxAttempts(2)}, 2},
		{"WithIdempotentMethods: both", "LOCK", steps(503, nil),
			[]otelretry.Option{otelretry.WithIdempotentMethods("LOCK"), otelretry.WithIdempotentMethods("PURGE")}, 3},
		{"WithRetryHint: both", http.MethodGet, steps(503, http.Header{"X-Wait-A": {"1"}}),
			[]otelretry.Option{otelretry.WithRetryHint("X-Wait-A", otelretry.HintSeconds), otelretry.WithRetryHint("X-Wait-B", otelretry.HintSeconds),
				otelretry.WithDeadline(1500 * time.Millisecond)}, 2},
		{"WithShouldRetryHeaders: the last", http.MethodGet, steps(503, http.Header{"X-Verdict-A": {"false"}}),
			[]otelretry.Option{otelretry.WithShouldRetryHeaders("X-Verdict-A"), otelretry.WithShouldRetryHeaders("X-Verdict-B")}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := append([]otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)), otelretry.WithoutBudget()}, tc.opts...)
				h := newHarness(t, tc.steps, opts...)
				req, err := http.NewRequestWithContext(t.Context(), tc.method, "http://api.test/", nil)
				if err != nil {
					t.Fatal(err)
				}
				if resp, err := h.client.Do(req); err == nil {
					resp.Body.Close()
				}
				if got := len(h.base.Calls()); got != tc.calls {
					t.Errorf("%d calls, want %d", got, tc.calls)
				}
			})
		})
	}
}

// WithAttemptHeader's godoc: one header is sent; given again, the last
// name counts (a reviewer's find: the godoc did not say).
func TestAnAttemptHeaderGivenTwiceSendsTheLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, append(seedLike,
			otelretry.WithAttemptHeader("Amz-Sdk-Request"), otelretry.WithAttemptHeader("X-Stainless-Retry-Count"))...)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		calls := h.base.Calls()
		if len(calls) != 2 {
			t.Fatalf("%d calls, want 2", len(calls))
		}
		for i, c := range calls {
			if got := c.Header.Values("X-Stainless-Retry-Count"); len(got) != 1 || got[0] != strconv.Itoa(i) {
				t.Errorf("call %d: X-Stainless-Retry-Count %q, want %q", i+1, got, strconv.Itoa(i))
			}
			if got := c.Header.Values("Amz-Sdk-Request"); len(got) != 0 {
				t.Errorf("call %d: the first name was sent too: %q", i+1, got)
			}
		}
	})
}

// Method names are normalized: "put" declares PUT.
func TestIdempotentMethodsAreNormalized(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, append(seedLike, otelretry.WithIdempotentMethods("put"))...)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/items/1", strings.NewReader("x"))
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sameTuples(t, h, "503 retry retryable_status", "200 return response")
	})
}

// Valid options, and nil values, which options ignore by design, make
// NewTransport report nothing through otel.Handle.
func TestValidOptionsReportNothing(t *testing.T) {
	reported := captureOtelErrors(t)
	otelretry.NewTransport(scripted.New(), otelretry.WithMaxAttempts(1), otelretry.WithDeadline(time.Second),
		otelretry.WithAttemptTimeout(time.Millisecond), otelretry.WithRetryableStatuses(500),
		otelretry.WithIdempotentMethods("PUT"), otelretry.WithBodyBuffer(0, 0), otelretry.WithBackoff(nil),
		otelretry.WithTracerProvider(nil), otelretry.WithClassifier(nil), otelretry.WithBudget(nil), nil)
	if errs := reported(); len(errs) != 0 {
		t.Errorf("NewTransport reported %v", errs)
	}
}
