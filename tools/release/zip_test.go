// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// git archive, which the go command reads a tag through, expands the
// $Format:...$ of an export-subst file with the tagged commit's data, which
// the working tree cannot give before the commit: worktreeZip refuses such
// a file, where it returned a zip whose hash (written to go.sum by
// prepare) was not the tag's (a reviewer's find).
func TestAnExportSubstFileIsRefused(t *testing.T) {
	repo := taggedRepo(t, map[string]string{
		"go.mod":         "module example.com/r\n\ngo 1.26.0\n",
		"LICENSE":        "license text\n",
		"r.go":           "package r\n\n// Commit is $Format:%H$.\nconst Commit = \"$Format:%H$\"\n",
		".gitattributes": "r.go export-subst\n",
	})
	_, err := worktreeZip(repo, ".", module.Version{Path: "example.com/r", Version: "v0.3.0"})
	if err == nil || !strings.Contains(err.Error(), "r.go: export-subst") {
		t.Errorf("worktreeZip = %v, want r.go refused for its export-subst", err)
	}
}

// zipHashes returns the h1: hashes of worktreeZip of repo and of the zip
// golang.org/x/mod/zip builds from the tag in tagRepo (the same commit).
func zipHashes(t *testing.T, repo, tagRepo string) (tree, tag string) {
	t.Helper()
	m := module.Version{Path: "example.com/r", Version: "v0.3.0"}
	fromTree, err := worktreeZip(repo, ".", m)
	if err != nil {
		t.Fatalf("worktreeZip: %v", err)
	}
	var fromTag bytes.Buffer
	if err := modzip.CreateFromVCS(&fromTag, m, tagRepo, "v0.3.0", ""); err != nil {
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
	return h1, h2
}

func taggedRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	for name, data := range files {
		writeFile(t, repo, name, data)
	}
	runGit(t, repo, "init", "-q")
	runGit(t, repo, "add", ".")
	runGit(t, repo, "commit", "-q", "-m", "c")
	runGit(t, repo, "tag", "v0.3.0")
	return repo
}

// A directory marked export-ignore by a directory-only pattern ("drafts/",
// the usual gitattributes spelling) is left out by git archive, which
// checks a directory's path with its trailing slash; git check-attr of
// "drafts" does not match "drafts/". worktreeZip's zip (whose hash
// prepare writes to go.sum) is the tag's (a reviewer's find: it kept the
// directory).
func TestADirectoryIgnoredByATrailingSlashPatternIsLeftOut(t *testing.T) {
	repo := taggedRepo(t, map[string]string{
		"go.mod":         "module example.com/r\n\ngo 1.26.0\n",
		"LICENSE":        "license text\n",
		"r.go":           "package r\n",
		"drafts/a.md":    "left out with its directory\n",
		".gitattributes": "drafts/ export-ignore\n",
	})
	if tree, tag := zipHashes(t, repo, repo); tree != tag {
		t.Errorf("with `drafts/ export-ignore`: the working tree's zip hashes %s, the tag's %s", tree, tag)
	}
}

// Same mark, on a directory holding an export-subst file: git archive
// leaves the directory out, so nothing is rewritten; worktreeZip must not
// refuse it (it skips export-ignored files before the export-subst check).
func TestAnExportSubstFileInAnIgnoredDirectoryIsNoBar(t *testing.T) {
	repo := taggedRepo(t, map[string]string{
		"go.mod":         "module example.com/r\n\ngo 1.26.0\n",
		"LICENSE":        "license text\n",
		"r.go":           "package r\n",
		"drafts/v.txt":   "$Format:%H$\n",
		".gitattributes": "drafts/ export-ignore\ndrafts/v.txt export-subst\n",
	})
	_, err := worktreeZip(repo, ".", module.Version{Path: "example.com/r", Version: "v0.3.0"})
	if err != nil {
		t.Errorf("worktreeZip refuses a file git archive leaves out: %v", err)
	}
}

// Patterns that held: export-subst by a pattern over a directory's files is
// refused; on a directory alone, unset (-export-subst), or on a file in an
// export-ignored directory, it is not.
func TestExportSubstPatterns(t *testing.T) {
	base := map[string]string{
		"go.mod":    "module example.com/r\n\ngo 1.26.0\n",
		"LICENSE":   "license text\n",
		"r.go":      "package r\n",
		"gen/v.txt": "$Format:%H$\n",
	}
	for attrs, wantRefused := range map[string]bool{
		"gen/** export-subst\n":                         true,
		"*.txt export-subst\n":                          true,
		"gen export-subst\n":                            false,
		"gen/* export-subst\ngen/v.txt -export-subst\n": false,
		"gen export-ignore\ngen/v.txt export-subst\n":   false,
		"gen/v.txt export-subst=yes\n":                  false,
	} {
		files := map[string]string{".gitattributes": attrs}
		for k, v := range base {
			files[k] = v
		}
		repo := taggedRepo(t, files)
		_, err := worktreeZip(repo, ".", module.Version{Path: "example.com/r", Version: "v0.3.0"})
		if refused := err != nil && strings.Contains(err.Error(), "export-subst"); refused != wantRefused {
			t.Errorf("%q: worktreeZip err = %v, want refused %v", attrs, err, wantRefused)
			continue
		}
		if !wantRefused {
			if tree, tag := zipHashes(t, repo, repo); tree != tag {
				t.Errorf("%q: the working tree's zip hashes %s, the tag's %s", attrs, tree, tag)
			}
		}
	}
}

// An export-ignore in .git/info/attributes is a local setting: git
// check-attr (and a local git archive) honour it, but a public proxy
// archives a fresh clone of the pushed tag, which has none, so the go.sum
// hash prepare wrote differed from the tag's (a reviewer's find). Such a
// file is refused; one of comments alone is not.
func TestLocalAttributesAreRefused(t *testing.T) {
	repo := taggedRepo(t, map[string]string{
		"go.mod":     "module example.com/r\n\ngo 1.26.0\n",
		"LICENSE":    "license text\n",
		"r.go":       "package r\n",
		"notes/a.md": "notes\n",
	})
	m := module.Version{Path: "example.com/r", Version: "v0.3.0"}
	writeFile(t, repo, ".git/info/attributes", "# exclude = none\n\n")
	if _, err := worktreeZip(repo, ".", m); err != nil {
		t.Errorf("info/attributes of comments alone: %v", err)
	}
	writeFile(t, repo, ".git/info/attributes", "notes export-ignore\n")
	if _, err := worktreeZip(repo, ".", m); err == nil || !strings.Contains(err.Error(), "notes export-ignore") {
		t.Errorf("info/attributes marking notes export-ignore: %v, want it refused", err)
	}
}

// worktreeZip's zip is the tag's for every .gitattributes layout: git
// archive checks a directory by its path with a trailing slash alone (a
// reviewer's table; "drafts" set and "drafts/" unset kept the directory
// in the archive and out of the zip).
func TestExportIgnoreLayoutsMatchTheTag(t *testing.T) {
	base := map[string]string{
		"go.mod":              "module example.com/r\n\ngo 1.26.0\n",
		"LICENSE":             "license text\n",
		"r.go":                "package r\n",
		"drafts/a.md":         "a\n",
		"drafts/keep.md":      "keep\n",
		"drafts/sub/b.md":     "b\n",
		"docs/x/y/z.md":       "z\n",
		"docs/x/w.md":         "w\n",
		"docs/.gitattributes": "x/y/ export-ignore\n",
	}
	for _, attrs := range []string{
		"drafts export-ignore\n",
		"drafts/ export-ignore\n",
		"drafts/** export-ignore\n",
		"drafts/** export-ignore\n!drafts/keep.md\n",
		"drafts/** export-ignore\ndrafts/keep.md -export-ignore\n",
		"drafts/ export-ignore\ndrafts/keep.md -export-ignore\n",
		"drafts/ export-ignore\ndrafts -export-ignore\n",
		"drafts export-ignore\ndrafts/ -export-ignore\n",
		"drafts export-ignore\ndrafts/ !export-ignore\n",
		"sub/ export-ignore\n",
		"**/sub export-ignore\n",
		"drafts/*/ export-ignore\n",
		"docs/x export-ignore\ndocs/x/w.md -export-ignore\n",
		"*.md export-ignore\n!*.md\n",
	} {
		files := map[string]string{".gitattributes": attrs}
		for k, v := range base {
			files[k] = v
		}
		repo := taggedRepo(t, files)
		if tree, tag := zipHashes(t, repo, repo); tree != tag {
			t.Errorf("%q: the working tree's zip hashes %s, the tag's %s", attrs, tree, tag)
		}
	}
}

// A module in a subdirectory with attributes at several levels: the
// working tree's zip is the one x/mod/zip makes from the tag's subdir.
func TestASubdirectoryModuleMatchesTheTag(t *testing.T) {
	repo := taggedRepo(t, map[string]string{
		"LICENSE":              "license text\n",
		".gitattributes":       "sub/drafts/ export-ignore\n",
		"sub/go.mod":           "module example.com/r/sub\n\ngo 1.26.0\n",
		"sub/s.go":             "package sub\n",
		"sub/drafts/a.md":      "a\n",
		"sub/n/.gitattributes": "*.txt export-ignore\n",
		"sub/n/t.txt":          "t\n",
		"sub/n/k.md":           "k\n",
	})
	runGit(t, repo, "tag", "sub/v0.3.0")
	m := module.Version{Path: "example.com/r/sub", Version: "v0.3.0"}
	fromTree, err := worktreeZip(repo, "sub", m)
	if err != nil {
		t.Fatal(err)
	}
	var fromTag bytes.Buffer
	if err := modzip.CreateFromVCS(&fromTag, m, repo, "sub/v0.3.0", "sub"); err != nil {
		t.Fatal(err)
	}
	h1, _ := hashZip(fromTree)
	h2, _ := hashZip(fromTag.Bytes())
	if h1 != h2 {
		t.Errorf("subdir module: tree %s, tag %s", h1, h2)
	}
}

// A clone whose own configuration writes CRLF line ends on checkout
// (core.autocrlf=true, Git for Windows' default) has CRLF text files in a
// clean working tree, where the tag's zip (git archive as the go command
// runs it) has LF ones: the zip made from the tree is refused, naming the
// setting (a reviewer's find: its hash, written to go.sum, was not the
// tag's). Set back to false, the tree checked out again, it is the tag's.
func TestACRLFCloneIsRefused(t *testing.T) {
	files := map[string]string{
		"go.mod":  "module example.com/r\n\ngo 1.26.0\n",
		"LICENSE": "license text\n",
		"r.go":    "package r\n\nconst A = 1\n",
	}
	repo := taggedRepo(t, files)
	checkout := func() {
		for name := range files {
			runGit(t, repo, "rm", "-q", "--cached", name)
		}
		runGit(t, repo, "reset", "-q", "--hard")
	}
	runGit(t, repo, "config", "core.autocrlf", "true")
	checkout()
	m := module.Version{Path: "example.com/r", Version: "v0.3.0"}
	if _, err := worktreeZip(repo, ".", m); err == nil || !strings.Contains(err.Error(), "core.autocrlf=true") {
		t.Errorf("a clone with core.autocrlf=true: %v, want it refused", err)
	}
	runGit(t, repo, "config", "core.autocrlf", "false")
	checkout()
	if tree, tag := zipHashes(t, repo, repo); tree != tag {
		t.Errorf("core.autocrlf=false, checked out again: the tree's zip %s, the tag's %s", tree, tag)
	}
}

// freshCloneTagHash is the h1: hash of the zip x/mod/zip makes from v0.3.0 in a
// fresh clone of repo (no local configuration): what a public proxy serves.
func freshCloneTagHash(t *testing.T, repo string) string {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "clone")
	runGit(t, filepath.Dir(clone), "clone", "-q", repo, clone)
	var z bytes.Buffer
	m := module.Version{Path: "example.com/r", Version: "v0.3.0"}
	if err := modzip.CreateFromVCS(&z, m, clone, "v0.3.0", ""); err != nil {
		t.Fatal(err)
	}
	h, err := hashZip(z.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// checkOutAgain checks the whole tree out again under the current config.
func checkOutAgain(t *testing.T, repo string) {
	t.Helper()
	runGit(t, repo, "rm", "-r", "-q", "--cached", ".")
	runGit(t, repo, "reset", "-q", "--hard")
}

// For each clone-local setting, worktreeZip on a clean checkout either
// refuses or returns the zip a fresh clone of the tag gives: its hash is
// what prepare writes to go.sum (a reviewer's table: other spellings of
// core.autocrlf=true, a filter driver configured in the clone alone and
// core.symlinks=false with a committed link each gave another zip).
func TestCloneSettingsMatchTheTagOrAreRefused(t *testing.T) {
	base := func(extra map[string]string) map[string]string {
		f := map[string]string{
			"go.mod":  "module example.com/r\n\ngo 1.26.0\n",
			"LICENSE": "license text\n",
			"r.go":    "package r\n\nconst A = 1\n",
		}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	cases := []struct {
		name    string
		files   map[string]string
		setup   func(t *testing.T, repo string)
		refusal string // what the refusal names; "" when the zip is the tag's
	}{
		{"autocrlf=1", base(nil), func(t *testing.T, repo string) {
			runGit(t, repo, "config", "core.autocrlf", "1")
			checkOutAgain(t, repo)
		}, "core.autocrlf=1"},
		{"autocrlf=yes", base(nil), func(t *testing.T, repo string) {
			runGit(t, repo, "config", "core.autocrlf", "yes")
			checkOutAgain(t, repo)
		}, "core.autocrlf=yes"},
		{"autocrlf=on", base(nil), func(t *testing.T, repo string) {
			runGit(t, repo, "config", "core.autocrlf", "on")
			checkOutAgain(t, repo)
		}, "core.autocrlf=on"},
		{"local smudge filter", base(map[string]string{"f.txt": "aaa\n", ".gitattributes": "*.txt filter=kw\n"}), func(t *testing.T, repo string) {
			runGit(t, repo, "config", "filter.kw.smudge", "sed s/a/b/g")
			runGit(t, repo, "config", "filter.kw.clean", "sed s/b/a/g")
			checkOutAgain(t, repo)
		}, "f.txt: filter=kw"},
		{"symlinks=false", base(map[string]string{"target.txt": "t\n"}), func(t *testing.T, repo string) {
			runGit(t, repo, "config", "core.symlinks", "false")
			checkOutAgain(t, repo)
		}, ""},
		{"autocrlf=input", base(nil), func(t *testing.T, repo string) {
			runGit(t, repo, "config", "core.autocrlf", "input")
			checkOutAgain(t, repo)
		}, ""},
		{"autocrlf=0", base(nil), func(t *testing.T, repo string) {
			runGit(t, repo, "config", "core.autocrlf", "0")
			checkOutAgain(t, repo)
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := taggedRepo(t, c.files)
			if c.name == "symlinks=false" {
				// a symlink committed in a second commit, retagged
				runGit(t, repo, "tag", "-d", "v0.3.0")
				commitSymlink(t, repo)
				runGit(t, repo, "tag", "v0.3.0")
			}
			c.setup(t, repo)
			m := module.Version{Path: "example.com/r", Version: "v0.3.0"}
			z, err := worktreeZip(repo, ".", m)
			if c.refusal != "" || err != nil {
				if err == nil || c.refusal == "" || !strings.Contains(err.Error(), c.refusal) {
					t.Errorf("%s: %v, want a refusal naming %q", c.name, err, c.refusal)
				}
				return
			}
			tree, err := hashZip(z)
			if err != nil {
				t.Fatal(err)
			}
			if tag := freshCloneTagHash(t, repo); tree != tag {
				t.Errorf("%s: not refused, and the working tree's zip hashes %s, a fresh clone of the tag's %s", c.name, tree, tag)
			}
		})
	}
}

func commitSymlink(t *testing.T, repo string) {
	t.Helper()
	runGit(t, repo, "update-index", "--add", "--cacheinfo", "120000,"+hashObject(t, repo, "target.txt")+",link.txt")
	runGit(t, repo, "commit", "-q", "-m", "link")
}

func hashObject(t *testing.T, repo, content string) string {
	t.Helper()
	writeFile(t, repo, ".linktmp", content)
	out, err := git(repo, "hash-object", "-w", ".linktmp")
	if err != nil {
		t.Fatal(err)
	}
	runGit(t, repo, "clean", "-q", "-f", ".linktmp")
	return strings.TrimSpace(out)
}
