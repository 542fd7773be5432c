// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package redact

import "testing"

// A text is decoded only where it holds an escape: one without a backslash
// (as it is or escaped) is read as written and percent-decoded, as before
// JSON escapes were read, though it holds "5c" (a hash, a trace id); one
// with a backslash is also read with its JSON escapes, beside the
// percent-only decodings (a Windows path's backslash is not a JSON
// escape of the value after it).
func TestTextDecodingsOnlyWhereTheTextEscapes(t *testing.T) {
	for text, want := range map[string]int{
		"digest 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a5c8": 1,
		"span 5C5c, no escape":              1,
		"query a%3Db, a hash 5c":            2,
		"query a%5Cu0026b":                  2 + 1,     // \u0026 only once %5C is decoded (its first level is the percent-only one's)
		`open C:\cache\tok_8f3a%252Fb9cQx7`: 3 + 2 + 1, // the JSON-only level reads \c as it is, \t as a tab
		`{"k":"v\u0026w"}`:                  1 + 1,     // the JSON-only level is the combined one: read once
	} {
		ds := textDecodings(text)
		if len(ds) != want {
			var texts []string
			for _, d := range ds {
				texts = append(texts, d.text)
			}
			t.Errorf("textDecodings(%q): %d decodings %q, want %d", text, len(ds), texts, want)
		}
	}
}
