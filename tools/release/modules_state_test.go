// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gitOut(t *testing.T, repo string, args ...string) string {
	t.Helper()
	out, err := git(repo, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// scripts/release.sh: a failed prepare runs the EXIT trap
// `git checkout -q -f "$start"`, which must leave "the branch and the
// working tree as they were" (release.sh header step 4, RELEASING.md).
// Here prepare fails at classify/h3 (export-subst) after it wrote and
// staged classify/h2/go.sum (h2 had none).
func TestAFailedPrepareLeavesTheTreeClean(t *testing.T) {
	repo := releaseFixture(t, false, map[string]string{
		"classify/h3/.gitattributes": "v.txt export-subst\n",
		"classify/h3/v.txt":          "$Format:%H$\n",
	})
	t.Chdir(repo)
	start := strings.TrimSpace(gitOut(t, repo, "symbolic-ref", "-q", "--short", "HEAD"))
	runGit(t, repo, "checkout", "-q", "--detach")
	if err := prepare("0.4.0"); err == nil {
		t.Fatal("prepare succeeded, want export-subst refusal")
	}
	runGit(t, repo, "checkout", "-q", "-f", start) // release.sh's EXIT trap
	if st := gitOut(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("after a failed release the branch %s is not as it was; git status --porcelain:\n%s", start, st)
	}
}

// A published module whose go.sum is ignored (.gitignore): the release
// either refuses before touching it or leaves it as it was; prepare must
// not leave the user's ignored file rewritten behind a failed release (a
// reviewer's find: it wrote the file, then failed to stage it).
func TestAnIgnoredGoSumIsRefusedUntouched(t *testing.T) {
	orig := "example.org/x v1.0.0/go.mod h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"
	repo := releaseFixture(t, false, map[string]string{".gitignore": "go.sum\n"})
	writeFile(t, repo, "classify/h2/go.sum", orig)
	t.Chdir(repo)
	start := strings.TrimSpace(gitOut(t, repo, "symbolic-ref", "-q", "--short", "HEAD"))
	if st := gitOut(t, repo, "status", "--porcelain"); st != "" {
		t.Fatalf("fixture not clean: %s", st)
	}
	runGit(t, repo, "checkout", "-q", "--detach")
	perr := prepare("0.4.0")
	t.Logf("prepare: %v", perr)
	if perr == nil {
		runGit(t, repo, "commit", "-q", "-a", "-m", "Release")
		inCommit, err := git(repo, "show", "HEAD:classify/h2/go.sum")
		written, _ := os.ReadFile(filepath.Join(repo, "classify", "h2", "go.sum"))
		if err != nil || inCommit != string(written) {
			t.Errorf("the release commit's go.sum (%v) is not what prepare wrote:\n%s", err, written)
		}
	}
	runGit(t, repo, "checkout", "-q", "-f", start)
	got, _ := os.ReadFile(filepath.Join(repo, "classify", "h2", "go.sum"))
	if string(got) != orig {
		t.Errorf("the user's ignored classify/h2/go.sum was left rewritten after the release:\n%s", got)
	}
}

// A successful release as scripts/release.sh runs it leaves the branch,
// the index, the working tree, the stash list and the refs (but the tags)
// as they were.
func TestAReleaseLeavesTheRepositoryAsItWas(t *testing.T) {
	for _, withSum := range []bool{true, false} {
		t.Run(map[bool]string{true: "sum", false: "nosum"}[withSum], func(t *testing.T) {
			repo := releaseFixture(t, withSum, nil)
			// A user's stash entry, made and kept.
			writeFile(t, repo, "r.go", "package r\n\nconst A = 2\n")
			runGit(t, repo, "stash", "-q")
			stashBefore := gitOut(t, repo, "stash", "list", "--format=%H")
			refsBefore := gitOut(t, repo, "for-each-ref", "--format=%(refname) %(objectname)")
			start := strings.TrimSpace(gitOut(t, repo, "symbolic-ref", "-q", "--short", "HEAD"))
			headBefore := gitOut(t, repo, "rev-parse", "HEAD")
			releaseAsScript(t, repo, "0.4.0")
			runGit(t, repo, "checkout", "-q", start)
			if st := gitOut(t, repo, "status", "--porcelain", "--ignored"); st != "" {
				t.Errorf("status after release:\n%s", st)
			}
			if h := gitOut(t, repo, "rev-parse", "HEAD"); h != headBefore {
				t.Errorf("HEAD moved")
			}
			if s := gitOut(t, repo, "stash", "list", "--format=%H"); s != stashBefore {
				t.Errorf("stash list changed: %q vs %q", s, stashBefore)
			}
			var extra []string
			for _, l := range strings.Split(strings.TrimSpace(gitOut(t, repo, "for-each-ref", "--format=%(refname) %(objectname)")), "\n") {
				if !strings.Contains(refsBefore, l) && !strings.HasPrefix(l, "refs/tags/") {
					extra = append(extra, l)
				}
			}
			if len(extra) > 0 {
				t.Errorf("new refs: %v", extra)
			}
		})
	}
}

// As above, with no go.sum in classify/h2 before the release: a failed
// release must not leave a new file behind.
func TestAnIgnoredGoSumNoneBeforeIsLeftAbsent(t *testing.T) {
	repo := releaseFixture(t, false, map[string]string{".gitignore": "go.sum\n"})
	t.Chdir(repo)
	start := strings.TrimSpace(gitOut(t, repo, "symbolic-ref", "-q", "--short", "HEAD"))
	runGit(t, repo, "checkout", "-q", "--detach")
	perr := prepare("0.4.0")
	t.Logf("prepare: %v", perr)
	runGit(t, repo, "checkout", "-q", "-f", start) // release.sh's EXIT trap
	if perr != nil {
		if _, err := os.Stat(filepath.Join(repo, "classify", "h2", "go.sum")); err == nil {
			t.Errorf("the failed release left a new classify/h2/go.sum in the working tree")
		}
	}
}

// prepare run twice: the second refuses (the tree is no longer in the
// development state) and changes nothing.
func TestPrepareTwiceIsRefused(t *testing.T) {
	repo := releaseFixture(t, true, nil)
	t.Chdir(repo)
	if err := prepare("0.4.0"); err != nil {
		t.Fatal(err)
	}
	before := gitOut(t, repo, "diff", "HEAD")
	if err := prepare("0.4.0"); err == nil || !strings.Contains(err.Error(), "development state") {
		t.Errorf("second prepare = %v", err)
	}
	if after := gitOut(t, repo, "diff", "HEAD"); after != before {
		t.Errorf("second prepare changed the tree")
	}
}
