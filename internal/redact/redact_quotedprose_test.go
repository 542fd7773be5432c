// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// Text replaces only URL-like words; quotedURL's doc: a quoted string is a
// URL when it begins with one "and is not prose that holds a '?' or an
// '@'". A quoted message that begins with a path or "//" and holds spaces,
// a ':' and an e-mail address is prose: no userinfo can begin with '/' or
// hold a space. Text must keep its words (the e-mail address aside).
func TestTextKeepsTheWordsOfQuotedProseBeforeAnAt(t *testing.T) {
	for in, words := range map[string]string{
		`check "/healthz: down since 10:00, page oncall@example.com" failed`: `/healthz: down since 10:00, page `,
		`note "// TODO: mail bob@example.com" here`:                          `// TODO: mail `,
	} {
		if out := redact.Text(in); !strings.Contains(out, words) {
			t.Errorf("Text(%q)\n   = %q: the words %q are gone", in, out, words)
		}
	}
}

// A quoted URL whose path holds a space (written unescaped, as a decoded
// path is, or as a parse error quotes it) and whose query or fragment
// also holds one is read as one URL, every value redacted: read word by
// word (as quoted prose that begins with a path is, above), the query's
// pairs after the second space would be kept as written.
func TestTextRedactsAQuotedURLWhosePathAndQueryHoldSpaces(t *testing.T) {
	for _, in := range []string{
		`GET "/my docs/search?q=hello world&token=SECRET" failed`,
		`parse "/my docs/x?sig=a b&token=SECRET": invalid`,
		`x "/files/a b?x=1&y=2 and&token=SECRET" y`,
		`x "/my docs/f#access_token=SECRET&b=1 c&id_token=SECRET" y`,
	} {
		if out := redact.Text(in); strings.Contains(out, "SECRET") {
			t.Errorf("Text(%q)\n   = %q: a secret is kept", in, out)
		}
	}
}
