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

// A release heading written as CommonMark allows (indented by one to three
// spaces, more than one space after the #s, a tab after them, or a setext
// heading) is a level-2 heading goldmark reads; the line reader before it
// neither checked it nor ended the section above at it, so the 0.3.0
// section's breaking entry was read as [Unreleased]'s and let through a
// removal since the baseline (a reviewer's find, as are the tests below).
// It is told by its text now, and refused as written: the release rule
// wants "## [X.Y.Z] - YYYY-MM-DD" lines.
func TestAReleaseHeadingOfAnotherShapeIsRefused(t *testing.T) {
	for name, heading := range map[string]string{
		"indented by one space": " ## [0.3.0] - 2026-12-02\n",
		"two spaces after ##":   "##  [0.3.0] - 2026-12-02\n",
		"a tab after ##":        "##\t[0.3.0] - 2026-12-02\n",
		"setext":                "[0.3.0] - 2026-12-02\n---\n",
	} {
		t.Run(name, func(t *testing.T) {
			text := intro + "## [Unreleased]\n\n### Added\n\n- x\n\n" +
				heading + "\n### Removed\n\n- `Verdict` is removed.\n\n" +
				"## [0.2.0] - 2026-12-01\n"
			_, err := parseChangelog(bufio.NewScanner(strings.NewReader(text)))
			if err == nil || !strings.Contains(err.Error(), `want "## [X.Y.Z] - YYYY-MM-DD"`) {
				t.Errorf("parseChangelog: %v, want the heading refused by the release rule", err)
			}
		})
	}
}

// The same heading shapes, undated, break the release rule ("## [X.Y.Z] -
// YYYY-MM-DD"); parseChangelog checks every "## [...]" heading.
func TestAnUndatedReleaseHeadingOfAnotherShapeIsRefused(t *testing.T) {
	for name, heading := range map[string]string{
		"indented by one space": " ## [0.3.0]\n",
		"setext":                "[0.3.0]\n---\n",
	} {
		t.Run(name, func(t *testing.T) {
			text := intro + "## [Unreleased]\n\n### Added\n\n- x\n\n" + heading + "\n- y\n\n## [0.2.0] - 2026-12-01\n"
			if _, err := parseChangelog(bufio.NewScanner(strings.NewReader(text))); err == nil {
				t.Error("parseChangelog accepts an undated release heading")
			}
		})
	}
}

// bump rewrites the "## [Unreleased]" heading goldmark reads: it found it
// line by line (fences only), so a template in an HTML comment (or in a
// four-backtick fence holding a three-backtick one) above the section was
// the line it rewrote, the release heading landed in the comment and the
// CHANGELOG's newest release stayed 0.3.0 while otelretry.Version said
// 0.3.1.
func TestBumpRewritesTheUnreleasedHeadingGoldmarkReads(t *testing.T) {
	for name, before := range map[string]string{
		"HTML comment":        "<!--\nA new section:\n\n## [Unreleased]\n-->\n\n",
		"four-backtick fence": "````markdown\n```\n## [Unreleased]\n```\n````\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			text := intro + before + "## [Unreleased]\n\n### Added\n\n- x\n\n## [0.3.0] - 2026-12-02\n"
			if _, err := parseChangelog(bufio.NewScanner(strings.NewReader(text))); err != nil {
				t.Fatalf("parseChangelog: %v", err)
			}
			repo := bumpRepo(t, text)
			err := bump(repo, "0.3.1", time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC))
			if err != nil {
				t.Logf("bump 0.3.1: %v", err)
				return
			}
			c, err := readChangelog(filepath.Join(repo, "CHANGELOG.md"))
			if err != nil || c.newest != "0.3.1" {
				got, _ := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
				t.Errorf("after bump 0.3.1: newest %q, %v; want 0.3.1; CHANGELOG:\n%s", c.newest, err, got)
			}
		})
	}
}

// A CHANGELOG with CRLF line ends: parseChangelog reads it (bufio drops
// the \r), and bump finds its "## [Unreleased]" too, and writes the
// release heading with the file's line ends.
func TestBumpReadsACRLFChangelog(t *testing.T) {
	text := strings.ReplaceAll(intro+"## [Unreleased]\n\n### Added\n\n- x\n\n## [0.3.0] - 2026-12-02\n", "\n", "\r\n")
	if _, err := parseChangelog(bufio.NewScanner(strings.NewReader(text))); err != nil {
		t.Fatalf("parseChangelog: %v", err)
	}
	repo := bumpRepo(t, text)
	if err := bump(repo, "0.3.1", time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatalf("bump 0.3.1 refuses the CHANGELOG parseChangelog accepts: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "## [Unreleased]\r\n\r\n## [0.3.1] - 2026-12-24\r\n") {
		t.Errorf("bump wrote the release heading without the file's line ends:\n%q", got)
	}
	if c, err := parseChangelog(bufio.NewScanner(strings.NewReader(string(got)))); err != nil || c.newest != "0.3.1" {
		t.Errorf("after bump: newest %q, %v; want 0.3.1", c.newest, err)
	}
}
