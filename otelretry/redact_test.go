// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestSanitizeURL pins what the library records as url.full. The sanitizer
// itself (internal/redact) has its own tests and fuzz target; these cases
// are the public contract.
func TestSanitizeURL(t *testing.T) {
	cases := map[string]string{
		"https://u:p@h.test/a?x=1&y=&z":            "https://REDACTED:REDACTED@h.test/a?x=REDACTED&y=REDACTED&z",
		"http://u@h.test/p?x=1#frag":               "http://REDACTED:REDACTED@h.test/p?x=REDACTED",
		"https://h.test/a#frag":                    "https://h.test/a",
		"http://h.test:8080/p?X-Amz-Signature=abc": "http://h.test:8080/p?X-Amz-Signature=REDACTED",
		"http://h.test/":                           "http://h.test/",
		"http://h.test/?":                          "http://h.test/",
		"http://h.test/p?#":                        "http://h.test/p",
		"http://h.test/p?a=1&&b":                   "http://h.test/p?a=REDACTED&&b",
		"http://h.test/p?&":                        "http://h.test/p?&",
		"http://h.test/p?=x":                       "http://h.test/p?=REDACTED",
		"http://h.test/p?k=":                       "http://h.test/p?k=REDACTED",
		"http://h.test/p?a=1=2":                    "http://h.test/p?a=REDACTED",
		"http://h.test/p?a=1;b=2":                  "http://h.test/p?a=REDACTED",
		"http://h.test/p?%3D=1&x%26y=2":            "http://h.test/p?%3D=REDACTED&x%26y=REDACTED",
		"http://h.test/a%2Fb?x=1":                  "http://h.test/a%2Fb?x=REDACTED",
		"http://[::1]:8080/p?q":                    "http://[::1]:8080/p?q",
		"http://[fe80::1%25en0]/p?k=v":             "http://[fe80::1%25en0]/p?k=REDACTED",
		"http:user:pw@h.test/p":                    "http:REDACTED:REDACTED@h.test/p",
		"mailto:someone@h.test?subject=hi":         "mailto:REDACTED:REDACTED@h.test?subject=REDACTED",
		"/relative/path?token=t":                   "/relative/path?token=REDACTED",
		"http://h.test/p?tok=" + attrs.Redacted:    "http://h.test/p?tok=REDACTED",
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
