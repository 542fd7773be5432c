// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// Text's doc: "A URL whose slashes JSON escaped ("https:\/\/u:p@h\/x") is
// cleaned as the URL it stands for"; userinfoEnd's: a password holding '#'
// or '?' is caught whole. A URL without a scheme (cutAuthority's
// "//tok@registry/...") whose slashes a JSON encoder escaped kept the
// user name and the password's head, while the same URL unescaped, and
// the escaped URL with a scheme, lost them whole.
func TestAJSONEscapedSchemelessURLLosesItsWholeUserinfo(t *testing.T) {
	for _, in := range []string{
		`{"url":"//USERNAME:PWHEAD#PWTAIL@h.test/x"}`,
		`{"url":"https:\/\/USERNAME:PWHEAD#PWTAIL@h.test\/x"}`,
		`{"url":"\/\/USERNAME:PWHEAD#PWTAIL@h.test\/x"}`,
		`{"url":"\/\/USERNAME:PWHEAD?PWTAIL@h.test\/x"}`,
	} {
		got := redact.Text(in)
		for _, secret := range []string{"USERNAME", "PWHEAD", "PWTAIL"} {
			if strings.Contains(got, secret) {
				t.Errorf("Text(%s)\n = %s\n keeps %q", in, got, secret)
			}
		}
	}
}

// URL's output is a fixed point of String and Text (the package doc;
// urlIsAFixedPointOfStringAndText). A reference without a scheme whose
// path begins with a run of slashes before an '@' ("///@scope/pkg", which
// url.Parse reads as a path with no host) or with "=//" before one: URL
// keeps it as written, and so must String and Text: an empty userinfo is
// nothing to redact.
func TestASchemelessPathBeforeAnAtIsAFixedPoint(t *testing.T) {
	for _, in := range []string{"///@scope/pkg", "=//@scope/pkg"} {
		urlIsAFixedPointOfStringAndText(t, in)
	}
}
