// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readDoc returns the repository's file at p.
func readDoc(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The ports table of docs/stack.md says it is what `scripts/stack.sh ports`
// lists: each program's port must be one of the script's defaults for it.
func TestTheStackPortsTableIsTheScripts(t *testing.T) {
	page := readDoc(t, "docs/stack.md")
	script := readDoc(t, "scripts/stack.sh")
	def := regexp.MustCompile(`(?m)^([A-Z0-9]+)_[A-Z_]+=\$\{OTELRETRY_[A-Z0-9_]+:-(?:127\.0\.0\.1:)?(\d+)\}`)
	ports := map[string]map[string]bool{}
	for _, m := range def.FindAllStringSubmatch(script, -1) {
		p := strings.ToLower(m[1])
		p = strings.Replace(p, "sampler1", "sampler-1", 1)
		p = strings.Replace(p, "sampler2", "sampler-2", 1)
		if ports[p] == nil {
			ports[p] = map[string]bool{}
		}
		ports[p][m[2]] = true
	}
	row := regexp.MustCompile(`(?m)^\| ([a-z0-9, -]+) \| ([0-9 ,/]+) \|`)
	num := regexp.MustCompile(`\d+`)
	rows := row.FindAllStringSubmatch(page, -1)
	if len(rows) < 8 {
		t.Fatalf("found %d rows of the ports table", len(rows))
	}
	for _, m := range rows {
		progs := strings.Split(m[1], ", ")
		got := num.FindAllString(m[2], -1)
		for i, port := range got {
			prog := progs[0]
			if len(progs) == len(got) {
				prog = progs[i]
			}
			if !ports[prog][port] {
				t.Errorf("docs/stack.md: %s %s is not a default of scripts/stack.sh (%v)", prog, port, ports[prog])
			}
		}
	}
}

// CONTRIBUTING.md's layout describes internal/ by naming its packages; every
// directory of internal/ that is a package of the root module is named (a
// reviewer's find: two were not).
func TestTheLayoutNamesEveryInternalPackage(t *testing.T) {
	text := readDoc(t, "CONTRIBUTING.md")
	i := strings.Index(text, "## Layout")
	if i < 0 {
		t.Fatal("no Layout section")
	}
	layout := text[i:]
	layout = layout[:strings.Index(layout, "\n```\n\n")]
	entries, err := os.ReadDir(filepath.Join(root, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "internal", e.Name(), "go.mod")); err == nil {
			if !strings.Contains(layout, "internal/"+e.Name()) {
				t.Errorf("module internal/%s is not in the layout", e.Name())
			}
			continue
		}
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(e.Name()) + `\b`).MatchString(layout) {
			t.Errorf("CONTRIBUTING.md's layout does not name internal/%s", e.Name())
		}
	}
}

// Every module of go.work is described in the layout.
func TestTheLayoutDescribesEveryWorkspaceModule(t *testing.T) {
	text := readDoc(t, "CONTRIBUTING.md")
	layout := text[strings.Index(text, "## Layout"):]
	work := readDoc(t, "go.work")
	use := regexp.MustCompile(`(?m)^\t\./(\S+)$`)
	for _, m := range use.FindAllStringSubmatch(work, -1) {
		mod := m[1]
		if !strings.Contains(layout, mod) && !strings.Contains(layout, ", /"+filepath.Base(mod)) {
			t.Errorf("go.work module %s is not in CONTRIBUTING.md's layout", mod)
		}
	}
}
