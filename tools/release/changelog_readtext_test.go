// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"strings"
	"testing"
)

// A subsection's heading is read as CommonMark reads it: a backslash-escaped
// "&" is a literal "&" and starts no character reference ("\&#82;emoved"
// reads "&#82;emoved"), and a code span's content is literal
// ("`&#82;emoved`" reads "&#82;emoved"). Neither is a "Removed"
// subsection, so [Unreleased] is not breaking (a reviewer's find against
// the first fix, which unescaped the heading's source whole).
func TestAnEscapedReferenceOrACodeSpanIsReadAsWritten(t *testing.T) {
	for _, h := range []string{
		"### \\&#82;emoved",
		"### `&#82;emoved`",
		"### Changed `\\(breaking\\)`",
	} {
		text := intro + "## [Unreleased]\n\n" + h + "\n\n- x\n\n## [0.3.0] - 2026-12-02\n"
		c, err := parseChangelog(bufio.NewScanner(strings.NewReader(text)))
		if err != nil {
			t.Fatalf("%q: %v", h, err)
		}
		if c.breaking {
			t.Errorf("[Unreleased] with %q (CommonMark text not a breaking title): breaking true", h)
		}
	}
}

// An image in a subsection's heading reads as its alt text, CommonMark's
// plain text of an image: "### ![Removed](x.png)" is a "Removed"
// subsection (a reviewer's find: it read as an empty title, and a
// breaking [Unreleased] as a compatible one).
func TestAnImageInAHeadingIsReadAsItsAltText(t *testing.T) {
	for h, breaking := range map[string]bool{
		"### ![Removed](x.png)":                      true,
		"### ![Changed](a.png) (breaking)":           true,
		"### ![Changed \\(breaking\\)](a.png \"t\")": true,
		"### ![Added](x.png)":                        false,
		"### ![](x.png)":                             false,
	} {
		text := intro + "## [Unreleased]\n\n" + h + "\n\n- x\n\n## [0.3.0] - 2026-12-02\n"
		c, err := parseChangelog(bufio.NewScanner(strings.NewReader(text)))
		if err != nil {
			t.Fatalf("%q: %v", h, err)
		}
		if c.breaking != breaking {
			t.Errorf("[Unreleased] with %q: breaking %v, want %v", h, c.breaking, breaking)
		}
	}
}
