// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package render

import "testing"

// Escape writes every character that could forge or reorder a report line
// as a Go escape: the Unicode line and paragraph separators too (a
// reviewer's remark: they passed through, where a viewer may break a line
// at them), beside the controls, the bidirectional formatting characters
// and invalid UTF-8; printable text passes unchanged.
func TestEscapeWritesWhatCouldForgeALine(t *testing.T) {
	for in, want := range map[string]string{
		"op-1 ordinary é 日本":    "op-1 ordinary é 日本",
		"a\u2028findings: none": `a\u2028findings: none`,
		"a\u2029b":              `a\u2029b`,
		"a\r\nb\x1b[31m":        `a\r\nb\x1b[31m`,
		"a\u202eb\u2066c":       `a\u202eb\u2066c`,
		"a\xffb":                `a\xffb`,
		// A replacement character written as such is text (a reviewer's
		// find: every U+FFFD was escaped, taken for invalid UTF-8).
		"decode: bad byte \ufffd": "decode: bad byte \ufffd",
		// A backslash is left as it is: messages carry text Go quoted
		// (TestABackendsErrorBodyIsQuotedOnce), so text spelling an
		// escape reads as the rune it names.
		`a\u2028b`: `a\u2028b`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}
