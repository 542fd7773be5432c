// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// Every handler that simulates a hung dependency waits only until the
// client goes away (sleep: "waits d or until the client goes away"): given
// a request whose client already left, each answers without waiting, on
// the bubble's fake clock.
func TestTheFlakyServerStopsWaitingWhenTheClientLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newFlakyServer(nil).handler()
		gone, cancel := context.WithCancel(t.Context())
		cancel()
		for _, c := range []struct{ method, path string }{
			{http.MethodGet, "/slow"}, {http.MethodGet, "/unavailable"}, {http.MethodGet, "/stall-first"},
			{http.MethodPost, "/orders/apply-then-stall"}, {http.MethodPost, "/orders/lost-first"},
		} {
			req := httptest.NewRequestWithContext(gone, c.method, c.path, strings.NewReader(`{"sku":"Z-9"}`))
			req.Header.Set(keyHeader, "gone")
			start := time.Now()
			h.ServeHTTP(httptest.NewRecorder(), req)
			if waited := time.Since(start); waited != 0 {
				t.Errorf("%s %s waited %v for a client that had left", c.method, c.path, waited)
			}
		}
	})
}

// The write the lost-first handler applies is the whole body it was sent,
// which the state endpoint returns as is; both writes were counted.
func TestTheFlakyServerAppliesTheWholeWrite(t *testing.T) {
	s := newFlakyServer(nil)
	h := s.handler()
	const body = `{"sku":"C-3","quantity":12,"note":"a write longer than a few bytes"}`
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	post := func(ctx context.Context) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/orders/lost-first", strings.NewReader(body))
		req.Header.Set(keyHeader, "op-1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	post(gone) // the first is lost
	created := post(t.Context())
	want := `{"key":"op-1","order":` + body + `}`
	if created.Code != http.StatusCreated || created.Body.String() != want || !json.Valid(created.Body.Bytes()) {
		t.Errorf("the resend got %d %q; want 201 %q", created.Code, created.Body.String(), want)
	}
	state := httptest.NewRecorder()
	h.ServeHTTP(state, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/orders/state/op-1", nil))
	if state.Code != http.StatusOK || state.Body.String() != want {
		t.Errorf("the state check got %d %q; want 200 %q", state.Code, state.Body.String(), want)
	}
	if n := s.posts("op-1"); n != 2 {
		t.Errorf("the server counted %d writes; want 2", n)
	}
}
