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
