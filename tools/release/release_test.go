// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

const intro = "# Changelog\n\nText.\n\n"

func TestNextVersion(t *testing.T) {
	for _, tc := range []struct {
		name, baseline, changelog string
		next                      string
		breaking                  bool // may the API break on the way to next
	}{
		{"between releases, compatible", "0.2.0",
			"## [Unreleased]\n\n### Added\n\n- x\n\n### Changed\n\n- y\n\n## [0.2.0] - 2026-12-01\n\n### Changed (breaking)\n",
			"0.2.1", false},
		{"between releases, a breaking subsection", "0.2.0",
			"## [Unreleased]\n\n### Changed (breaking)\n\n- x\n\n## [0.2.0] - 2026-12-01\n", "0.3.0", true},
		{"between releases, removed", "0.2.0", "## [Unreleased]\n\n### Removed\n\n- x\n\n## [0.2.0] - 2026-12-01\n", "0.3.0", true},
		{"release commit of a new minor", "0.2.0", "## [0.3.0] - 2026-12-02\n\n## [0.2.0] - 2026-12-01\n", "0.3.0", true},
		{"new minor under an unreleased section", "0.2.0",
			"## [Unreleased]\n\n### Added\n\n## [0.3.0] - 2026-12-02\n\n### Changed (breaking)\n\n## [0.2.0] - 2026-12-01\n", "0.3.0", true},
		{"patch release", "0.3.0", "## [0.3.1] - 2026-12-09\n\n## [0.3.0] - 2026-12-02\n", "0.3.1", false},
		{"after 1.0, a breaking subsection", "1.4.2", "## [Unreleased]\n\n### Changed (breaking)\n\n## [1.4.2] - 2027-01-01\n", "2.0.0", true},
		{"after 1.0, a new minor", "1.4.2", "## [1.5.0] - 2027-02-01\n\n## [1.4.2] - 2027-01-01\n", "1.5.0", false},
		{"1.0.0", "0.9.0", "## [1.0.0] - 2027-02-01\n\n## [0.9.0] - 2027-01-01\n", "1.0.0", true},
		// Numbers past int64 (semver bounds none; a reviewer's find).
		{"a major past int64", "9223372036854775807.0.0",
			"## [Unreleased]\n\n### Removed\n\n## [9223372036854775807.0.0] - 2027-01-01\n", "9223372036854775808.0.0", true},
		{"a minor past int64", "0.9223372036854775807.1",
			"## [Unreleased]\n\n### Removed\n\n## [0.9223372036854775807.1] - 2027-01-01\n", "0.9223372036854775808.0", true},
		{"a patch of many nines", "1.2.99999999999999999999",
			"## [Unreleased]\n\n### Added\n\n## [1.2.99999999999999999999] - 2027-01-01\n", "1.2.100000000000000000000", false},
		{"a new minor past int64", "1.9223372036854775807.0",
			"## [1.9223372036854775808.0] - 2027-02-01\n\n## [1.9223372036854775807.0] - 2027-01-01\n", "1.9223372036854775808.0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseChangelog(bufio.NewScanner(strings.NewReader(intro + tc.changelog)))
			if err != nil {
				t.Fatal(err)
			}
			next, _, err := nextVersion(tc.baseline, c)
			if err != nil || next != tc.next {
				t.Fatalf("nextVersion = %q, %v, want %q", next, err, tc.next)
			}
			if got := breakingAllowed(tc.baseline, next); got != tc.breaking {
				t.Errorf("breakingAllowed(%s, %s) = %v, want %v", tc.baseline, next, got, tc.breaking)
			}
		})
	}
}

func TestNextVersionRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ baseline, changelog string }{
		"baseline newer than the CHANGELOG": {"0.3.0", "## [0.2.0] - 2026-12-01\n"},
		"nothing released":                  {"0.2.0", "## [Unreleased]\n\n### Changed (breaking)\n"},
		"not a release heading":             {"0.2.0", "## [0.3.0-rc.1] - 2026-12-02\n## [0.2.0] - 2026-12-01\n"},
	} {
		c, err := parseChangelog(bufio.NewScanner(strings.NewReader(intro + tc.changelog)))
		if err == nil {
			_, _, err = nextVersion(tc.baseline, c)
		}
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The repository's own CHANGELOG and Version agree, as the release check
// reads them.
func TestRepositoryVersion(t *testing.T) {
	v, err := libraryVersion("../..")
	if err != nil {
		t.Fatal(err)
	}
	c, err := readChangelog("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if v != c.newest || !isRelease(v) {
		t.Errorf("otelretry.Version %q, CHANGELOG %q", v, c.newest)
	}
}

func TestRequirementStates(t *testing.T) {
	root := parseMod(t, ".", "module example.com/r\n\ngo 1.26.0\n")
	dev := parseMod(t, "a/b", "module example.com/r/a/b\n\ngo 1.26.0\n\nreplace example.com/r => ../..\n\nrequire example.com/r "+placeholder+"\n")
	rel := parseMod(t, "a/b", "module example.com/r/a/b\n\ngo 1.26.0\n\nrequire example.com/r v0.3.0\n")
	wrongDir := parseMod(t, "a/b", "module example.com/r/a/b\n\ngo 1.26.0\n\nreplace example.com/r => ..\n\nrequire example.com/r "+placeholder+"\n")
	stale := parseMod(t, "a/b", "module example.com/r/a/b\n\ngo 1.26.0\n\nrequire example.com/r v0.2.0\n")
	for _, tc := range []struct {
		name     string
		m        mod
		released bool
		ok       bool
	}{
		{"development state", dev, false, true},
		{"development state at release", dev, true, false},
		{"release commit", rel, true, true},
		{"release commit between releases", rel, false, false},
		{"replace to another directory", wrongDir, false, false},
		{"an old release", stale, true, false},
	} {
		errs := checkRequirements([]mod{root, tc.m}, "v0.3.0", tc.released)
		if (len(errs) == 0) != tc.ok {
			t.Errorf("%s: errors %v, want ok=%v", tc.name, errs, tc.ok)
		}
	}
	if errs := checkRequirements([]mod{dev, root}, "v0.3.0", false); len(errs) == 0 {
		t.Error("a module requiring one after it in the list passed")
	}
}

func TestAddSums(t *testing.T) {
	file := filepath.Join(t.TempDir(), "go.sum")
	os.WriteFile(file, []byte("example.com/z v1.0.0 h1:z=\nexample.com/a v1.10.0 h1:a10=\nexample.com/a v1.10.0/go.mod h1:a10m=\nexample.com/a v1.9.0/go.mod h1:a9m=\n"), 0o644)
	if err := addSums(file, []string{"example.com/m v0.3.0 h1:m=", "example.com/m v0.3.0/go.mod h1:mm="}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(file)
	want := "example.com/a v1.9.0/go.mod h1:a9m=\nexample.com/a v1.10.0 h1:a10=\nexample.com/a v1.10.0/go.mod h1:a10m=\n" +
		"example.com/m v0.3.0 h1:m=\nexample.com/m v0.3.0/go.mod h1:mm=\nexample.com/z v1.0.0 h1:z=\n"
	if string(got) != want {
		t.Errorf("go.sum:\n%s\nwant:\n%s", got, want)
	}
}

// The go.sum lines prepare writes come from the working tree; the proxy
// (and a public one) serves zips of the tag. Both must be the same zip:
// the same files, a nested module's left out, the repository's LICENSE
// added to a module in a subdirectory, a file marked export-ignore left
// out, and one in a directory so marked (git archive leaves them out of
// the tag's; git ls-files listed them, and git check-attr tells the
// directory's mark of the directory alone).
func TestWorktreeZipIsTheTagsZip(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	for name, data := range map[string]string{
		"go.mod":             "module example.com/r\n\ngo 1.26.0\n",
		"LICENSE":            "license text\n",
		"r.go":               "package r\n",
		"docs/notes.md":      "notes\n",
		"docs/draft.md":      "not in an archive\n",
		".gitattributes":     "docs/draft.md export-ignore\ndrafts export-ignore\n",
		"drafts/a.md":        "left out with its directory\n",
		"sub/go.mod":         "module example.com/r/sub\n\ngo 1.26.0\n",
		"sub/sub.go":         "package sub\n",
		"sub/testdata/x.txt": "x\n",
		"tools/t/go.mod":     "module example.com/r/tools/t\n\ngo 1.26.0\n",
		"tools/t/main.go":    "package main\n",
		".gitignore":         "/bin/\n",
	} {
		writeFile(t, repo, name, data)
	}
	writeFile(t, repo, "bin/ignored", "build output\n")
	runGit(t, repo, "init", "-q")
	runGit(t, repo, "add", ".")
	runGit(t, repo, "commit", "-q", "-m", "c")
	runGit(t, repo, "tag", "v0.3.0")
	runGit(t, repo, "tag", "sub/v0.3.0")
	for _, tc := range []struct{ dir, path, tag, subdir string }{
		{".", "example.com/r", "v0.3.0", ""},
		{"sub", "example.com/r/sub", "sub/v0.3.0", "sub"},
	} {
		m := module.Version{Path: tc.path, Version: "v0.3.0"}
		fromTree, err := worktreeZip(repo, tc.dir, m)
		if err != nil {
			t.Fatal(err)
		}
		var fromTag bytes.Buffer
		if err := modzip.CreateFromVCS(&fromTag, m, repo, tc.tag, tc.subdir); err != nil {
			t.Fatal(err)
		}
		h1, err := hashZip(fromTree)
		if err != nil {
			t.Fatal(err)
		}
		h2, err := hashZip(fromTag.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if h1 != h2 {
			t.Errorf("%s: the working tree's zip hashes %s, the tag's %s", tc.path, h1, h2)
		}
	}
}

// An incompatible change passes the API check only when a breaking
// subsection since the baseline names it in code, so that a removal or a
// change nobody recorded fails even after another break was recorded.
func TestIncompatibleChangesMustBeNamed(t *testing.T) {
	const changelogText = intro + "## [Unreleased]\n\n### Added\n\n- `Added` and `ErrAlsoAdded`.\n\n" +
		"### Changed (breaking)\n\n- `otelretry` unexports `MaxRetryAfter` and `(*Transport).Close`;\n  `Options.Field` is gone:\n\n" +
		"  ```diff\n  -var ErrInBlock = errors.New(\"x\")\n  ```\n\n" +
		"### Removed\n\n- package `classify/h4`.\n\n### Fixed\n\n- `Fixed` is no break.\n\n" +
		"## [0.3.0] - 2026-12-02\n\n### Changed (breaking)\n\n- `OldBreak`, recorded for 0.3.0.\n\n## [0.2.0] - 2026-12-01\n"
	c, err := parseChangelog(bufio.NewScanner(strings.NewReader(changelogText)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		message string
		named   bool
	}{
		{"./otelretry.MaxRetryAfter: removed", true},
		{"./otelretry.(*Transport).Close: removed", true},
		{"./otelretry.Options.Field: removed", true},
		{"./otelretry.ErrInBlock: removed", true},
		{"package github.com/otelretry/otelretry-go/classify/h4: removed", true},
		{"./otelretry.(*Embedded).Close, method set of *Options: removed", false}, // Embedded.Close, Options.Close: no entry names either
		{"./otelretry.NotRecorded: changed from func() to func(int)", false},
		{"./otelretry.Added: removed", false},    // named under Added, not as a break
		{"./otelretry.Fixed: removed", false},    // named under Fixed
		{"./otelretry.OldBreak: removed", false}, // recorded for the baseline's release, not since
		{"./cmd/retryinspect/htmlreport.Render: removed", false},
		{"Render: removed", false},
	} {
		if got := c.breakNamed("0.3.0", libraryModule, tc.message); got != tc.named {
			t.Errorf("%q (names %q): named %v, want %v", tc.message, changedNames(tc.message), got, tc.named)
		}
	}
	// A release after the baseline (the version commit, before its
	// baseline is taken) records its breaks in its own section.
	if !c.breakNamed("0.2.0", libraryModule, "./otelretry.OldBreak: removed") {
		t.Error("a break recorded in a release after the baseline is not named")
	}
}

// A name records the break of another module's object only in an entry
// that names that module's directory, and a removed package only by its
// path: a word that an entry writes for another break, or in an example,
// records nothing. Before, the repository's own [Unreleased], which
// writes `h2.Classify` in an example and `attrs` in passing, let a
// change of classify/h2's Classify and the removal of attrs through.
func TestABreakIsNamedForItsOwnModule(t *testing.T) {
	real, err := readChangelog("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	h2 := libraryModule + "/classify/h2"
	if real.breakNamed("0.3.0", h2, "Classify: changed from func(otelretry.Answer) otelretry.Classification to func(otelretry.Answer, bool) otelretry.Classification") {
		t.Error("a change of classify/h2's Classify that no entry records counts as named")
	}
	if real.breakNamed("0.3.0", libraryModule, "package "+libraryModule+"/attrs: removed") {
		t.Error("the removal of attrs, which no entry records, counts as named")
	}
	const changelogText = intro + "## [Unreleased]\n\n### Changed (breaking)\n\n- `classify/h2`: `Classify` takes a mode.\n" +
		"- `WithClassifier(h3.Classify)` is shorter.\n\n## [0.3.0] - 2026-12-02\n"
	c, err := parseChangelog(bufio.NewScanner(strings.NewReader(changelogText)))
	if err != nil {
		t.Fatal(err)
	}
	if !c.breakNamed("0.3.0", h2, "Classify: changed from func() to func(int)") {
		t.Error("an entry naming classify/h2 and Classify does not record its change")
	}
	if c.breakNamed("0.3.0", libraryModule+"/classify/h3", "Classify: changed from func() to func(int)") {
		t.Error("an example of h3.Classify records a change of classify/h3's Classify")
	}
}

func TestChangedNames(t *testing.T) {
	for message, want := range map[string][]string{
		"./otelretry.ErrInvalidRetryAfter: removed":                      {"ErrInvalidRetryAfter"},
		"./otelretry.(*Transport).RoundTrip: changed from func() to int": {"Transport.RoundTrip"},
		"./otelretry.Config.Budget: removed":                             {"Config.Budget"},
		"./cmd/retryinspect/htmlreport.Options: removed":                 {"Options"},
		"Classifier: removed":                                            {"Classifier"},
		"(*Classifier).Classify: removed":                                {"Classifier.Classify"},
		"./otelretry.(*Cache[K, V]).Get: removed":                        {"Cache.Get"},
		"./otelretry.(*E).M, method set of *T: removed":                  {"E.M", "T.M"},
		"package github.com/otelretry/otelretry-go/metrics: removed":     {"metrics"},
	} {
		if got := changedNames(message); !slices.Equal(got, want) {
			t.Errorf("changedNames(%q) = %q, want %q", message, got, want)
		}
	}
}

// bump makes a release's version commit edits: the [Unreleased] section
// becomes the release, dated, under a new empty [Unreleased], and Version
// names it; the version test and the release check then agree.
func TestBump(t *testing.T) {
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, "otelretry"), 0o755)
	const versionGo = "// Copyright\n\npackage otelretry\n\n// Version is the version.\nconst Version = \"0.3.0\"\n\nconst other = \"0.3.0\"\n"
	const changelogText = intro + "## [Unreleased]\n\n### Added\n\n- x\n\n## [0.3.0] - 2026-12-02\n\n- y\n"
	write := func() {
		os.WriteFile(filepath.Join(repo, "otelretry", "version.go"), []byte(versionGo), 0o644)
		os.WriteFile(filepath.Join(repo, "CHANGELOG.md"), []byte(changelogText), 0o644)
	}
	write()
	day := time.Date(2026, 12, 24, 23, 30, 0, 0, time.UTC)
	if err := bump(repo, "0.4.0", day); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
	want := intro + "## [Unreleased]\n\n## [0.4.0] - 2026-12-24\n\n### Added\n\n- x\n\n## [0.3.0] - 2026-12-02\n\n- y\n"
	if string(got) != want {
		t.Errorf("CHANGELOG.md:\n%s\nwant:\n%s", got, want)
	}
	gotGo, _ := os.ReadFile(filepath.Join(repo, "otelretry", "version.go"))
	if want := strings.Replace(versionGo, `const Version = "0.3.0"`, `const Version = "0.4.0"`, 1); string(gotGo) != want {
		t.Errorf("version.go:\n%s\nwant:\n%s", gotGo, want)
	}
	if v, err := libraryVersion(repo); err != nil || v != "0.4.0" {
		t.Errorf("libraryVersion = %q, %v", v, err)
	}

	for name, tc := range map[string]struct{ version, changelog string }{
		"not newer":           {"0.3.0", changelogText},
		"older":               {"0.2.9", changelogText},
		"not a release":       {"0.4.0-rc.1", changelogText},
		"no [Unreleased]":     {"0.4.0", intro + "## [0.3.0] - 2026-12-02\n"},
		"Version disagreeing": {"0.4.0", intro + "## [Unreleased]\n\n## [0.3.1] - 2026-12-03\n"},
	} {
		write()
		os.WriteFile(filepath.Join(repo, "CHANGELOG.md"), []byte(tc.changelog), 0o644)
		if err := bump(repo, tc.version, day); err == nil {
			t.Errorf("%s: bump %s: no error", name, tc.version)
		}
		if data, _ := os.ReadFile(filepath.Join(repo, "otelretry", "version.go")); string(data) != versionGo {
			t.Errorf("%s: version.go changed by a refused bump", name)
		}
	}
}

// RELEASING.md: "The next version is the next minor (major from 1.0) when
// [Unreleased] has such a subsection, and the next patch when it has
// none." Step 1 then amends the baseline into the version commit, so the
// API check run on it ("Run scripts/test.sh on it") compares the release
// with itself and can no longer catch a wrong version: bump is the one
// step that sees [Unreleased] and the version together, and refuses a
// patch release 0.3.1 over a "### Changed (breaking)" [Unreleased] (it
// made one before).
func TestBumpRefusesAPatchOverABreakingUnreleased(t *testing.T) {
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, "otelretry"), 0o755)
	const versionGo = "package otelretry\n\nconst Version = \"0.3.0\"\n"
	const changelogText = intro + "## [Unreleased]\n\n### Changed (breaking)\n\n- `otelretry` unexports `MaxRetryAfter`.\n\n" +
		"### Fixed\n\n- x\n\n## [0.3.0] - 2026-12-02\n\n- y\n"
	os.WriteFile(filepath.Join(repo, "otelretry", "version.go"), []byte(versionGo), 0o644)
	os.WriteFile(filepath.Join(repo, "CHANGELOG.md"), []byte(changelogText), 0o644)

	before, err := parseChangelog(bufio.NewScanner(strings.NewReader(changelogText)))
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := nextVersion("0.3.0", before)
	err = bump(repo, "0.3.1", time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC))
	if err == nil {
		got, _ := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
		t.Errorf("bump 0.3.1 over an [Unreleased] with \"### Changed (breaking)\" succeeded (the next version is %s; "+
			"breakingAllowed(0.3.0, 0.3.1) = %v); CHANGELOG.md now begins:\n%s",
			want, breakingAllowed("0.3.0", "0.3.1"), strings.Join(strings.SplitN(string(got), "\n", 14)[:13], "\n"))
	}
}

// scratchClone clones this repository's HEAD into a temporary directory
// (this repository gets no commit and no tag) and returns the clone's root
// and an environment for running its scripts: the release tool is built
// into a cache of the test's own.
func scratchClone(t *testing.T) (string, []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "otelretry-go")
	env := append(os.Environ(), "OTELRETRY_CACHE="+filepath.Join(tmp, "cache"), "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	cmd := exec.Command("git", "clone", "-q", "--no-tags", "../..", clone)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	return clone, env
}

// runIn runs a command in dir and returns its combined output and error.
func runIn(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runIn(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// scripts/release.sh tags the version commit only: between releases
// Version, the CHANGELOG's newest heading and api/VERSION agree on every
// commit, so a later one passed its checks, and was tagged, with an API
// that may differ from the baseline the release vouches for.
func TestReleaseRefusesACommitAfterTheVersionCommit(t *testing.T) {
	clone, env := scratchClone(t)
	version := strings.TrimSpace(mustRun(t, clone, env, "cat", "api/VERSION"))
	mustRun(t, clone, env, "git", "commit", "-q", "--allow-empty", "-m", "a commit after the version commit")
	out, err := runIn(clone, env, "scripts/release.sh", version)
	if err == nil || !strings.Contains(out, "version commit") {
		t.Errorf("scripts/release.sh %s at a commit after its version commit: %v\n%s", version, err, out)
	}
	if tags := mustRun(t, clone, env, "git", "tag", "--list"); strings.TrimSpace(tags) != "" {
		t.Errorf("tags made: %s", tags)
	}
	// A shallow clone of that commit, whose cut-off root seems to add every
	// file, so that the commit looks like the last to change Version: the
	// history is needed to tell, and release.sh refuses without it.
	shallow := filepath.Join(t.TempDir(), "shallow")
	mustRun(t, clone, env, "git", "clone", "-q", "--no-tags", "--depth", "1", "file://"+clone, shallow)
	out, err = runIn(shallow, env, "scripts/release.sh", version)
	if tags := strings.TrimSpace(mustRun(t, shallow, env, "git", "tag", "--list")); err == nil || tags != "" {
		t.Errorf("scripts/release.sh %s in a shallow clone of a commit after its version commit: %v, tags %q\n%s", version, err, tags, out)
	}
}

// An item of an entry (a nested bullet) is in the entry's module: the
// entry names `classify/h2`, its items each a change of it (the
// CHANGELOG's own style for a list of changes). Before, each item was an
// entry of its own, without the module's directory, and the break was
// taken for unrecorded.
func TestAnItemOfAModulesEntryNamesItsBreak(t *testing.T) {
	const changelogText = intro + "## [Unreleased]\n\n### Changed (breaking)\n\n" +
		"- `classify/h2` takes the stream's state into account. Each change:\n" +
		"  - `Classify` takes a mode.\n" +
		"  - `Verdict` is removed.\n" +
		"- `otelretry`: `WithClassifier(h3.Example)` is shorter.\n\n" +
		"## [0.3.0] - 2026-12-02\n"
	c, err := parseChangelog(bufio.NewScanner(strings.NewReader(changelogText)))
	if err != nil {
		t.Fatal(err)
	}
	h2 := libraryModule + "/classify/h2"
	for _, msg := range []string{"Classify: changed from func() to func(int)", "Verdict: removed"} {
		if !c.breakNamed("0.3.0", h2, msg) {
			t.Errorf("classify/h2's %q, named in an item of the entry that names `classify/h2`, counts as unnamed", msg)
		}
	}
	if c.breakNamed("0.3.0", libraryModule+"/classify/h3", "Example: removed") {
		t.Error("another entry's example records a change of classify/h3")
	}
}

// parseMod is the module of the go.mod text in directory dir.
func parseMod(t *testing.T, dir, text string) mod {
	t.Helper()
	f, err := modfile.Parse(dir+"/go.mod", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	return mod{dir: dir, path: f.Module.Mod.Path, file: f}
}

// writeFile writes data to the file name (slash-separated) under dir,
// making its directories.
func writeFile(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runGit runs git with args in repo, as a committer of its own and with no
// user configuration.
func runGit(t *testing.T, repo string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
