// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A release heading whose text is "[0.3.1] - 2026-12-03" written with
// CommonMark backslash escapes ("## \[0.3.1\] - 2026-12-03") is a level-2
// heading goldmark reads with that text: "told by its text" (heading's
// godoc), it must end the [Unreleased] section above it and be refused as
// written. It was neither (a reviewer's find, as are the two tests below):
// its "### Removed" entry was read as [Unreleased]'s, and bump 0.3.1 then
// wrote a second 0.3.1 section.
func TestAnEscapedReleaseHeadingIsRefused(t *testing.T) {
	text := intro + "## [Unreleased]\n\n### Added\n\n- x\n\n" +
		"## \\[0.3.1\\] - 2026-12-03\n\n### Removed\n\n- `Verdict` is removed.\n\n" +
		"## [0.3.0] - 2026-12-02\n"
	c, err := parseChangelog(bufio.NewScanner(strings.NewReader(text)))
	if err == nil {
		t.Errorf("parseChangelog accepts %q as no section heading: newest %q, [Unreleased] breaking %v, "+
			"[Unreleased]'s breaking entries %d", "## \\[0.3.1\\] - 2026-12-03", c.newest, c.breaking, len(c.breakingEntries["Unreleased"]))
	}
}

// TestReleasedVersionRule's rule (otelretry/version_test.go), which
// checkSection's godoc says it checks, and "checked as written" (heading's
// godoc): "## [X.Y.Z] - YYYY-MM-DD" lines. A release heading with a trailing
// space is refused by otelretry's releasedVersion (its rest " - DATE " is
// not " - DATE"), so TestVersionIsTheNewestChangelogRelease failed on a
// CHANGELOG that release check and bump accepted.
func TestAReleaseHeadingWithATrailingSpaceIsRefused(t *testing.T) {
	text := intro + "## [Unreleased]\n\n### Added\n\n- x\n\n## [0.3.0] - 2026-12-02 \n"
	if c, err := parseChangelog(bufio.NewScanner(strings.NewReader(text))); err == nil {
		t.Errorf("parseChangelog accepts %q (newest %q); otelretry's version test refuses it", "## [0.3.0] - 2026-12-02 ", c.newest)
	}
	repo := bumpRepo(t, text)
	if err := bump(repo, "0.3.1", time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC)); err == nil {
		got, _ := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
		t.Errorf("bump 0.3.1 accepts it and keeps the heading:\n%q", got)
	}
}

// "### **Removed**" is a subsection goldmark reads with the title
// "Removed" (RELEASING.md: a "### Removed" subsection is breaking, and
// bump refuses a patch then). The title was compared as written, so bump
// made a patch release over a removal.
func TestAnEmphasizedRemovedSubsectionIsBreaking(t *testing.T) {
	text := intro + "## [Unreleased]\n\n### **Removed**\n\n- `Verdict` is removed.\n\n## [0.3.0] - 2026-12-02\n"
	c, err := parseChangelog(bufio.NewScanner(strings.NewReader(text)))
	if err != nil {
		t.Fatal(err)
	}
	if !c.breaking {
		t.Errorf("[Unreleased] with %q: breaking false", "### **Removed**")
	}
	repo := bumpRepo(t, text)
	if err := bump(repo, "0.3.1", time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC)); err == nil {
		t.Errorf("bump 0.3.1 (a patch) over a Removed subsection: no error")
	}
}

// heading's godoc: "A subsection is told by its text as read". CommonMark
// reads "### Changed \(breaking\)" (backslash escapes) and
// "### &#82;emoved" (a character reference) as "Changed (breaking)" and
// "Removed", goldmark renders them so; the tool took them for
// non-breaking subsections and bump made a patch release over them (a
// reviewer's find).
func TestAnEscapedBreakingSubsectionIsBreaking(t *testing.T) {
	for _, h := range []string{
		"### Changed \\(breaking\\)",
		"### &#82;emoved",
	} {
		t.Run(h, func(t *testing.T) {
			text := intro + "## [Unreleased]\n\n" + h + "\n\n- `Verdict` is removed.\n\n## [0.3.0] - 2026-12-02\n"
			c, err := parseChangelog(bufio.NewScanner(strings.NewReader(text)))
			if err != nil {
				t.Fatal(err)
			}
			if !c.breaking {
				t.Errorf("[Unreleased] with %q: breaking false", h)
			}
			repo := bumpRepo(t, text)
			if err := bump(repo, "0.3.1", time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC)); err == nil {
				t.Errorf("bump 0.3.1 (a patch) over %q: no error", h)
			}
		})
	}
}
