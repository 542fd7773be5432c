// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// releaseFixture is a repository with the four published modules; h2
// requires the root (development state), and has a go.sum only when
// withSum.
func releaseFixture(t *testing.T, withSum bool, extra map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	files := map[string]string{
		"LICENSE": "license\n",
		"go.mod":  "module example.com/r\n\ngo 1.26.0\n",
		"r.go":    "package r\n\nconst A = 1\n",
		"classify/h2/go.mod": "module example.com/r/classify/h2\n\ngo 1.26.0\n\nrequire example.com/r " + placeholder +
			"\n\nreplace example.com/r => ../..\n",
		"classify/h2/h2.go":        "package h2\n\nimport _ \"example.com/r\"\n",
		"classify/h3/go.mod":       "module example.com/r/classify/h3\n\ngo 1.26.0\n",
		"classify/h3/h3.go":        "package h3\n",
		"cmd/retryinspect/go.mod":  "module example.com/r/cmd/retryinspect\n\ngo 1.26.0\n",
		"cmd/retryinspect/main.go": "package main\n",
	}
	if withSum {
		files["classify/h2/go.sum"] = "example.org/x v1.0.0/go.mod h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"
	}
	for k, v := range extra {
		files[k] = v
	}
	for name, data := range files {
		writeFile(t, repo, name, data)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "c"}} {
		runGit(t, repo, args...)
	}
	return repo
}

// releaseAsScript runs prepare, then `git commit -a` and the tags as
// scripts/release.sh does, and returns a fresh clone of the tags.
func releaseAsScript(t *testing.T, repo, version string) string {
	t.Helper()
	t.Chdir(repo)
	runGit(t, repo, "checkout", "-q", "--detach")
	if err := prepare(version); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if err := check(version, true); err != nil && !strings.Contains(err.Error(), "otelretry.Version") && !strings.Contains(err.Error(), "CHANGELOG") {
		t.Fatalf("check -released: %v", err)
	}
	runGit(t, repo, "commit", "-q", "-a", "-m", "Release v"+version)
	for _, p := range []string{"", "classify/h2/", "classify/h3/", "cmd/retryinspect/"} {
		runGit(t, repo, "tag", "-a", "-m", "t", p+"v"+version)
	}
	clone := filepath.Join(t.TempDir(), "fresh")
	runGit(t, filepath.Dir(clone), "clone", "-q", "--no-checkout", repo, clone)
	return clone
}

// The zip each tag serves, from a fresh clone under no user config, hashes
// as prepare wrote into go.sum, for every module; and the release commit
// holds the go.sum prepare wrote ("its go.sum holds their hashes",
// prepare's doc and scripts/release.sh step 2), also when the module had
// no go.sum before (a reviewer's find: one prepare made was left out of
// the release commit).
func TestEveryTagsZipHashesAsGoSumSays(t *testing.T) {
	for _, withSum := range []bool{true, false} {
		t.Run(map[bool]string{true: "go.sum tracked", false: "no go.sum before"}[withSum], func(t *testing.T) {
			home := t.TempDir()
			repo := releaseFixture(t, withSum, nil)
			v := "0.4.0"
			clone := releaseAsScript(t, repo, v)
			written, err := os.ReadFile(filepath.Join(repo, "classify", "h2", "go.sum"))
			if err != nil {
				t.Fatalf("prepare wrote no classify/h2/go.sum: %v", err)
			}
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", home)
			t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			var z bytes.Buffer
			m := module.Version{Path: "example.com/r", Version: "v" + v}
			if err := modzip.CreateFromVCS(&z, m, clone, "v"+v, ""); err != nil {
				t.Fatal(err)
			}
			h, err := hashZip(z.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			want := "example.com/r v" + v + " " + h
			if !strings.Contains(string(written), want+"\n") {
				t.Errorf("go.sum prepare wrote lacks the tag's hash %q:\n%s", want, written)
			}
			inTag, err := git(clone, "show", "classify/h2/v"+v+":classify/h2/go.sum")
			if err != nil {
				t.Errorf("the release commit (tag classify/h2/v%s) has no classify/h2/go.sum, though prepare wrote one with %q: %v", v, want, err)
			} else if inTag != string(written) {
				t.Errorf("the tag's go.sum is not the one prepare wrote:\n%s\nvs\n%s", inTag, written)
			}
			// Each subdirectory module's zip from the fresh clone is what
			// worktreeZip would give now (the tag's commit is HEAD).
			for _, d := range []string{"classify/h2", "classify/h3", "cmd/retryinspect"} {
				mv := module.Version{Path: "example.com/r/" + d, Version: "v" + v}
				var tz bytes.Buffer
				if err := modzip.CreateFromVCS(&tz, mv, clone, d+"/v"+v, d); err != nil {
					t.Fatal(err)
				}
				wz, err := worktreeZip(repo, d, mv)
				if err != nil {
					t.Fatal(err)
				}
				h1, _ := hashZip(tz.Bytes())
				h2, _ := hashZip(wz)
				if h1 != h2 {
					t.Errorf("%s: tag zip %s, worktreeZip %s", d, h1, h2)
				}
			}
		})
	}
}

// A prepare that fails midway (export-subst in the third module) leaves
// no release-zip-* directory or release-*.zip file behind.
func TestTemporaryClonesAreRemovedOnError(t *testing.T) {
	repo := releaseFixture(t, true, map[string]string{
		"classify/h3/.gitattributes": "v.txt export-subst\n",
		"classify/h3/v.txt":          "$Format:%H$\n",
	})
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Chdir(repo)
	err := prepare("0.4.0")
	if err == nil || !strings.Contains(err.Error(), "export-subst") {
		t.Fatalf("prepare = %v, want an export-subst refusal", err)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "release-*"))
	if len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
