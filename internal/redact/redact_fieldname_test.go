// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// CHANGELOG [Unreleased] Fixed: "A URL without a scheme whose
// slashes a JSON encoder escaped ("\/\/user:pw#x@h\/p") kept its user
// name and the password's head when the password held a '#' or '?': it is
// read as the URL it stands for, as one with a scheme was." After a
// field's name ("url=", as a PHP json_encode, which escapes '/' by
// default, prints a server's message), the same URL kept its user name
// and the password's head, and a token alone was kept whole;
// the one with a scheme ("url=https:\/\/...") loses them, and so does the
// unescaped "url=//TOKEN@h.test/@a" (TestTextRedactsTheUserinfoOfAURLWithoutAScheme).
// The unescaped "url=//user:pw#x@h/p" kept the same head too.
func TestASchemelessURLAfterAFieldNameLosesItsUserinfo(t *testing.T) {
	for _, in := range []string{
		`url=\/\/USERNAME:PWHEAD#PWTAIL@h.test\/x`,
		`{"error":"cannot fetch url=\/\/USERNAME:PWHEAD#PWTAIL@h.test\/x"}`,
		`{"error":"cannot fetch url=\/\/TOKENTOKEN1@h.test\/x"}`,
		`url=//USERNAME:PWHEAD#PWTAIL@h.test/x`,
	} {
		got := redact.Text(in)
		for _, secret := range []string{"USERNAME", "PWHEAD", "PWTAIL", "TOKENTOKEN1"} {
			if strings.Contains(got, secret) {
				t.Errorf("Text(%s)\n = %s\n keeps %q", in, got, secret)
			}
		}
	}
	// The same URL with a scheme, for comparison: redacted.
	if got := redact.Text(`url=https:\/\/USERNAME:PWHEAD#PWTAIL@h.test\/x`); strings.Contains(got, "USERNAME") || strings.Contains(got, "PWHEAD") {
		t.Errorf("with a scheme: %s", got)
	}
}
