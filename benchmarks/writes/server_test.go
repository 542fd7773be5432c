// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// post sends a write to s with a key and a fault, and returns the status
// and the replay header, or 0 when the answer was lost.
func post(t *testing.T, s *server, write int, key, body string, f fault) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url(write), strings.NewReader(body))
	if key != "" {
		req.Header.Set("Idempotency-Key", `"`+key+`"`)
	}
	req.Header.Set(faultHeader, f.String())
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Idempotent-Replayed")
}

// The server deduplicates by key as the draft says: the stored answer for
// a key that comes again (replayed), 409 while its first request is being
// processed, 422 with another payload; a write without a key is applied
// each time; a 503 applies nothing; a lost answer was applied.
func TestServerDeduplicatesByKey(t *testing.T) {
	s, err := newServer(300 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if st, _ := post(t, s, 1, "k1", "{}", faultLost); st != 0 || s.applications(1) != 1 {
		t.Fatalf("lost: %d, applied %d", st, s.applications(1))
	}
	if st, replayed := post(t, s, 1, "k1", "{}", faultNone); st != http.StatusCreated || replayed != "true" || s.applications(1) != 1 {
		t.Fatalf("again: %d (replayed %q), applied %d", st, replayed, s.applications(1))
	}
	if st, _ := post(t, s, 1, "k1", `{"other":1}`, faultNone); st != http.StatusUnprocessableEntity || s.applications(1) != 1 {
		t.Fatalf("another payload: %d, applied %d", st, s.applications(1))
	}
	if st, _ := post(t, s, 2, "k2", "{}", faultUnavailable); st != http.StatusServiceUnavailable || s.applications(2) != 0 {
		t.Fatalf("503: %d, applied %d", st, s.applications(2))
	}
	done := make(chan int)
	go func() { st, _ := post(t, s, 3, "k3", "{}", faultSlow); done <- st }()
	time.Sleep(100 * time.Millisecond)
	if st, _ := post(t, s, 3, "k3", "{}", faultNone); st != http.StatusConflict {
		t.Fatalf("in progress: %d", st)
	}
	if st := <-done; st != http.StatusCreated || s.applications(3) != 1 || s.conflictsSent() != 1 {
		t.Fatalf("slow: %d, applied %d, 409s %d", st, s.applications(3), s.conflictsSent())
	}
	for range 2 {
		post(t, s, 4, "", "{}", faultNone)
	}
	if s.applications(4) != 2 {
		t.Fatalf("no key: applied %d, want 2", s.applications(4))
	}
}
