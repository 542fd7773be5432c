// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

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
