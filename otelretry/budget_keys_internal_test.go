// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// A host the budget keeps is listed on the hold wheel by the table's own
// copy of its key, never by the caller's: a request's key may be a slice
// of its whole URL (hostOf), which the wheel would keep alive for as long
// as the hold (up to a minute). A kept host that fills up again under a
// hold is listed by the key of the answer that filled it.
func TestAHeldHostIsListedByTheTablesOwnKey(t *testing.T) {
	b := &Budget{}
	t0 := time.Unix(1000, 0)
	b.record("api.example:443", t0, budgetObservation{failure: true, status: http.StatusServiceUnavailable,
		pushback: 50 * time.Second, hinted: true})
	url := "https://api.example:443/" + strings.Repeat("p", 1<<16)
	callers := url[len("https://") : len("https://")+len("api.example:443")]
	for i := 1; i <= 1000 && !listed(b); i++ {
		b.record(callers, t0.Add(time.Duration(i)*time.Millisecond), budgetObservation{success: true, status: http.StatusOK})
	}
	if !listed(b) {
		t.Fatal("the host never filled up under its hold: the test does not reach the wheel")
	}
	for _, slot := range b.wheel.slots {
		for _, k := range slot {
			if unsafe.StringData(k) == unsafe.StringData(callers) {
				t.Errorf("the wheel lists %q by the caller's string, which holds the request's %d-byte URL", k, len(url))
			}
		}
	}
}

func listed(b *Budget) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, slot := range b.wheel.slots {
		if len(slot) > 0 {
			return true
		}
	}
	return false
}

// The table itself, too, keeps its own copy of a kept host's key: a Go
// map assignment to a string key already present replaces the stored key
// with the one assigned, so storing a kept host under the caller's key
// made the table hold the request's URL for as long as the host is kept
// (a reviewer's find, after the wheel's fix above).
func TestAKeptHostIsStoredByTheTablesOwnKey(t *testing.T) {
	b := &Budget{}
	t0 := time.Unix(1000, 0)
	fail := budgetObservation{failure: true, status: http.StatusServiceUnavailable}
	b.record("api.example:443", t0, fail) // a new host: the table clones its key
	url := "https://api.example:443/" + strings.Repeat("p", 1<<16)
	callers := url[len("https://") : len("https://")+len("api.example:443")]
	b.record(callers, t0.Add(time.Millisecond), fail) // the same host, kept: no hold
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.hosts) != 1 {
		t.Fatalf("hosts = %d; want 1 (the test does not keep the host)", len(b.hosts))
	}
	for k := range b.hosts {
		if unsafe.StringData(k) == unsafe.StringData(callers) {
			t.Errorf("the table keys host %q by the caller's string, which holds the request's %d-byte URL", k, len(url))
		}
	}
}
