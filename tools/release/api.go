// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/exp/apidiff"
	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/gcexportdata"
	"golang.org/x/tools/go/packages"
)

// apiDir holds the API baseline: the export data of each published
// module's public packages at the last release, in the format of
// golang.org/x/exp/cmd/apidiff -m -w (so that command reads it too), and
// VERSION, the release it was taken from.
const apiDir = "api"

// versionChange begins apidiff's message for a new value of
// otelretry.Version, which every release brings: not an API change.
const (
	libraryModule = "github.com/otelretry/otelretry-go"
	versionChange = "./otelretry.Version: value changed from "
)

func baselineFile(dir string) string {
	name := "root"
	if dir != "." {
		name = strings.ReplaceAll(dir, "/", "-")
	}
	return filepath.Join(apiDir, name+".apidiff")
}

// apiWrite replaces the baseline with the API of the published modules in
// the tree from (a checkout of the release), and VERSION with that tree's
// newest CHANGELOG release.
func apiWrite(from string) error {
	c, err := readChangelog(filepath.Join(from, "CHANGELOG.md"))
	if err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(apiDir, "*.apidiff"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(apiDir, 0o755); err != nil {
		return err
	}
	for _, dir := range published {
		if _, err := os.Stat(filepath.Join(from, dir, "go.mod")); errors.Is(err, os.ErrNotExist) {
			continue // not a module of that release yet
		}
		fset := token.NewFileSet()
		m, err := loadModuleAPI(fset, filepath.Join(from, dir), true)
		if err != nil {
			return err
		}
		if len(m.Packages) == 0 {
			fmt.Printf("%s: no public packages\n", m.Path)
			continue
		}
		data, err := writeModuleExportData(fset, m)
		if err != nil {
			return err
		}
		if err := noMachinePaths(data, from); err != nil {
			return fmt.Errorf("%s: %w", m.Path, err)
		}
		if err := os.WriteFile(baselineFile(dir), data, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d packages -> %s\n", m.Path, len(m.Packages), baselineFile(dir))
	}
	fmt.Printf("baseline of release %s -> %s\n", c.newest, filepath.Join(apiDir, "VERSION"))
	return os.WriteFile(filepath.Join(apiDir, "VERSION"), []byte(c.newest+"\n"), 0o644)
}

// apiCheck compares the published modules' API with the baseline and fails
// on an incompatible change unless the CHANGELOG's next version may break
// the API (see nextVersion and breakingAllowed) and a breaking subsection
// since the baseline names the change (see breakNamed and changedNames).
func apiCheck() error {
	data, err := os.ReadFile(filepath.Join(apiDir, "VERSION"))
	if err != nil {
		return err
	}
	baseline := strings.TrimSpace(string(data))
	if !isRelease(baseline) {
		return fmt.Errorf("%s: %q is not a release version", filepath.Join(apiDir, "VERSION"), baseline)
	}
	c, err := readChangelog("CHANGELOG.md")
	if err != nil {
		return err
	}
	next, why, err := nextVersion(baseline, c)
	if err != nil {
		return err
	}
	incompatible := 0
	var unnamed []string
	for _, dir := range published {
		n, notNamed, err := moduleCheck(dir, baseline, c)
		if err != nil {
			return err
		}
		incompatible += n
		unnamed = append(unnamed, notNamed...)
	}
	fmt.Printf("next version: %s (%s)\n", next, why)
	if c.newest != baseline {
		fmt.Printf("note: the baseline is of %s; once v%s is tagged, take its baseline (scripts/apibaseline.sh)\n", baseline, c.newest)
	}
	const record = "keep the API compatible, or record the break in CHANGELOG.md under [Unreleased] in a \"### Changed (breaking)\" " +
		"or \"### Removed\" subsection that names each changed name in `code`"
	if incompatible > 0 && !breakingAllowed(baseline, next) {
		return fmt.Errorf("%d incompatible API changes since %s, but the next version %s is not a new %s: %s",
			incompatible, baseline, next, map[bool]string{true: "minor version", false: "major version"}[strings.HasPrefix(baseline, "0.")], record)
	}
	if len(unnamed) > 0 {
		return fmt.Errorf("%d incompatible API changes since %s that no breaking subsection of CHANGELOG.md since %s names:\n  %s\n%s",
			len(unnamed), baseline, baseline, strings.Join(unnamed, "\n  "), record)
	}
	return nil
}

// moduleCheck compares the API of the published module in dir with its
// baseline, prints the changes, and returns how many are incompatible and
// those no breaking subsection since the baseline names.
func moduleCheck(dir, baseline string, c changelog) (incompatible int, unnamed []string, err error) {
	fset := token.NewFileSet()
	cur, err := loadModuleAPI(fset, dir, false)
	if err != nil {
		return 0, nil, err
	}
	old := &apidiff.Module{Path: cur.Path}
	if _, err := os.Stat(baselineFile(dir)); err == nil {
		if old, err = readModuleExportData(fset, baselineFile(dir)); err != nil {
			return 0, nil, fmt.Errorf("%s: %w", baselineFile(dir), err)
		}
	} else if len(cur.Packages) > 0 {
		fmt.Printf("%s: not in the %s baseline\n", cur.Path, baseline)
	}
	r := apidiff.ModuleChanges(old, cur)
	r.Changes = slices.DeleteFunc(r.Changes, func(ch apidiff.Change) bool {
		return cur.Path == libraryModule && strings.HasPrefix(ch.Message, versionChange)
	})
	for _, ch := range r.Changes {
		if !ch.Compatible {
			incompatible++
			if !c.breakNamed(baseline, cur.Path, ch.Message) {
				unnamed = append(unnamed, ch.Message)
			}
		}
	}
	fmt.Printf("%s: %d incompatible, %d compatible changes since %s\n", cur.Path, incompatible, len(r.Changes)-incompatible, baseline)
	var buf bytes.Buffer
	if err := r.Text(&buf); err != nil {
		return 0, nil, err
	}
	for l := range strings.Lines(buf.String()) {
		fmt.Print("  ", l)
	}
	return incompatible, unnamed, nil
}

// changedNames returns the names a CHANGELOG entry may record an apidiff
// change message by: a package-level name alone, a method or a field with
// its type ("Transport.Close" for (*Transport).Close, so that a recorded
// break of one type's Close records no other's; a generic type without
// its type parameters), the last element of a removed package's path, and
// for a change of a type's method set ("./pkg.(*E).M, method set of *T:
// removed", a method T had from an embedded E) both E.M and T.M. Messages
// read "./pkg.Name: removed", "./pkg.(*T).M: changed from ...",
// "./pkg.T.Field: ..." or "package PATH: removed".
func changedNames(message string) []string {
	subject, _, _ := strings.Cut(message, ": ")
	if path, ok := strings.CutPrefix(subject, "package "); ok {
		return []string{path[strings.LastIndex(path, "/")+1:]}
	}
	// Type parameters first: "[K, V]" holds a comma of its own.
	subject, methodSet, _ := strings.Cut(withoutTypeParameters(subject), ",")
	name := objectName(subject)
	names := []string{name}
	if owner, ok := strings.CutPrefix(strings.TrimSpace(methodSet), "method set of "); ok {
		if i := strings.LastIndex(name, "."); i >= 0 {
			names = append(names, objectName(owner)+name[i:])
		}
	}
	return names
}

// objectName is the name of the object an apidiff message names, without
// its package prefix (a path whose last element ends at its first dot),
// its receiver's pointer and parentheses, or type parameters:
// "./otelretry.(*Cache[K]).Get" gives Cache.Get.
func objectName(s string) string {
	s = withoutTypeParameters(strings.TrimSpace(s))
	if i := strings.LastIndex(s, "/"); i >= 0 {
		if j := strings.Index(s[i:], "."); j >= 0 {
			s = s[i+j+1:]
		}
	}
	return strings.NewReplacer("(", "", ")", "", "*", "").Replace(s)
}

// withoutTypeParameters drops what brackets hold, brackets inside
// included: a generic type's parameters or arguments as apidiff and Go
// write them ("[K, V]", "[S ~[]E, E any]", "[map[string]int]").
func withoutTypeParameters(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// loadModuleAPI loads the public packages of the module in dir: neither
// internal nor commands. With trim it loads with -trimpath, so that the
// positions in the export data name no directory of this machine (for the
// baseline; the check shares the build cache of the other builds instead).
func loadModuleAPI(fset *token.FileSet, dir string, trim bool) (*apidiff.Module, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	modPath := modfile.ModulePath(data)
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedModule,
		Dir:  dir,
		Fset: fset,
		Env:  append(os.Environ(), "GOWORK=off"),
	}
	if trim {
		cfg.Env = append(cfg.Env, "GOFLAGS="+strings.TrimSpace(goEnv("GOFLAGS")+" -trimpath"))
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, err
	}
	m := &apidiff.Module{Path: modPath}
	var errs []error
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, e)
		}
		if p.Name == "main" || isInternal(p.PkgPath, modPath) || p.Module == nil || p.Module.Path != modPath {
			continue
		}
		m.Packages = append(m.Packages, p.Types)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("loading %s: %w", modPath, errors.Join(errs...))
	}
	slices.SortFunc(m.Packages, func(a, b *types.Package) int { return strings.Compare(a.Path(), b.Path()) })
	return m, nil
}

func goEnv(name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func isInternal(pkgPath, modPath string) bool {
	rel := strings.TrimPrefix(pkgPath, modPath)
	return rel == "/internal" || strings.HasPrefix(rel, "/internal/") ||
		strings.HasSuffix(rel, "/internal") || strings.Contains(rel, "/internal/")
}

// noMachinePaths fails when data names a directory of this machine: the
// tree, the module cache, GOROOT or the temporary directory.
func noMachinePaths(data []byte, tree string) error {
	abs, err := filepath.Abs(tree)
	if err != nil {
		return err
	}
	for _, dir := range []string{abs, goEnv("GOMODCACHE"), goEnv("GOROOT"), os.TempDir(), os.Getenv("HOME")} {
		if len(dir) > 1 && bytes.Contains(data, []byte(dir)) {
			return fmt.Errorf("the export data names %s", dir)
		}
	}
	return nil
}

// writeModuleExportData and readModuleExportData use the format of
// golang.org/x/exp/cmd/apidiff: a zip archive whose entry "module" holds
// the module path and each other entry, named by a package path plus
// ".x", the export data of one package. Entries are written in package
// order without times, so that the same API gives the same bytes.
func writeModuleExportData(fset *token.FileSet, m *apidiff.Module) ([]byte, error) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	entry, err := w.Create("module")
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(entry, m.Path); err != nil {
		return nil, err
	}
	for _, p := range m.Packages {
		entry, err := w.Create(p.Path() + ".x")
		if err != nil {
			return nil, err
		}
		if err := gcexportdata.Write(entry, fset, p); err != nil {
			return nil, fmt.Errorf("writing %s: %w", p.Path(), err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func readModuleExportData(fset *token.FileSet, file string) (*apidiff.Module, error) {
	z, err := zip.OpenReader(file)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	m := &apidiff.Module{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return nil, err
		}
		if f.Name == "module" {
			m.Path = string(data)
			continue
		}
		pkgPath, ok := strings.CutSuffix(f.Name, ".x")
		if !ok {
			return nil, fmt.Errorf("unexpected entry %q", f.Name)
		}
		p, err := gcexportdata.Read(bytes.NewReader(data), fset, map[string]*types.Package{}, pkgPath)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", pkgPath, err)
		}
		m.Packages = append(m.Packages, p)
	}
	if m.Path == "" {
		return nil, errors.New("no module path")
	}
	return m, nil
}
