// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"net/url"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// Changes: "When it reports false the two are equal, so a recorder can
// keep otelhttp's value without sanitizing it again." Two URLs URL
// redacts: a Host that carries a userinfo (a URL built by hand), and a
// proxy's path holding its target URL escaped three times in u.Path (the
// fourth layer's escape; decodedPath unescapes "at most three times").
func TestChangesIsTrueWheneverURLRedacts(t *testing.T) {
	parsed, err := url.Parse("http://proxy.test/fetch/https:%2525252F%2525252Fu:pw@h.test/x")
	if err != nil {
		t.Fatal(err)
	}
	for name, u := range map[string]*url.URL{
		"userinfo in Host":    {Scheme: "http", Host: "u:pw@h.test", Path: "/x"},
		"path escaped thrice": parsed,
	} {
		plain := *u
		plain.User = nil
		if got := redact.URL(u); got == plain.String() {
			t.Fatalf("%s: URL(%q) = %q, redacts nothing; the case is void", name, plain.String(), got)
		}
		if !redact.Changes(u) {
			t.Errorf("%s: Changes = false, yet URL writes %q where String writes %q", name, redact.URL(u), plain.String())
		}
	}
}
