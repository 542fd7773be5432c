// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// WithOperationIDHeader's doc: only an id "that is not a field value: one
// holding a control character ... or a space at either end" is not sent.
// A no-break space (U+00A0) or an ideographic space (U+3000) at an end is
// obs-text, a field value net/http sends as written and HTTP/1 does not
// trim; such an id must reach the server, so that a state check can find
// the write by it.
func TestAnOperationIDEndingInANonASCIISpaceIsSent(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("X-Operation-Id"))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	rt := otelretry.NewTransport(srv.Client().Transport, otelretry.WithOperationIDHeader("X-Operation-Id"))
	ids := []string{"order-42\u00a0", "注文\u3000"}
	for _, id := range ids {
		resp, err := rt.RoundTrip(get(t, otelretry.WithOperationID(t.Context(), id), srv.URL+"/orders"))
		if err != nil {
			t.Fatalf("id %q: %v", id, err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(ids) {
		t.Fatalf("the server got %d requests, want %d", len(got), len(ids))
	}
	for i, id := range ids {
		if got[i] != id {
			t.Errorf("id %q: the server saw X-Operation-Id %q, want it as written", id, got[i])
		}
	}
}
