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

func parseWithIntro(t *testing.T, text string) changelog {
	t.Helper()
	c, err := parseChangelog(bufio.NewScanner(strings.NewReader(intro + text)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RELEASING.md: a break is recorded by "an entry (a bullet)" that names the
// changed name and, for a module other than the library's, the module's
// directory; "one recorded break lets no other through". A Markdown bullet
// written with "* " is an entry too: two such bullets must not merge into
// one, so that a name in one and a directory in the other record nothing.
func TestStarBulletsAreEntriesOfTheirOwn(t *testing.T) {
	c := parseWithIntro(t, "## [Unreleased]\n\n### Changed (breaking)\n\n"+
		"* `classify/h2`: `Verdict` is removed.\n"+
		"* `otelretry`: `Classify` is renamed.\n\n"+
		"## [0.3.0] - 2026-12-02\n")
	h2 := libraryModule + "/classify/h2"
	if !c.breakNamed("0.3.0", h2, "Verdict: removed") {
		t.Fatal("the recorded break itself is not named")
	}
	if c.breakNamed("0.3.0", h2, "Classify: changed from func() to func(int)") {
		t.Error("a change of classify/h2's Classify counts as recorded, by a `Classify` written in another \"* \" bullet " +
			"(about otelretry) and the `classify/h2` of the bullet above it")
	}
}

// breakNamed's doc: "A name alone, written for another module's break or in
// an example, records nothing else." Both modules have an Evidence
// (classify/h2's func Evidence, otelretry's type Evidence): an entry that
// records a break of classify/h2's Evidence must not record one of the
// library's Evidence.
func TestAnotherModulesEntryRecordsNoLibraryBreak(t *testing.T) {
	c := parseWithIntro(t, "## [Unreleased]\n\n### Changed (breaking)\n\n"+
		"- `classify/h2`: `Evidence` takes the stream's state.\n\n"+
		"## [0.3.0] - 2026-12-02\n")
	if !c.breakNamed("0.3.0", libraryModule+"/classify/h2", "Evidence: changed from func(error) (otelretry.Evidence, bool) to func(error, bool) (otelretry.Evidence, bool)") {
		t.Fatal("the recorded break itself is not named")
	}
	if c.breakNamed("0.3.0", libraryModule, "./otelretry.Evidence: removed") {
		t.Error("the removal of the library's otelretry.Evidence counts as recorded by the entry written for classify/h2's Evidence")
	}
}

// Only a subsection that records incompatible changes makes [Unreleased]
// breaking (RELEASING.md: "a `### Changed (breaking)` or `### Removed`
// subsection"). A "### Changed (non-breaking)" subsection says the
// opposite: it must neither make the next version a minor one nor record
// breaks.
func TestANonBreakingSubsectionIsNotBreaking(t *testing.T) {
	c := parseWithIntro(t, "## [Unreleased]\n\n### Changed (non-breaking)\n\n"+
		"- `Transport` logs less.\n\n## [0.3.0] - 2026-12-02\n")
	if c.breaking {
		next, _, _ := nextVersion("0.3.0", c)
		t.Errorf("\"### Changed (non-breaking)\" counts as a breaking subsection: next version %s", next)
	}
	if c.breakNamed("0.3.0", libraryModule, "./otelretry.Transport: removed") {
		t.Error("a removal of Transport counts as recorded by a \"### Changed (non-breaking)\" entry")
	}
}

// RELEASING.md: the version is the newest "## [X.Y.Z] - DATE" heading, and
// the rule is "headings in order, dated, no pre-release"
// (TestReleasedVersionRule). bump refuses "a CHANGELOG ... out of the state
// between releases" and writes nothing then: every heading is checked, not
// the newest release's version alone (as it was).
func TestBumpRefusesAChangelogOutOfTheRule(t *testing.T) {
	for name, text := range map[string]string{
		"newest heading undated":       "## [Unreleased]\n\n### Added\n\n- x\n\n## [0.3.0]\n\n## [0.2.0] - 2026-12-01\n",
		"newest heading, a bad date":   "## [Unreleased]\n\n### Added\n\n- x\n\n## [0.3.0] - soon\n\n## [0.2.0] - 2026-12-01\n",
		"headings out of order":        "## [Unreleased]\n\n### Added\n\n- x\n\n## [0.3.0] - 2026-12-02\n\n## [0.4.0] - 2026-12-03\n",
		"an older pre-release heading": "## [Unreleased]\n\n### Added\n\n- x\n\n## [0.3.0] - 2026-12-02\n\n## [0.3.0-rc.1] - 2026-12-01\n",
		"a second [Unreleased]":        "## [Unreleased]\n\n### Added\n\n- x\n\n## [Unreleased]\n\n### Fixed\n\n- y\n\n## [0.3.0] - 2026-12-02\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parseChangelog(bufio.NewScanner(strings.NewReader(intro + text))); err == nil {
				t.Error("parseChangelog accepts it")
			}
			repo := bumpRepo(t, intro+text)
			if err := bump(repo, "0.3.1", time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC)); err == nil {
				t.Error("bump 0.3.1 accepted it")
			}
			if got, _ := os.ReadFile(filepath.Join(repo, "CHANGELOG.md")); string(got) != intro+text {
				t.Errorf("bump wrote the CHANGELOG it refused:\n%s", got)
			}
		})
	}
}

// RELEASING.md: a break of the library is recorded "in an entry that does
// not begin with another module's directory"; breakNamed's doc: "A name
// alone, written for another module's break ..., records nothing else."
// An entry for classify/h2 that writes its first span as the qualified
// `classify/h2.Evidence` (or the module's import path) is about classify/h2
// and records no break of the library's Evidence (it did: only a span that
// was the directory alone was read as another module's).
func TestAQualifiedOtherModuleEntryRecordsNoLibraryBreak(t *testing.T) {
	for _, first := range []string{"`classify/h2.Evidence`", "`github.com/otelretry/otelretry-go/classify/h2`: `Evidence`"} {
		c := parseWithIntro(t, "## [Unreleased]\n\n### Changed (breaking)\n\n"+
			"- "+first+" takes the stream's state.\n\n"+
			"## [0.3.0] - 2026-12-02\n")
		if !c.breakNamed("0.3.0", libraryModule+"/classify/h2", "Evidence: changed from func(error) (otelretry.Evidence, bool) to func(error, bool) (otelretry.Evidence, bool)") {
			t.Errorf("%s: the recorded break itself is not named", first)
		}
		if c.breakNamed("0.3.0", libraryModule, "./otelretry.Evidence: removed") {
			t.Errorf("%s: the removal of the library's otelretry.Evidence counts as recorded by an entry about classify/h2", first)
		}
	}
}

// bumpRepo is a scratch repository holding CHANGELOG.md with text and an
// otelretry.Version of 0.3.0, for bump.
func bumpRepo(t *testing.T, text string) string {
	t.Helper()
	repo := t.TempDir()
	writeFile(t, repo, "otelretry/version.go", "package otelretry\n\nconst Version = \"0.3.0\"\n")
	writeFile(t, repo, "CHANGELOG.md", text)
	return repo
}

// RELEASING.md, "API compatibility": a method or a field is named with its
// type, so an entry recording the removal of (*Budget).Close records no
// removal of (*Transport).Close, a different break of a different type (a
// reviewer's find: names were matched by their last part alone).
func TestARemovedMethodRecordsNoOtherTypesMethodOfTheSameName(t *testing.T) {
	c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n"+
		"- `(*Budget).Close`: a budget holds nothing to close.\n\n"+
		"## [0.3.0] - 2026-12-02\n")
	if !c.breakNamed("0.3.0", libraryModule, "./otelretry.(*Budget).Close: removed") {
		t.Fatal("the recorded break is not recognised")
	}
	if c.breakNamed("0.3.0", libraryModule, "./otelretry.(*Transport).Close: removed") {
		t.Error("the removal of (*Transport).Close passes: the CHANGELOG records only (*Budget).Close's")
	}
}
