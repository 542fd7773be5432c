// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// worktreeZip's doc: the zip is made "in a clone that carries none of this
// clone's settings ... git running with no user's or system's
// configuration ..., as on a public proxy". Environment the user's shell
// (or a hook) sets must not change it: its hash must be the one a fresh
// clone of the tag gives under no configuration (a reviewer's find: the
// clone took a GIT_TEMPLATE_DIR's info/attributes).
func TestTheZipUnderTheUsersGitEnvironment(t *testing.T) {
	m := module.Version{Path: "example.com/r", Version: "v0.3.0"}
	for _, c := range []struct {
		name string
		env  func(t *testing.T, repo string) map[string]string
	}{
		{"GIT_TEMPLATE_DIR with info/attributes", func(t *testing.T, repo string) map[string]string {
			tpl := t.TempDir()
			writeFile(t, tpl, "info/attributes", "notes export-ignore\n")
			return map[string]string{"GIT_TEMPLATE_DIR": tpl}
		}},
		{"GIT_ATTR_SOURCE", func(t *testing.T, repo string) map[string]string {
			// a tree whose .gitattributes marks notes export-ignore
			tree := hashTreeWithAttrs(t, repo, "notes export-ignore\n")
			return map[string]string{"GIT_ATTR_SOURCE": tree}
		}},
		{"GIT_DIR and GIT_INDEX_FILE of a hook", func(t *testing.T, repo string) map[string]string {
			return map[string]string{"GIT_DIR": filepath.Join(repo, ".git"), "GIT_INDEX_FILE": filepath.Join(repo, ".git", "index")}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := editFixture()
			files["notes/a.md"] = "notes\n"
			repo := taggedRepo(t, files)
			writeFile(t, repo, "r.go", "package r\n\nconst A = 9\n")
			runGit(t, repo, "commit", "-q", "-a", "-m", "release")
			runGit(t, repo, "tag", "-f", "v0.3.0")
			clone := filepath.Join(t.TempDir(), "fresh")
			runGit(t, filepath.Dir(clone), "clone", "-q", "--no-checkout", repo, clone)
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			var tz bytes.Buffer
			if err := modzip.CreateFromVCS(&tz, m, clone, "v0.3.0", ""); err != nil {
				t.Fatal(err)
			}
			want, _ := hashZip(tz.Bytes())
			for k, v := range c.env(t, repo) {
				t.Setenv(k, v)
			}
			z, err := worktreeZip(repo, ".", m)
			if err != nil {
				t.Fatalf("worktreeZip: %v", err)
			}
			got, _ := hashZip(z)
			if got != want {
				t.Errorf("%s: worktreeZip hashes %s, the tag from a fresh clone %s", c.name, got, want)
			}
		})
	}
}

func hashTreeWithAttrs(t *testing.T, repo, attrs string) string {
	t.Helper()
	blob := hashObject(t, repo, attrs)
	out, err := gitEnvIn(repo, "100644 blob "+blob+"\t.gitattributes\n", "mktree")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func gitEnvIn(dir, stdin string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewBufferString(stdin)
	out, err := cmd.Output()
	return string(bytes.TrimSpace(out)), err
}
