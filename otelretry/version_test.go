// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/otelretry"
)

// changelogHeading matches a section heading of CHANGELOG.md:
// "## [Unreleased]" or "## [X.Y.Z] - YYYY-MM-DD".
var changelogHeading = regexp.MustCompile(`^## \[([^\]]*)\](.*)$`)

var releaseHeading = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

var releaseDate = regexp.MustCompile(`^ - [0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// releasedVersion returns the version that Version must name for a
// CHANGELOG: its newest "## [X.Y.Z] - DATE" heading. An "## [Unreleased]"
// section may come first and does not change it. It fails on headings out
// of that form or out of order.
func releasedVersion(changelog string) (string, error) {
	var versions [][3]string
	var first string
	sc := bufio.NewScanner(strings.NewReader(changelog))
	for line := 1; sc.Scan(); line++ {
		m := changelogHeading.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name, rest := m[1], m[2]
		if name == "Unreleased" {
			if len(versions) > 0 || rest != "" {
				return "", fmt.Errorf("line %d: %q: [Unreleased] is only the first section, without a date", line, sc.Text())
			}
			continue
		}
		v := releaseHeading.FindStringSubmatch(name)
		if v == nil || !releaseDate.MatchString(rest) {
			return "", fmt.Errorf("line %d: %q: want \"## [X.Y.Z] - YYYY-MM-DD\"", line, sc.Text())
		}
		// The numbers as written (no leading zero): compared by length,
		// then digit by digit, so that none is too large to compare.
		n := [3]string{v[1], v[2], v[3]}
		if len(versions) > 0 && !less(n, versions[len(versions)-1]) {
			return "", fmt.Errorf("line %d: %s is not older than the release above it", line, name)
		}
		if first == "" {
			first = name
		}
		versions = append(versions, n)
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if first == "" {
		return "", fmt.Errorf("no released version (\"## [X.Y.Z] - YYYY-MM-DD\")")
	}
	return first, nil
}

func less(a, b [3]string) bool {
	for i := range a {
		if a[i] != b[i] {
			if len(a[i]) != len(b[i]) {
				return len(a[i]) < len(b[i])
			}
			return a[i] < b[i]
		}
	}
	return false
}

// Version and the CHANGELOG cannot disagree: Version is the newest release
// heading, also while an [Unreleased] section sits above it.
func TestVersionIsTheNewestChangelogRelease(t *testing.T) {
	data, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := releasedVersion(string(data))
	if err != nil {
		t.Fatalf("CHANGELOG.md: %v", err)
	}
	if otelretry.Version != want {
		t.Errorf("otelretry.Version = %q, but the newest release in CHANGELOG.md is %q: set both in the release commit",
			otelretry.Version, want)
	}
}

// A release names its API baseline: the release that Version and the
// CHANGELOG name is the one api/VERSION was taken from, so that
// scripts/apicheck.sh judges the API against the last release and not an
// older one.
func TestVersionHasItsAPIBaseline(t *testing.T) {
	data, err := os.ReadFile("../api/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if baseline := strings.TrimSpace(string(data)); baseline != otelretry.Version {
		t.Errorf("api/VERSION is %q, but otelretry.Version and CHANGELOG.md name %s: run scripts/apibaseline.sh "+
			"(it takes the API of the commit that set Version) and commit api/ (RELEASING.md)", baseline, otelretry.Version)
	}
}

// The rule between releases, and the headings it refuses.
func TestReleasedVersionRule(t *testing.T) {
	const intro = "# Changelog\n\nSome text. ## [9.9.9] inside a line is no heading.\n\n"
	for _, tc := range []struct {
		name, changelog, want string
	}{
		{"between releases: the last release", "## [Unreleased]\n\n- a change\n\n## [0.2.0] - 2026-12-01\n## [0.1.0] - 2026-11-30\n", "0.2.0"},
		{"empty unreleased section", "## [Unreleased]\n\n## [0.2.0] - 2026-12-01\n", "0.2.0"},
		{"release commit", "## [0.3.0] - 2026-12-02\n\n## [0.2.0] - 2026-12-01\n", "0.3.0"},
		{"release commit, unreleased section kept", "## [Unreleased]\n\n## [0.3.0] - 2026-12-02\n## [0.2.0] - 2026-12-01\n", "0.3.0"},
		{"major", "## [1.0.0] - 2027-01-01\n## [0.10.0] - 2026-12-24\n## [0.9.1] - 2026-12-20\n", "1.0.0"},
		{"nothing released", "## [Unreleased]\n\n- a change\n", ""},
		{"unreleased below a release", "## [0.3.0] - 2026-12-02\n## [Unreleased]\n## [0.2.0] - 2026-12-01\n", ""},
		{"unreleased with a date", "## [Unreleased] - 2026-12-02\n## [0.2.0] - 2026-12-01\n", ""},
		{"release without a date", "## [0.3.0]\n## [0.2.0] - 2026-12-01\n", ""},
		{"pre-release", "## [0.3.0-rc.1] - 2026-12-02\n## [0.2.0] - 2026-12-01\n", ""},
		{"v prefix", "## [v0.3.0] - 2026-12-02\n", ""},
		{"out of order", "## [0.2.0] - 2026-12-01\n## [0.3.0] - 2026-12-02\n", ""},
		{"repeated", "## [0.2.0] - 2026-12-01\n## [0.2.0] - 2026-12-01\n", ""},
		// Numbers past int64 compare as written (they compared equal, each
		// clamped, and the older was refused: a reviewer's find, where the
		// release tool's semver read them right).
		{"numbers past int64", "## [99999999999999999999.0.0] - 2026-12-02\n## [99999999999999999998.0.0] - 2026-12-01\n", "99999999999999999999.0.0"},
		{"a longer number is larger", "## [0.10.0] - 2026-12-02\n## [0.9.0] - 2026-12-01\n", "0.10.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := releasedVersion(intro + tc.changelog)
			switch {
			case tc.want == "" && err == nil:
				t.Errorf("releasedVersion = %q, want an error", got)
			case tc.want != "" && (err != nil || got != tc.want):
				t.Errorf("releasedVersion = %q, %v, want %q", got, err, tc.want)
			}
		})
	}
}
