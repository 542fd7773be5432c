// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// body.go's sendAgain: "307 and 308" ask for the write again, and
// docs/decisions.md ("A layer above reuses it"): "a 307 or 308, which asks
// for the write again, is no success". A keyed POST whose 308 hop ends
// 400 is repeated by the caller under the same WithOperationID: the
// repeat takes the first try's keys, /a's and /b's.
func TestA308HopIsNoSuccessAndItsKeyIsReused(t *testing.T) {
	h := newHarness(t, []scripted.Step{
		{Status: http.StatusPermanentRedirect, Header: http.Header{"Location": {"http://api.test/b"}}},
		{Status: http.StatusBadRequest},
		{Status: http.StatusPermanentRedirect, Header: http.Header{"Location": {"http://api.test/b"}}},
		{Status: http.StatusOK},
	}, otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()), otelretry.WithoutBudget())
	ctx := otelretry.WithOperationID(t.Context(), "order-308")
	for range 2 {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/a", bytes.NewReader([]byte(`{"n":1}`)))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	calls := h.base.Calls()
	if len(calls) != 4 {
		t.Fatalf("%d calls, want 4", len(calls))
	}
	key := func(i int) string { return calls[i].Header.Get("Idempotency-Key") }
	if key(0) == "" || key(0) == key(1) {
		t.Fatalf("keys %q and %q: want one per URL", key(0), key(1))
	}
	if key(2) != key(0) || key(3) != key(1) {
		t.Errorf("the caller's repeat after a 308 took keys %s and %s, want the first try's %s and %s", key(2), key(3), key(0), key(1))
	}
}

// body.go's answerToRead: only "a 2xx" is an answer whose broken body keeps
// the key, and docs/decisions.md lists among what is no success only "a
// 2xx whose body broke as the caller read it". A keyed POST answered 300
// (returned, not followed by http.Client) whose body breaks is a success
// all the same: the same write sent again later under the same id takes a
// key of its own.
func TestA300WhoseBodyBreaksLetsItsKeyGo(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		breakMidBody(t, w, "HTTP/1.1 300 Multiple Choices\r\nContent-Length: 100\r\n\r\nchoose")
	}))
	defer srv.Close()
	client, _ := keyClient(t, otelretry.WithMaxAttempts(1))
	ctx := otelretry.WithOperationID(t.Context(), "job-300")
	for try := 1; try <= 2; try++ {
		if _, err := placeOrder(t, client, ctx, srv.URL); err == nil {
			t.Fatalf("try %d: the 300's body did not break", try)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] == "" || keys[0] == keys[1] {
		t.Errorf("keys on the wire %q: the write sent again after its 300 took the key of the first", keys)
	}
}
