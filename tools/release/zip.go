// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// worktreeZip returns the module zip of the module in dir at version m,
// made of the files git tracks there with their content in the working
// tree, but those git archive leaves out (export-ignore): in a clean tree
// with the release edits made, the zip the release commit's tag will
// serve. Like the go command for a tag, it adds the repository's LICENSE
// to a module in a subdirectory that has none. A file git archive would
// rewrite (export-subst) is refused: what it becomes depends on the commit
// not made yet.
func worktreeZip(repo, dir string, m module.Version) ([]byte, error) {
	names, err := trackedFiles(repo, dir)
	if err != nil {
		return nil, err
	}
	if err := cloneSettings(repo, names); err != nil {
		return nil, err
	}
	ignored, err := exportIgnored(repo, names)
	if err != nil {
		return nil, err
	}
	substituted, err := attrSet(repo, "export-subst", names)
	if err != nil {
		return nil, err
	}
	var files []modzip.File
	haveLicense := false
	for _, name := range names {
		if ignored[name] {
			continue
		}
		if substituted[name] {
			// git archive expands its $Format:...$ with the release
			// commit's data, which no working tree holds: the tag's zip,
			// and its hash, cannot be known before the commit.
			return nil, fmt.Errorf("%s: export-subst set: git archive rewrites it with the tagged commit's data, so the zip the tag serves cannot be known before the commit; unset it for the module's files", name)
		}
		rel := name
		if dir != "." {
			rel = strings.TrimPrefix(name, dir+"/")
		}
		files = append(files, diskFile{path: rel, file: filepath.Join(repo, filepath.FromSlash(name))})
		haveLicense = haveLicense || rel == "LICENSE"
	}
	if !haveLicense && dir != "." {
		files = append(files, diskFile{path: "LICENSE", file: filepath.Join(repo, "LICENSE")})
	}
	var buf bytes.Buffer
	if err := modzip.Create(&buf, m, files); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// exportIgnored reports which of the tracked files names git archive
// leaves out of an archive: those whose export-ignore attribute is set, or
// a directory's they are in (git archive leaves the directory out whole).
// A directory is asked of as git archive asks, by its path with a trailing
// slash ("drafts/"), which both "drafts" and "drafts/" patterns match and a
// later "drafts/ -export-ignore" unsets.
func exportIgnored(repo string, names []string) (map[string]bool, error) {
	paths := slices.Clone(names)
	for _, name := range names {
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			paths = append(paths, dir+"/")
		}
	}
	slices.Sort(paths)
	set, err := attrSet(repo, "export-ignore", slices.Compact(paths))
	if err != nil {
		return nil, err
	}
	ignored := map[string]bool{}
	for _, name := range names {
		for p := name; p != "."; p = path.Dir(p) {
			if p == name && set[p] || p != name && set[p+"/"] {
				ignored[name] = true
				break
			}
		}
	}
	return ignored, nil
}

// trackedFiles lists the files git tracks under dir, but symbolic links:
// a module zip holds none (modzip leaves the tag's out), and a clone with
// core.symlinks=false checks one out as a plain file.
func trackedFiles(repo, dir string) ([]string, error) {
	out, err := git(repo, "ls-files", "-s", "-z", "--", dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, entry := range strings.Split(strings.TrimRight(out, "\x00"), "\x00") {
		meta, name, ok := strings.Cut(entry, "\t") // "MODE OBJECT STAGE\tNAME"
		if ok && !strings.HasPrefix(meta, "120000 ") {
			names = append(names, name)
		}
	}
	return names, nil
}

// cloneSettings refuses settings of this clone alone that make its working
// tree, or its archive, differ from what a clone of the pushed tag gives:
// its own attributes, CRLF line ends, filter drivers it configures.
func cloneSettings(repo string, names []string) error {
	if err := localAttributes(repo); err != nil {
		return err
	}
	if err := localLineEnds(repo); err != nil {
		return err
	}
	return localFilters(repo, names)
}

// localFilters refuses a file whose filter attribute names a driver this
// clone configures (filter.NAME.smudge, .clean or .process): the working
// tree holds what the driver made of it, a clone of the tag without the
// driver the committed content.
func localFilters(repo string, names []string) error {
	drivers, err := attrValues(repo, "filter", names)
	if err != nil {
		return err
	}
	for _, name := range names {
		d := drivers[name]
		if d == "" || d == "set" || d == "unset" || d == "unspecified" {
			continue
		}
		cmd := exec.Command("git", "config", "--get-regexp", `^filter\.`+regexp.QuoteMeta(d)+`\.(smudge|clean|process)$`)
		cmd.Dir = repo
		out, err := cmd.Output()
		if exit := (*exec.ExitError)(nil); err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) { // 1: none
			return fmt.Errorf("git config --get-regexp filter.%s: %w", d, err)
		}
		if line := strings.TrimSpace(string(out)); line != "" {
			key, _, _ := strings.Cut(line, " ")
			return fmt.Errorf("%s: filter=%s, which %s configures in this clone: its working tree holds what the driver made, a clone of the tag the committed content; release from a clone without it", name, d, key)
		}
	}
	return nil
}

// localAttributes refuses a repository whose info/attributes sets
// anything: git archive honours it here, but a clone of the pushed tag
// has none, so the zip the tag serves would differ from the one made here.
func localAttributes(repo string) error {
	file, err := git(repo, "rev-parse", "--git-path", "info/attributes")
	if err != nil {
		return err
	}
	file = strings.TrimSpace(file)
	if !filepath.IsAbs(file) {
		file = filepath.Join(repo, file)
	}
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return fmt.Errorf("%s: %q: attributes of this clone alone, which the pushed tag does not carry: move them to a .gitattributes file, or remove them", file, line)
		}
	}
	return nil
}

// localLineEnds refuses a clone whose configuration writes its text files
// with CRLF line ends (core.autocrlf=true, Git for Windows' default, or
// core.eol=crlf): the go command archives the tag with LF ones, so the zip
// made from this working tree would not be the tag's.
func localLineEnds(repo string) error {
	autocrlf, err := git(repo, "config", "--default", "", "--get", "core.autocrlf")
	if err != nil {
		return err
	}
	if v := strings.ToLower(strings.TrimSpace(autocrlf)); v != "" && v != "input" {
		// Read as git reads a boolean: true, yes, on, a number but 0.
		if b, err := git(repo, "config", "--type=bool", "--get", "core.autocrlf"); err == nil && strings.TrimSpace(b) == "true" {
			return lineEndsError("core.autocrlf", v)
		}
	}
	eol, err := git(repo, "config", "--default", "", "--get", "core.eol")
	if err != nil {
		return err
	}
	if v := strings.ToLower(strings.TrimSpace(eol)); v == "crlf" {
		return lineEndsError("core.eol", v)
	}
	return nil
}

// lineEndsError is localLineEnds' refusal of key's value.
func lineEndsError(key, value string) error {
	return fmt.Errorf("%s=%s: this clone's text files have CRLF line ends, the tag's zip LF ones; release from a clone without it (git -c %s=false clone, or git config %s false and a fresh checkout)",
		key, value, key, key)
}

// attrSet reports which of paths have the git attribute attr set (see
// attrValues).
func attrSet(repo, attr string, paths []string) (map[string]bool, error) {
	values, err := attrValues(repo, attr, paths)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for p, v := range values {
		set[p] = v == "set"
	}
	return set, nil
}

// attrValues returns the value of the git attribute attr of each of paths
// ("set", "unset", "unspecified" or its value), as a clone of the pushed
// tag gives it (a public proxy's): by the repository's .gitattributes
// files, not the user's or the system's attributes files (worktreeZip
// refuses the repository's own info/attributes: see localAttributes).
func attrValues(repo, attr string, paths []string) (map[string]string, error) {
	out, err := gitEnv(repo, []string{"GIT_ATTR_NOSYSTEM=1"},
		append([]string{"-c", "core.attributesFile=" + os.DevNull, "check-attr", "-z", attr, "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	values := map[string]string{}
	f := strings.Split(out, "\x00") // path, attribute, value, ...
	for i := 0; i+2 < len(f); i += 3 {
		values[f[i]] = f[i+2]
	}
	return values, nil
}

type diskFile struct{ path, file string }

func (f diskFile) Path() string                 { return f.path }
func (f diskFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.file) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.file) }

// hashZip returns the go.sum hash (h1:) of a module zip.
func hashZip(data []byte) (string, error) {
	f, err := os.CreateTemp("", "release-*.zip")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return dirhash.HashZip(f.Name(), dirhash.Hash1)
}

// writeProxy writes a file-system module proxy (GOPROXY=file:///DIR) that
// serves each published module at vVERSION from its tag, as the module
// proxy protocol lays it out: DIR/<escaped path>/@v/list, vX.Y.Z.info,
// .mod and .zip. The zips come from golang.org/x/mod/zip.CreateFromVCS,
// which archives the tag as the go command does, so they are the zips a
// public proxy would build from the pushed tags.
func writeProxy(dir, version string) error {
	repo, err := filepath.Abs(".")
	if err != nil {
		return err
	}
	mods, err := loadPublished()
	if err != nil {
		return err
	}
	v := "v" + version
	for _, m := range mods {
		tag := m.tagPrefix() + v
		subdir := ""
		if m.dir != "." {
			subdir = m.dir
		}
		esc, err := module.EscapePath(m.path)
		if err != nil {
			return err
		}
		at := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(at, 0o755); err != nil {
			return err
		}
		var zip bytes.Buffer
		if err := modzip.CreateFromVCS(&zip, module.Version{Path: m.path, Version: v}, repo, tag, subdir); err != nil {
			return fmt.Errorf("%s: %w", tag, err)
		}
		gomod, err := git(repo, "show", tag+":"+m.tagPrefix()+"go.mod")
		if err != nil {
			return err
		}
		when, err := git(repo, "log", "-1", "--format=%cI", tag)
		if err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(when))
		if err != nil {
			return err
		}
		info, err := json.Marshal(struct {
			Version string
			Time    time.Time
		}{v, t.UTC()})
		if err != nil {
			return err
		}
		for name, data := range map[string][]byte{v + ".zip": zip.Bytes(), v + ".mod": []byte(gomod), v + ".info": info} {
			if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
				return err
			}
		}
		if err := appendList(filepath.Join(at, "list"), v); err != nil {
			return err
		}
		fmt.Printf("%s@%s: %s (%d bytes)\n", m.path, v, tag, zip.Len())
	}
	return nil
}

func appendList(file, v string) error {
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for l := range strings.Lines(string(data)) {
		if strings.TrimSpace(l) == v {
			return nil
		}
	}
	return os.WriteFile(file, append(data, v+"\n"...), 0o644)
}
