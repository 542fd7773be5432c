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

// A Value must write the key it is given whole: one that keeps only part
// of it (its first digit) gave distinct writes one key, as it passed the
// check that the two keys WithIdempotencyKeys tries it on get two values
// (a reviewer's find). It is ignored and reported; every write is sent
// its own key, bare.
func TestAValueThatKeepsPartOfTheKeyIsNotKept(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Idempotency-Key")]++
		mu.Unlock()
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	errs := captureOtelErrors(t)
	tr := otelretry.NewTransport(base, otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{
		Name:  "Idempotency-Key",
		Value: func(k string) string { return "k-" + k[:1] },
	}))
	if got := errs(); len(got) != 1 || !strings.Contains(got[0].Error(), "its Value ignored: want one that writes the key it is given whole") {
		t.Errorf("reports %v, want the Value ignored", got)
	}
	const writes = 40
	for range writes {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("x"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != writes {
		t.Fatalf("%d distinct keys for %d writes: %v", len(seen), writes, seen)
	}
	for v := range seen {
		if len(v) != 32 {
			t.Fatalf("key %q sent; want the bare key", v)
		}
	}
}

// A Value that writes the keys NewTransport tries it on whole, but not a
// write's, sends that write's key bare and is reported, once per
// Transport: the fallback was silent (a reviewer's find).
func TestAValueThatFailsOnAWriteIsReportedOnce(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	errs := captureOtelErrors(t)
	tried := map[string]bool{strings.Repeat("0", 32): true, strings.Repeat("f", 32): true}
	tr := otelretry.NewTransport(base, otelretry.WithIdempotencyKeys(otelretry.IdempotencyKey{
		Name: "Idempotency-Key",
		Value: func(k string) string {
			if tried[k] {
				return `"` + k + `"`
			}
			return `"constant"`
		},
	}))
	if got := errs(); len(got) != 0 {
		t.Fatalf("NewTransport reported %v; want nothing (the keys it tried were written whole)", got)
	}
	for range 3 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("x"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || len(seen[0]) != 32 || seen[0] == seen[1] || seen[1] == seen[2] {
		t.Errorf("the server saw %q; want three bare keys of their own", seen)
	}
	if got := errs(); len(got) != 1 || !strings.Contains(got[0].Error(), "its Value did not write the key it was given on a write") {
		t.Errorf("reported %v; want one report for the three writes", got)
	}
}
