// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/url"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// SanitizeURL's godoc: a parameter without = is a key and stays as
// written; a ; is no separator, what follows it is part of the value (a
// reviewer's reading, written down).
func TestSanitizeURLKeepsABareKeyAndSplitsOnAmpersandsOnly(t *testing.T) {
	for raw, want := range map[string]string{
		"https://api.test/x?flag":               "https://api.test/x?flag",
		"https://api.test/x?a=1&flag&b=":        "https://api.test/x?a=REDACTED&flag&b=REDACTED",
		"https://api.test/x?a=1;token=s3cret":   "https://api.test/x?a=REDACTED",
		"https://api.test/x?a=1&token=s3cret#f": "https://api.test/x?a=REDACTED&token=REDACTED",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := otelretry.SanitizeURL(u); got != want {
			t.Errorf("SanitizeURL(%q) = %q; want %q", raw, got, want)
		}
	}
}
