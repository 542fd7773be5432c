// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A key is 128 bits from crypto/rand, as 32 hex digits: no two alike.
func TestNewIdempotencyKeyIs128RandomBits(t *testing.T) {
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 1000 {
		k := newIdempotencyKey()
		if !hex32.MatchString(k) || seen[k] {
			t.Fatalf("key %q: not 32 hex digits, or seen before", k)
		}
		seen[k] = true
	}
}

func TestStructuredStringQuotesAndEscapes(t *testing.T) {
	for in, want := range map[string]string{"8e0f": `"8e0f"`, `a"b\c`: `"a\"b\\c"`, "": `""`} {
		if got := structuredString(in); got != want {
			t.Errorf("structuredString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestValidHeaderName(t *testing.T) {
	for name, want := range map[string]bool{"Idempotency-Key": true, "x-request-id": true, "PayPal-Request-Id": true, "a!#$%&'*+.^_`|~9": true,
		"": false, "Idempotency Key": false, "Key:": false, "Kéy": false, "Key\r\n": false, "(key)": false} {
		if got := validHeaderName(name); got != want {
			t.Errorf("validHeaderName(%q) = %v", name, got)
		}
	}
}

// A Value that gives no header value for a key, or one that does not
// hold the key whole, sends the key bare.
func TestWireValueFallsBackToTheBareKey(t *testing.T) {
	for _, tc := range []struct {
		value func(string) string
		want  string
	}{
		{nil, "k1"},
		{structuredString, `"k1"`},
		{func(string) string { return "" }, "k1"},
		{func(k string) string { return k + "\n" }, "k1"},
		{func(k string) string { return " " + k }, "k1"},
		// One that holds no key whole: writes would share its values.
		{func(k string) string { return "k-" + k[:1] }, "k1"},
		{func(k string) string { return strings.ToUpper(k) }, "k1"},
		{func(k string) string { return "ord_" + k }, "ord_k1"},
	} {
		k := IdempotencyKey{Name: "K", Value: tc.value}
		if got, written := k.wireValue("k1"); got != tc.want || written != (tc.value == nil || got != "k1") {
			t.Errorf("wireValue = %q, written %v; want %q", got, written, tc.want)
		}
	}
}

// A request is its method and URL, without userinfo and fragment.
func TestRequestOfNamesMethodAndURL(t *testing.T) {
	u, _ := url.Parse("https://user:pw@api.test/orders?x=1#frag")
	if got := requestOf(http.MethodPost, u); got != "POST https://api.test/orders?x=1" {
		t.Errorf("requestOf = %q", got)
	}
	if u.User == nil || u.Fragment == "" {
		t.Errorf("the URL was changed")
	}
}

// A key is taken by every repeat while it is kept (repeats in flight
// together share it: it was taken once, and a second repeat beside the
// first got a key of its own, a reviewer's find), let go by a success, not
// kept again by a repeat that fails once another let it go.
func TestKeyMemory(t *testing.T) {
	var m keyMemory
	m.keep("POST /a", "k1")
	if k, ok := m.take("POST /b"); ok {
		t.Fatalf("took %q for another request", k)
	}
	if k, ok := m.take("POST /a"); !ok || k != "k1" {
		t.Fatalf("take = %q, %v", k, ok)
	}
	if k, ok := m.take("POST /a"); !ok || k != "k1" {
		t.Fatalf("a second repeat in flight: take = %q, %v; want k1 too", k, ok)
	}
	m.keepTaken("POST /a", "k1") // the first repeat failed: still kept
	if k, ok := m.take("POST /a"); !ok || k != "k1" {
		t.Fatalf("after a repeat failed: take = %q, %v", k, ok)
	}
	m.letGo("POST /a", "k1", true) // one succeeded
	m.keepTaken("POST /a", "k1")   // the one beside it failed after that
	if k, ok := m.take("POST /a"); ok {
		t.Fatalf("took %q after a repeat succeeded: a new write would be answered by the old one", k)
	}
	if len(m.held) != 0 {
		t.Fatalf("%d keys held after their holders settled", len(m.held))
	}
}

// A later write's key replaces an earlier one's for its request, and the
// oldest is forgotten beyond maxRememberedKeys.
func TestKeyMemoryReplacesAndForgetsTheOldest(t *testing.T) {
	var m keyMemory
	m.keep("POST /a", "k1")
	m.keep("POST /a", "k2")
	if k, _ := m.take("POST /a"); k != "k2" {
		t.Fatalf("take = %q, want the last kept", k)
	}
	for i := range maxRememberedKeys + 1 {
		m.keep("POST /"+strconv.Itoa(i), "k"+strconv.Itoa(i))
	}
	if _, ok := m.take("POST /0"); ok {
		t.Error("the oldest key was not forgotten")
	}
	if k, ok := m.take("POST /" + strconv.Itoa(maxRememberedKeys)); !ok || k != "k"+strconv.Itoa(maxRememberedKeys) {
		t.Errorf("the newest key: %q, %v", k, ok)
	}
	if len(m.byName) != maxRememberedKeys || m.byOrder.Len() != len(m.byName) {
		t.Errorf("%d keys kept (%d in order)", len(m.byName), m.byOrder.Len())
	}
}

func TestReplayedReadsIdempotentReplayed(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "True": true, " true ": true, "false": false, "": false, "1": false} {
		if got := replayed(http.Header{"Idempotent-Replayed": {v}}); got != want {
			t.Errorf("Idempotent-Replayed: %q read as %v", v, got)
		}
	}
	if replayed(http.Header{}) {
		t.Error("no header read as replayed")
	}
}
