// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package doccheck

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPathsInThePagesExist: a code span of the pages that names a path of
// the repository (its first element is a file or directory at the root:
// `scripts/e2e.sh`, `docs/budget.md`, `examples/demo`) names one that
// exists, from the root or from a module's directory (`internal/render`
// in cmd/retryinspect's pages), so that a page cannot keep a path the
// repository lost. Placeholders (`vX.Y.Z`, `program_NAME`, globs) and the
// root's ignored outputs (artifacts/, written by the tests) are left out.
func TestPathsInThePagesExist(t *testing.T) {
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, e := range entries {
		top[e.Name()] = true
	}
	ignored := ignoredAtRoot(t)
	for _, name := range ignored {
		delete(top, name)
	}
	// The bases a path may be written from: the root and every module.
	bases := []string{root}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || filepath.Dir(p) == root && slices.Contains(ignored, d.Name())) {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" && filepath.Dir(p) != root {
			bases = append(bases, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, page := range pages(t) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		eachLine(b, func(n int, line string) {
			for _, span := range codeSpan.FindAllString(line, -1) {
				p := strings.TrimRight(strings.Trim(span, "`"), "/")
				first, _, nested := strings.Cut(p, "/")
				if !top[first] || !nested && !strings.Contains(first, ".") || strings.ContainsAny(p, " *<>{}$:") ||
					strings.Contains(p, "X.Y.Z") || strings.Contains(p, "NAME") {
					continue
				}
				checked++
				if !existsUnder(bases, p) {
					t.Errorf("%s:%d: %s names no file or directory of the repository", page, n, span)
				}
			}
		})
	}
	if checked < 20 {
		t.Fatalf("only %d paths checked: is the code span parser broken?", checked)
	}
	t.Logf("%d paths checked", checked)
}

func existsUnder(bases []string, p string) bool {
	for _, b := range bases {
		if _, err := os.Stat(filepath.Join(b, filepath.FromSlash(p))); err == nil {
			return true
		}
	}
	return false
}

// ignoredAtRoot lists the root's directories that .gitignore leaves out
// ("/artifacts/"): outputs, not part of a clone.
func ignoredAtRoot(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "/") && strings.HasSuffix(l, "/") && strings.Count(l, "/") == 2 {
			out = append(out, strings.Trim(l, "/"))
		}
	}
	return out
}
