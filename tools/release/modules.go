// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/sumdb/dirhash"
)

// published are the modules a release tags, in dependency order: a module
// may require only those before it. Each is tagged DIR/vX.Y.Z (the root
// vX.Y.Z). A new module that users should depend on (an adapter, say)
// joins this list; every other module of the repository must sit under one
// of unpublished.
var published = []string{".", "classify/h2", "classify/h3", "cmd/retryinspect"}

// unpublished are the directories whose modules are never tagged: the
// tests, benchmarks, examples and build-only tools, the stack's Collector
// that ocb generated (deploy/collector/otelcol), and the browser tests
// of retryinspect's HTML report (a module nested in retryinspect's
// directory, which its module zip leaves out, so that chromedp stays out
// of the inspector's go.mod).
var unpublished = []string{"internal/", "benchmarks", "examples/", "tools/", "cmd/retryinspect/htmltest", "deploy/"}

// placeholder is the version a module of the main branch requires a
// published module at, with a replace directive to the module's directory:
// the development state, in which each module builds and tests against the
// tree it sits in (GOWORK=off). Only the release commit requires a real
// version, without the replace.
const placeholder = "v0.0.0-00010101000000-000000000000"

type mod struct {
	dir  string // relative to the repository root, "." for the root
	path string
	file *modfile.File
}

// tagPrefix is what the module's tags start with before vX.Y.Z.
func (m mod) tagPrefix() string {
	if m.dir == "." {
		return ""
	}
	return m.dir + "/"
}

func (m mod) goMod() string { return filepath.Join(filepath.FromSlash(m.dir), "go.mod") }

// loadPublished reads the published modules' go.mod files in the working
// tree, and fails when a module of the repository is neither published nor
// under an unpublished directory.
func loadPublished() ([]mod, error) {
	out, err := git(".", "ls-files", "--", "go.mod", "*/go.mod")
	if err != nil {
		return nil, err
	}
	for _, f := range strings.Fields(out) {
		dir := path.Dir(f)
		if !slices.Contains(published, dir) && !slices.ContainsFunc(unpublished, func(p string) bool {
			return dir == strings.TrimSuffix(p, "/") || strings.HasPrefix(dir, strings.TrimSuffix(p, "/")+"/")
		}) {
			return nil, fmt.Errorf("%s: a module neither published nor unpublished (tools/release/modules.go)", f)
		}
	}
	var mods []mod
	for _, dir := range published {
		m := mod{dir: dir}
		data, err := os.ReadFile(m.goMod())
		if err != nil {
			return nil, err
		}
		if m.file, err = modfile.Parse(m.goMod(), data, nil); err != nil {
			return nil, err
		}
		if m.file.Module == nil {
			return nil, fmt.Errorf("%s: no module line", m.goMod())
		}
		m.path = m.file.Module.Mod.Path
		mods = append(mods, m)
	}
	return mods, nil
}

func printModules() error {
	mods, err := loadPublished()
	if err != nil {
		return err
	}
	for _, m := range mods {
		fmt.Printf("%s\t%s\t%s\n", m.dir, m.path, m.tagPrefix())
	}
	return nil
}

// check verifies that otelretry.Version, the CHANGELOG's newest release and
// the published modules' requirements on each other agree on version: the
// requirements in the development state (placeholder and replace) or, with
// released, in the release commit's (vVERSION, no replace).
func check(version string, released bool) error {
	var errs []error
	if v, err := libraryVersion("."); err != nil {
		errs = append(errs, err)
	} else if v != version {
		errs = append(errs, fmt.Errorf("otelretry.Version is %q, not %q", v, version))
	}
	if c, err := readChangelog("CHANGELOG.md"); err != nil {
		errs = append(errs, err)
	} else if c.newest != version {
		errs = append(errs, fmt.Errorf("the newest release in CHANGELOG.md is %s, not %s", c.newest, version))
	}
	mods, err := loadPublished()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	errs = append(errs, checkRequirements(mods, "v"+version, released)...)
	return errors.Join(errs...)
}

func checkRequirements(mods []mod, version string, released bool) []error {
	var errs []error
	index := map[string]int{}
	for i, m := range mods {
		index[m.path] = i
	}
	for i, m := range mods {
		if want := modulePathOf(mods, m); m.path != want {
			errs = append(errs, fmt.Errorf("%s: module %s, want %s: its tags (%svX.Y.Z) serve that path alone", m.goMod(), m.path, want, m.tagPrefix()))
		}
		replaced := placeholderReplaces(m.file)
		for _, r := range m.file.Replace {
			// go install module@version refuses a module with any replace
			// or exclude directive, of a module of ours or not.
			if released {
				errs = append(errs, fmt.Errorf("%s: replaces %s (a release has no replace directives)", m.goMod(), r.Old.Path))
			}
		}
		for _, x := range m.file.Exclude {
			if released {
				errs = append(errs, fmt.Errorf("%s: excludes %s %s (a release has no exclude directives)", m.goMod(), x.Mod.Path, x.Mod.Version))
			}
		}
		for _, r := range m.file.Require {
			j, ours := index[r.Mod.Path]
			if !ours {
				continue
			}
			if j >= i {
				errs = append(errs, fmt.Errorf("%s: requires %s, which is not before it in the published list", m.goMod(), r.Mod.Path))
			}
			if released {
				if r.Mod.Version != version {
					errs = append(errs, fmt.Errorf("%s: requires %s %s, want %s", m.goMod(), r.Mod.Path, r.Mod.Version, version))
				}
				continue
			}
			want, err := filepath.Rel(filepath.FromSlash(m.dir), filepath.FromSlash(mods[j].dir))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if r.Mod.Version != placeholder || path.Clean(filepath.ToSlash(replaced[r.Mod.Path])) != filepath.ToSlash(want) {
				errs = append(errs, fmt.Errorf("%s: requires %s %s (replaced by %q); between releases it requires %s, replaced by %s",
					m.goMod(), r.Mod.Path, r.Mod.Version, replaced[r.Mod.Path], placeholder, filepath.ToSlash(want)))
			}
		}
	}
	return errs
}

// modulePathOf is the module path m's directory gives: the root module's
// path, then m's directory (the tag prefix's path), then the root's major
// version suffix, which ends a path (example.com/r/v2's cmd/x is
// example.com/r/cmd/x/v2); m's own path when no root module is among mods.
// Go lets a module in a subdirectory take a major version of its own; this
// project releases every module under one version, so each takes the
// root's.
func modulePathOf(mods []mod, m mod) string {
	for _, root := range mods {
		if root.dir == "." {
			if m.dir == "." {
				return root.path
			}
			prefix, major, ok := module.SplitPathVersion(root.path)
			if !ok {
				return root.path + "/" + m.dir
			}
			return prefix + "/" + m.dir + major
		}
	}
	return m.path
}

// placeholderReplaces maps each module path f replaces at the placeholder
// version to its replacement's path: a replace of that version wins over
// one of every version, as the go command takes them.
func placeholderReplaces(f *modfile.File) map[string]string {
	replaced := map[string]string{}
	for _, r := range f.Replace {
		if r.Old.Version == placeholder || r.Old.Version == "" && replaced[r.Old.Path] == "" {
			replaced[r.Old.Path] = r.New.Path
		}
	}
	return replaced
}

// prepare makes the release commit's edits in the working tree: each
// published module requires the published modules it uses at vVERSION,
// without replace directives, and its go.sum holds their hashes, computed
// from the files git tracks, as they will be in the release commit. It
// goes in dependency order, so that a module's go.sum is final before its
// own hash is taken.
func prepare(version string) error {
	v := "v" + version
	mods, err := loadPublished()
	if err != nil {
		return err
	}
	if errs := checkRequirements(mods, v, false); len(errs) > 0 {
		return errors.Join(append([]error{errors.New("not in the development state")}, errs...)...)
	}
	for _, m := range mods {
		if err := sumNotIgnored(m); err != nil {
			return err
		}
	}
	sums := map[string][]string{} // module path -> its two go.sum lines
	for _, m := range mods {
		var lines []string
		for _, r := range slices.Clone(m.file.Require) {
			ms, ours := sums[r.Mod.Path]
			if !ours {
				continue
			}
			if err := m.file.AddRequire(r.Mod.Path, v); err != nil {
				return err
			}
			for _, rep := range slices.Clone(m.file.Replace) {
				if rep.Old.Path != r.Mod.Path {
					continue
				}
				if err := m.file.DropReplace(rep.Old.Path, rep.Old.Version); err != nil { // with or without a version
					return err
				}
			}
			lines = append(lines, ms...)
		}
		if len(lines) > 0 {
			m.file.Cleanup()
			data, err := m.file.Format()
			if err != nil {
				return err
			}
			if err := os.WriteFile(m.goMod(), data, 0o644); err != nil {
				return err
			}
			sum := filepath.Join(filepath.FromSlash(m.dir), "go.sum")
			if err := addSums(sum, lines); err != nil {
				return err
			}
			// A go.sum made here is no file git tracks yet: staged, it is
			// in the zip of the commit to be made (worktreeZip) and in
			// that commit (release.sh commits with -a).
			if _, err := git(".", "add", "--", filepath.ToSlash(sum)); err != nil {
				return err
			}
		}
		if sums[m.path], err = sumLines(m, v); err != nil {
			return err
		}
	}
	return nil
}

// sumNotIgnored refuses a module whose go.sum git ignores: prepare writes
// the release's hashes there for the release commit, which would not hold
// it, and the release, undone, would leave the file rewritten (git leaves
// an ignored file alone). Checked before anything is written.
func sumNotIgnored(m mod) error {
	sum := path.Join(m.dir, "go.sum")
	cmd := exec.Command("git", "check-ignore", "-q", "--", sum)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return fmt.Errorf("%s: ignored (.gitignore): a published module's go.sum is tracked, to hold the hashes of the modules it requires at their release", sum)
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return nil // not ignored
	default:
		return fmt.Errorf("git check-ignore %s: %w", sum, err)
	}
}

// sumLines returns the go.sum lines of module m at version v, from the
// working tree.
func sumLines(m mod, v string) ([]string, error) {
	data, err := worktreeZip(".", m.dir, module.Version{Path: m.path, Version: v})
	if err != nil {
		return nil, err
	}
	h, err := hashZip(data)
	if err != nil {
		return nil, err
	}
	gomod, err := os.ReadFile(m.goMod())
	if err != nil {
		return nil, err
	}
	hmod, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gomod)), nil
	})
	if err != nil {
		return nil, err
	}
	return []string{m.path + " " + v + " " + h, m.path + " " + v + "/go.mod " + hmod}, nil
}

// addSums adds lines to a go.sum file, in the go command's order.
func addSums(file string, lines []string) error {
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	all := strings.Split(strings.TrimSpace(string(data)), "\n")
	all = slices.DeleteFunc(append(all, lines...), func(l string) bool { return l == "" })
	slices.SortFunc(all, func(a, b string) int {
		fa, fb := strings.Fields(a), strings.Fields(b)
		if c := strings.Compare(fa[0], fb[0]); c != 0 {
			return c
		}
		va, _ := strings.CutSuffix(fa[1], "/go.mod")
		vb, _ := strings.CutSuffix(fb[1], "/go.mod")
		if c := semver.Compare(va, vb); c != 0 {
			return c
		}
		return strings.Compare(fa[1], fb[1])
	})
	all = slices.Compact(all)
	return os.WriteFile(file, []byte(strings.Join(all, "\n")+"\n"), 0o644)
}

func git(dir string, args ...string) (string, error) { return gitEnv(dir, nil, args...) }

// gitEnv runs git as git does, with env added to its environment.
func gitEnv(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}
