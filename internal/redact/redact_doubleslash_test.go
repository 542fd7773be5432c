// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// A password may hold a '/' (String's and userinfoEnd's docs; TestText's
// "a password that holds a '/'"), so it may hold "//" too (a base64
// password). docs/telemetry.md: userinfo becomes REDACTED:REDACTED, also
// in a proxy's path that holds its target URL, as written or escaped.
// Cutting a text at every "//" (as a URL without a scheme may begin)
// would end the userinfo's text at the password's "//", and record the
// user name and the password's first half (or, in URL and an escaped
// target, the whole password): only a scheme's "//", and a first one that
// begins the text or a field's value, begin an authority (cutAuthority).
func TestAPasswordHoldingADoubleSlashIsRedactedWhole(t *testing.T) {
	const user, pw1, pw2 = "USERNAME", "PWHEAD", "PWTAIL"
	secretFree := func(t *testing.T, what, in, got string) {
		t.Helper()
		for _, s := range []string{user, pw1, pw2} {
			if strings.Contains(got, s) {
				t.Errorf("%s(%q)\n = %q\n keeps %q", what, in, got, s)
			}
		}
	}
	userinfo := user + ":" + pw1 + "//" + pw2
	for _, in := range []string{
		"postgres://" + userinfo + "@db.test:5432/app",
		userinfo + "@db.test:5432",
		"http://p.test/fetch/https://" + userinfo + "@h.test/x",
	} {
		secretFree(t, "String", in, redact.String(in))
		text := "dial " + in + " failed"
		secretFree(t, "Text", text, redact.Text(text))
	}
	// A proxy's path that holds its target URL, as written and escaped
	// (docs/telemetry.md's /fetch/https%3A%2F%2Fu%3Apw%40h), recorded as
	// url.full through URL.
	for _, raw := range []string{
		"http://p.test/fetch/https://" + userinfo + "@h.test/x",
		"http://p.test/fetch/" + url.QueryEscape("https://"+userinfo+"@h.test") + "/x",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		secretFree(t, "URL", raw, redact.URL(u))
	}
	// A target URL escaped whole in an error's text.
	escaped := "GET " + url.QueryEscape("https://"+userinfo+"@h.test") + " failed"
	secretFree(t, "Text", escaped, redact.Text(escaped))
}

// URL's output is a fixed point of String and Text (the package doc: the
// library records URLs through URL, retryinspect displays them through
// String and Text, "so both agree on what a clean URL is";
// urlIsAFixedPointOfStringAndText). A path with an empty segment before
// an e-mail address (a base URL joined with a '/' too many), or a proxy's
// path that holds a URL without a scheme: URL keeps each as sent, and so
// must String and Text, which would change it if they read the text after
// any "//" as a userinfo.
func TestURLWithADoubleSlashInItsPathIsAFixedPointOfStringAndText(t *testing.T) {
	for _, in := range []string{
		"https://api.test/v1//alice@example.com/profile",
		"http://p.test/fetch//TOKEN@registry.test/@scope/pkg",
		"https://api.test/v1;v=2//alice@example.com", "https://api.test/a,b//alice@example.com",
		"/v1;v=2//alice@example.com", "/a,b//alice@example.com",
	} {
		urlIsAFixedPointOfStringAndText(t, in)
	}
}

// A URL without a scheme begins after a list's separator (';', '|', ',')
// and after a line break or tab a quoted text escapes ("\n", as %q and
// JSON write a tool's output line by line), as it does after a field's
// opening: its userinfo is redacted.
func TestASchemelessURLAfterASeparatorOrAnEscapedLineBreak(t *testing.T) {
	for _, in := range []string{
		`"Cloning into 'r'...\n//TOKENSECRET@github.com/o/r.git: not found\n"`,
		`{"log":"fetching\n//TOKENSECRET@registry.test/@scope/pkg"}`,
		`a;//TOKENSECRET@r.test`, `a|//TOKENSECRET@r.test`, `a,//TOKENSECRET@r.test`,
		`x\t//TOKENSECRET@r.test`, `x\r\n//TOKENSECRET@r.test`,
	} {
		if out := redact.Text(in); strings.Contains(out, "SECRET") {
			t.Errorf("Text(%q) = %q keeps the token", in, out)
		}
	}
}
