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
	repo := taggedRepo(t, rootModule(map[string]string{
		"r.go":           "package r\n\n// Commit is $Format:%H$.\nconst Commit = \"$Format:%H$\"\n",
		".gitattributes": "r.go export-subst\n",
	}))
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
	repo := taggedRepo(t, rootModule(map[string]string{
		"drafts/a.md":    "left out with its directory\n",
		".gitattributes": "drafts/ export-ignore\n",
	}))
	if tree, tag := zipHashes(t, repo, repo); tree != tag {
		t.Errorf("with `drafts/ export-ignore`: the working tree's zip hashes %s, the tag's %s", tree, tag)
	}
}

// Same mark, on a directory holding an export-subst file: git archive
// leaves the directory out, so nothing is rewritten; worktreeZip must not
// refuse it (it skips export-ignored files before the export-subst check).
func TestAnExportSubstFileInAnIgnoredDirectoryIsNoBar(t *testing.T) {
	repo := taggedRepo(t, rootModule(map[string]string{
		"drafts/v.txt":   "$Format:%H$\n",
		".gitattributes": "drafts/ export-ignore\ndrafts/v.txt export-subst\n",
	}))
	_, err := worktreeZip(repo, ".", module.Version{Path: "example.com/r", Version: "v0.3.0"})
	if err != nil {
		t.Errorf("worktreeZip refuses a file git archive leaves out: %v", err)
	}
}

// Patterns that held: export-subst by a pattern over a directory's files is
// refused; on a directory alone, unset (-export-subst), or on a file in an
// export-ignored directory, it is not.
func TestExportSubstPatterns(t *testing.T) {
	base := rootModule(map[string]string{
		"gen/v.txt": "$Format:%H$\n",
	})
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

// worktreeZip's zip is the tag's for every .gitattributes layout: git
// archive checks a directory by its path with a trailing slash alone (a
// reviewer's table; "drafts" set and "drafts/" unset kept the directory
// in the archive and out of the zip).
func TestExportIgnoreLayoutsMatchTheTag(t *testing.T) {
	base := rootModule(map[string]string{
		"drafts/a.md":         "a\n",
		"drafts/keep.md":      "keep\n",
		"drafts/sub/b.md":     "b\n",
		"docs/x/y/z.md":       "z\n",
		"docs/x/w.md":         "w\n",
		"docs/.gitattributes": "x/y/ export-ignore\n",
	})
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

// releaseZip is what the release tag serves: the working tree of work
// committed as release.sh commits it (git commit -a) and tagged, zipped as
// a public proxy zips a pushed tag (vcsZip: a clone without work's
// settings, no user's or system's configuration).
func releaseZip(t *testing.T, work, dir string, m module.Version) string {
	t.Helper()
	cmd := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-a", "--allow-empty", "-m", "release")
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("commit: %v\n%s", err, out)
	}
	runGit(t, work, "tag", "-f", "release")
	subdir := dir
	if dir == "." {
		subdir = ""
	}
	z, err := vcsZip(work, "release", subdir, m)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hashZip(z)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// worktreeZip is the zip the release commit's tag will serve, whatever
// this clone's own settings do to its working tree or its archives: its
// attributes (info/attributes), line ends (core.autocrlf in any spelling,
// in the configuration or given when cloning), filter drivers (its own,
// given when cloning, or the user's), links checked out as files
// (core.symlinks=false), files whose edits git is told to ignore, a
// subdirectory module's LICENSE taken from the commit. Reviewers found
// each of these giving another go.sum hash, one after the other, against
// guards that refused settings by name; the zip is now made from the
// commit, as `git commit -a` would make it, in a clone that carries none
// of them.
func TestTheZipIsTheReleaseCommitsTagsZip(t *testing.T) {
	checkOutAgain := func(t *testing.T, repo string) {
		runGit(t, repo, "rm", "-r", "-q", "--cached", ".")
		runGit(t, repo, "reset", "-q", "--hard")
	}
	cloneWith := func(t *testing.T, origin string, args ...string) string {
		work := filepath.Join(t.TempDir(), "work")
		cmd := exec.Command("git", append(args, "clone", "-q", origin, work)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		return work
	}
	root := module.Version{Path: "example.com/r", Version: "v0.3.0"}
	for _, c := range []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, origin string) string // the clone to release from
	}{
		{"info/attributes", rootModule(map[string]string{"notes/a.md": "notes\n"}), func(t *testing.T, repo string) string {
			writeFile(t, repo, ".git/info/attributes", "notes export-ignore\n")
			return repo
		}},
		{"autocrlf=true", rootModule(nil), func(t *testing.T, repo string) string {
			runGit(t, repo, "config", "core.autocrlf", "true")
			checkOutAgain(t, repo)
			return repo
		}},
		{"autocrlf=yes", rootModule(nil), func(t *testing.T, repo string) string {
			runGit(t, repo, "config", "core.autocrlf", "yes")
			checkOutAgain(t, repo)
			return repo
		}},
		{"cloned with -c core.autocrlf=true", rootModule(nil), func(t *testing.T, origin string) string {
			return cloneWith(t, origin, "-c", "core.autocrlf=true")
		}},
		{"a filter driver of the clone's", rootModule(map[string]string{"f.txt": "aaa\n", ".gitattributes": "*.txt filter=kw\n"}), func(t *testing.T, repo string) string {
			runGit(t, repo, "config", "filter.kw.smudge", "sed s/a/b/g")
			runGit(t, repo, "config", "filter.kw.clean", "sed s/b/a/g")
			checkOutAgain(t, repo)
			return repo
		}},
		{"cloned with -c filter.kw.smudge", rootModule(map[string]string{"f.txt": "aaa\n", ".gitattributes": "*.txt filter=kw\n"}), func(t *testing.T, origin string) string {
			return cloneWith(t, origin, "-c", "filter.kw.smudge=sed s/a/b/g", "-c", "filter.kw.clean=sed s/b/a/g")
		}},
		{"symlinks=false", rootModule(map[string]string{"target.txt": "t\n"}), func(t *testing.T, repo string) string {
			writeFile(t, repo, ".linktmp", "target.txt")
			out, err := git(repo, "hash-object", "-w", ".linktmp")
			if err != nil {
				t.Fatal(err)
			}
			runGit(t, repo, "update-index", "--add", "--cacheinfo", "120000,"+strings.TrimSpace(out)+",link.txt")
			runGit(t, repo, "commit", "-q", "-m", "link")
			runGit(t, repo, "config", "core.symlinks", "false")
			checkOutAgain(t, repo)
			return repo
		}},
		{"assume-unchanged edit", rootModule(nil), func(t *testing.T, repo string) string {
			runGit(t, repo, "update-index", "--assume-unchanged", "r.go")
			writeFile(t, repo, "r.go", "package r\n\nconst A = 2\n")
			return repo
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := c.setup(t, taggedRepo(t, c.files))
			z, err := worktreeZip(work, ".", root)
			if err != nil {
				t.Fatal(err)
			}
			tree, err := hashZip(z)
			if err != nil {
				t.Fatal(err)
			}
			if tag := releaseZip(t, work, ".", root); tree != tag {
				t.Errorf("%s: the working tree's zip hashes %s, the release tag's %s", c.name, tree, tag)
			}
		})
	}
}

// rootModule is a repository holding the module example.com/r (its
// go.mod, a LICENSE, r.go) and extra's files, which replace those of the
// same name.
func rootModule(extra map[string]string) map[string]string {
	f := map[string]string{"go.mod": "module example.com/r\n\ngo 1.26.0\n", "LICENSE": "license text\n", "r.go": "package r\n\nconst A = 1\n"}
	for k, v := range extra {
		f[k] = v
	}
	return f
}
