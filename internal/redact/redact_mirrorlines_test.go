// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/internal/redact"
)

// quotedForms are a tool's multi-line output as a layer above quotes it:
// %q, and a JSON string.
func quotedForms(lines string) map[string]string {
	js, _ := json.Marshal(map[string]string{"out": lines})
	return map[string]string{"%q": fmt.Sprintf("tool failed: %q", lines), "json": string(js)}
}

// A line "KEY=//tok@host/…" (an env dump, a config listing) loses its
// userinfo when it is the first line of a quoted tool output
// (cutAuthority's first "//" after a field's '='), but keeps it on any
// later line: the same line, one line down. CHANGELOG [Unreleased]: "a URL
// without a scheme is read after an escaped line break wherever it comes".
func TestASchemelessURLAfterAFieldOnALaterQuotedLineLosesItsUserinfo(t *testing.T) {
	const tok = "ghp_TOKEN0123456789"
	line := func(k, user string) string { return k + "=//" + user + "@" + k + ".test/o/r.git" }
	for name, lines := range map[string]string{
		"first line (control)": line("MIRROR_B", tok) + "\n" + line("MIRROR_A", "git"),
		"second line":          line("MIRROR_A", "git") + "\n" + line("MIRROR_B", tok),
		"second line, no user": "MIRROR_A=//a.test/o/r.git\n" + line("MIRROR_B", tok),
	} {
		for form, text := range quotedForms(lines) {
			if got := redact.Text(text); strings.Contains(got, tok) {
				t.Errorf("%s, %s: Text keeps the token:\n in  %s\n out %s", name, form, text, got)
			}
		}
	}
}

// A list of mirrors one a line, the first with a scheme and the next
// without: since the last commit the "\n//" cut makes unparsed write
// REDACTED:REDACTED for the second line's userinfo, and redactEmbedded
// then reads everything from the first "://" to that '@'
// ("mirror.test/o/r.git\n//REDACTED:REDACTED") as one userinfo holding a
// ':' and '/': the clean first URL (and every clean line between) is
// replaced. Text's doc: other text is returned as it is; the CHANGELOG
// entry reads each line's URL as its own.
func TestAQuotedListOfMirrorsKeepsItsCleanURLs(t *testing.T) {
	const tok = "ghp_TOKEN0123456789"
	for name, lines := range map[string]string{
		"two lines":   "https://mirror.test/o/r.git\n//" + tok + "@github.com/o/r.git",
		"three lines": "https://mirror.test/o/r.git\n//github.com/o/r.git\n//" + tok + "@gitlab.com/x",
	} {
		for form, text := range quotedForms(lines) {
			got := redact.Text(text)
			if strings.Contains(got, tok) {
				t.Errorf("%s, %s: Text keeps the token: %s", name, form, got)
			}
			if !strings.Contains(got, "https://mirror.test/o/r.git") {
				t.Errorf("%s, %s: Text drops the clean first URL:\n in  %s\n out %s", name, form, text, got)
			}
		}
	}
}
