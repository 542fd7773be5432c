// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestSanitizeURL pins the public contract of what the library records as
// url.full: userinfo, query values, fragment, Opaque userinfo. The
// sanitizer itself (internal/redact) has the full table of edge cases and
// a fuzz target; SanitizeURL only delegates to it.
func TestSanitizeURL(t *testing.T) {
	cases := map[string]string{
		"https://u:p@h.test/a?x=1&y=&z":         "https://REDACTED:REDACTED@h.test/a?x=REDACTED&y=REDACTED&z",
		"http://u@h.test/p?x=1#frag":            "http://REDACTED:REDACTED@h.test/p?x=REDACTED",
		"http://h.test/":                        "http://h.test/",
		"http:user:pw@h.test/p":                 "http:REDACTED:REDACTED@h.test/p",
		"http://h.test/p?tok=" + attrs.Redacted: "http://h.test/p?tok=REDACTED",
	}
	for in, want := range cases {
		if got := otelretry.SanitizeURL(mustURL(t, in)); got != want {
			t.Errorf("SanitizeURL(%q) = %q, want %q", in, got, want)
		}
	}
	if got := otelretry.SanitizeURL(nil); got != "" {
		t.Errorf("SanitizeURL(nil) = %q, want \"\"", got)
	}
}
