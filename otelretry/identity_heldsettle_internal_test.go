// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Every operation that takes a kept key holds it while in flight and
// settles it, whatever ends it: the held count is zero once no repeat is
// in flight (keyMemory's godoc, otelretry/idempotency.go; a reviewer's
// test of the holder counting).
func TestHeldKeysSettleOnEveryEnd(t *testing.T) {
	ans := func(r *http.Request, s int) (*http.Response, error) {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		return &http.Response{StatusCode: s, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
	}
	cases := map[string]struct {
		base    func(*http.Request) (*http.Response, error)
		prepare PrepareAttemptFunc
		value   func(string) string
		cancel  bool
	}{
		"503":         {base: func(r *http.Request) (*http.Response, error) { return ans(r, 503) }},
		"200":         {base: func(r *http.Request) (*http.Response, error) { return ans(r, 200) }},
		"prepare":     {base: func(r *http.Request) (*http.Response, error) { return ans(r, 503) }, prepare: func(*http.Request, int) error { return errors.New("x") }},
		"base panics": {base: func(r *http.Request) (*http.Response, error) { panic("base") }},
		"value panics": {base: func(r *http.Request) (*http.Response, error) { return ans(r, 503) },
			value: func(k string) string {
				if k == strings.Repeat("0", 32) || k == strings.Repeat("f", 32) {
					return k // WithIdempotencyKeys' probes of the format
				}
				panic("value")
			}},
		"canceled": {base: func(r *http.Request) (*http.Response, error) { return ans(r, 503) }, cancel: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := WithOperationID(context.Background(), "job")
			oc := ctx.Value(operationIDKey{}).(*operationContext)
			// The first try: 503, its key kept.
			first := NewTransport(baseFunc(func(r *http.Request) (*http.Response, error) { return ans(r, 503) }),
				WithIdempotencyKeys(DraftIdempotencyKey()), WithoutBudget(), WithMaxAttempts(1))
			do := func(rt http.RoundTripper, ctx context.Context) {
				defer func() { _ = recover() }()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/order", bytes.NewReader([]byte(`{"a":1}`)))
				if resp, err := rt.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
			}
			do(first, ctx)
			if len(oc.keys.byName) != 1 {
				t.Fatalf("%d keys kept after the first try", len(oc.keys.byName))
			}
			opts := []Option{WithIdempotencyKeys(IdempotencyKey{Name: "Idempotency-Key", Value: tc.value}), WithoutBudget(), WithMaxAttempts(1)}
			if tc.prepare != nil {
				opts = append(opts, WithPrepareAttempt(tc.prepare))
			}
			rctx := ctx
			if tc.cancel {
				c, cancel := context.WithCancel(ctx)
				cancel()
				rctx = c
			}
			heldDuring := -1
			sawHeld := func() {
				oc.keys.mu.Lock()
				heldDuring = len(oc.keys.held)
				oc.keys.mu.Unlock()
			}
			base := func(r *http.Request) (*http.Response, error) { sawHeld(); return tc.base(r) }
			if tc.prepare != nil {
				prepare := tc.prepare
				opts[len(opts)-1] = WithPrepareAttempt(func(r *http.Request, n int) error { sawHeld(); return prepare(r, n) })
			}
			if tc.value != nil {
				value := tc.value
				opts[0] = WithIdempotencyKeys(IdempotencyKey{Name: "Idempotency-Key", Value: func(k string) string { sawHeld(); return value(k) }})
			}
			do(NewTransport(baseFunc(base), opts...), rctx)
			if !tc.cancel && heldDuring != 1 {
				t.Errorf("%d keys held while the repeat ran, want 1 (it took the kept key)", heldDuring)
			}
			oc.keys.mu.Lock()
			defer oc.keys.mu.Unlock()
			if len(oc.keys.held) != 0 {
				t.Errorf("%d keys still held after the repeat ended", len(oc.keys.held))
			}
		})
	}
}
