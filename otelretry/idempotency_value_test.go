// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// keysSent sends n POSTs, one after another, through a Transport with k
// to a server on 127.0.0.1, and returns the keys the server saw, in order,
// with what otel.Handle got from NewTransport and from the writes.
func keysSent(t *testing.T, k otelretry.IdempotencyKey, n int) (keys []string, atNew, onWrites []error) {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get(k.Name))
		mu.Unlock()
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	errs := captureOtelErrors(t)
	tr := otelretry.NewTransport(base, otelretry.WithIdempotencyKeys(k))
	atNew = errs()
	for range n {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("x"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	return keys, atNew, errs()[len(atNew):]
}

// bareAndDistinct reports whether keys are bare keys, each its own.
func bareAndDistinct(keys []string) bool {
	seen := map[string]bool{}
	for _, k := range keys {
		if len(k) != 32 || seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// A Value must write the key it is given whole: one that keeps only part
// of it (its first digit) gave distinct writes one key, as it passed the
// check that the two keys WithIdempotencyKeys tries it on get two values
// (a reviewer's find). It is ignored and reported; every write is sent
// its own key, bare.
func TestAValueThatKeepsPartOfTheKeyIsNotKept(t *testing.T) {
	keys, atNew, _ := keysSent(t, otelretry.IdempotencyKey{
		Name:  "Idempotency-Key",
		Value: func(k string) string { return "k-" + k[:1] },
	}, 40)
	if len(atNew) != 1 || !strings.Contains(atNew[0].Error(), "its Value ignored: want one that writes the key it is given whole") {
		t.Errorf("NewTransport reported %v, want the Value ignored", atNew)
	}
	if len(keys) != 40 || !bareAndDistinct(keys) {
		t.Fatalf("keys sent: %q; want 40 bare keys of their own", keys)
	}
}

// A Value that writes the keys NewTransport tries it on whole, but not a
// write's, sends that write's key bare and is reported, once per
// Transport: the fallback was silent (a reviewer's find).
func TestAValueThatFailsOnAWriteIsReportedOnce(t *testing.T) {
	tried := map[string]bool{strings.Repeat("0", 32): true, strings.Repeat("f", 32): true}
	keys, atNew, onWrites := keysSent(t, otelretry.IdempotencyKey{
		Name: "Idempotency-Key",
		Value: func(k string) string {
			if tried[k] {
				return `"` + k + `"`
			}
			return `"constant"`
		},
	}, 3)
	if len(atNew) != 0 {
		t.Fatalf("NewTransport reported %v; want nothing (the keys it tried were written whole)", atNew)
	}
	if len(keys) != 3 || !bareAndDistinct(keys) {
		t.Errorf("the server saw %q; want three bare keys of their own", keys)
	}
	if len(onWrites) != 1 || !strings.Contains(onWrites[0].Error(), "its Value did not write the key it was given on a write") {
		t.Errorf("reported %v; want one report for the three writes", onWrites)
	}
}
