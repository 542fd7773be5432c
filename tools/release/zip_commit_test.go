// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/mod/module"
)

func editFixture() map[string]string {
	return rootModule(map[string]string{"old.go": "package r\n\nconst B = 1\n"})
}

// worktreeZip of the working tree is the zip of the tag on the commit
// `git commit -a` makes of it, for edits of every kind.
func TestTheZipIsTheCommitAOfEveryKindOfEdit(t *testing.T) {
	root := module.Version{Path: "example.com/r", Version: "v0.3.0"}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, repo string) string
	}{
		{"staged and unstaged", func(t *testing.T, repo string) string {
			writeFile(t, repo, "r.go", "package r\n\nconst A = 2\n")
			runGit(t, repo, "add", "r.go")
			writeFile(t, repo, "r.go", "package r\n\nconst A = 3\n")
			return repo
		}},
		{"deleted tracked file", func(t *testing.T, repo string) string {
			os.Remove(filepath.Join(repo, "old.go"))
			return repo
		}},
		{"git rm", func(t *testing.T, repo string) string {
			runGit(t, repo, "rm", "-q", "old.go")
			return repo
		}},
		{"git mv", func(t *testing.T, repo string) string {
			runGit(t, repo, "mv", "old.go", "new.go")
			return repo
		}},
		{"untracked new file", func(t *testing.T, repo string) string {
			writeFile(t, repo, "go.sum", "x\n")
			return repo
		}},
		{"staged new file", func(t *testing.T, repo string) string {
			writeFile(t, repo, "go.sum", "x\n")
			runGit(t, repo, "add", "go.sum")
			return repo
		}},
		{"no change", func(t *testing.T, repo string) string { return repo }},
		{"no change, detached", func(t *testing.T, repo string) string {
			runGit(t, repo, "checkout", "-q", "--detach")
			return repo
		}},
		{"linked worktree", func(t *testing.T, repo string) string {
			wt := filepath.Join(t.TempDir(), "wt")
			runGit(t, repo, "worktree", "add", "-q", "--detach", wt)
			writeFile(t, wt, "r.go", "package r\n\nconst A = 4\n")
			return wt
		}},
		{"path with spaces", func(t *testing.T, repo string) string {
			dst := filepath.Join(t.TempDir(), "a b", "c d")
			cmd := exec.Command("git", "clone", "-q", repo, dst)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			writeFile(t, dst, "r.go", "package r\n\nconst A = 5\n")
			return dst
		}},
		{"alternates", func(t *testing.T, repo string) string {
			dst := filepath.Join(t.TempDir(), "alt")
			cmd := exec.Command("git", "clone", "-q", "--shared", repo, dst)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			writeFile(t, dst, "r.go", "package r\n\nconst A = 6\n")
			return dst
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := c.setup(t, taggedRepo(t, editFixture()))
			z, err := worktreeZip(work, ".", root)
			if err != nil {
				t.Fatal(err)
			}
			tree, err := hashZip(z)
			if err != nil {
				t.Fatal(err)
			}
			if tag := releaseZip(t, work, ".", root); tree != tag {
				t.Errorf("%s: worktreeZip hashes %s, the release tag's %s", c.name, tree, tag)
			}
		})
	}
}

// GIT_DIR in the environment (a hook, a script run with it set): the zip
// is still made without the repository's settings (here core.autocrlf).
func TestTheZipIgnoresTheEnvironmentsRepository(t *testing.T) {
	root := module.Version{Path: "example.com/r", Version: "v0.3.0"}
	repo := taggedRepo(t, editFixture())
	runGit(t, repo, "config", "core.autocrlf", "true")
	runGit(t, repo, "rm", "-r", "-q", "--cached", ".")
	runGit(t, repo, "reset", "-q", "--hard")
	writeFile(t, repo, "r.go", "package r\n\nconst A = 7\n")
	func() {
		t.Setenv("GIT_DIR", filepath.Join(repo, ".git"))
		z, err := worktreeZip(repo, ".", root)
		if err != nil {
			t.Errorf("worktreeZip with GIT_DIR set: %v", err)
			return
		}
		tree, err := hashZip(z)
		if err != nil {
			t.Fatal(err)
		}
		os.Unsetenv("GIT_DIR")
		if tag := releaseZip(t, repo, ".", root); tree != tag {
			t.Errorf("GIT_DIR set: worktreeZip hashes %s, the release tag's %s", tree, tag)
		}
	}()
}

// isolateGit puts back the environment after an error, and HOME unset
// stays unset.
func TestIsolateGitRestoresTheEnvironment(t *testing.T) {
	repo := taggedRepo(t, editFixture())
	t.Setenv("HOME", "/x")
	os.Unsetenv("HOME")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "a.b")
	t.Setenv("GIT_CONFIG_VALUE_0", "c")
	before := os.Environ()
	if _, err := vcsZip(repo, "no-such-rev", "", module.Version{Path: "example.com/r", Version: "v0.3.0"}); err == nil {
		t.Fatal("vcsZip of a missing rev: no error")
	}
	after := os.Environ()
	if len(before) != len(after) {
		t.Fatalf("environment changed: %d vars before, %d after", len(before), len(after))
	}
	for i := range before {
		if before[i] != after[i] {
			t.Errorf("environment changed: %q became %q", before[i], after[i])
		}
	}
}

// export-subst set by the committed .gitattributes and unset only by what
// the release commit will not carry (the clone's info/attributes, an
// untracked .gitattributes): git archive of the tag rewrites the file, so
// worktreeZip must refuse it, or its zip must be the tag's.
func TestExportSubstUnsetOnlyLocallyIsRefused(t *testing.T) {
	root := module.Version{Path: "example.com/r", Version: "v0.3.0"}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, repo string)
	}{
		{"info/attributes", func(t *testing.T, repo string) {
			writeFile(t, repo, ".git/info/attributes", "v.txt -export-subst\n")
		}},
		{"untracked .gitattributes", func(t *testing.T, repo string) {
			writeFile(t, repo, "gen/.gitattributes", "v.txt -export-subst\n")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := editFixture()
			files["gen/v.txt"] = "$Format:%H$\n"
			files[".gitattributes"] = "v.txt export-subst\n"
			repo := taggedRepo(t, files)
			c.setup(t, repo)
			writeFile(t, repo, "r.go", "package r\n\nconst A = 8\n")
			z, err := worktreeZip(repo, ".", root)
			if err != nil {
				return // refused: held
			}
			tree, err := hashZip(z)
			if err != nil {
				t.Fatal(err)
			}
			if tag := releaseZip(t, repo, ".", root); tree != tag {
				t.Errorf("%s: worktreeZip neither refused the export-subst file nor matched: it hashes %s, the release tag's %s", c.name, tree, tag)
			}
		})
	}
}
