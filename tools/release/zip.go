// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// worktreeZip returns the module zip of the module in dir at version m as
// the release commit's tag will serve it: the working tree's tracked
// changes (the release edits) are made a commit no ref names, as `git
// commit -a` would take them (git stash create), and that commit is zipped
// as a public proxy zips a tag (vcsZip): git archive in a clone that
// carries none of this clone's settings, by golang.org/x/mod/zip, which
// adds the repository's LICENSE to a module in a subdirectory as the go
// command does. A file git archive would rewrite (export-subst) is
// refused: what it becomes depends on the commit not made yet.
func worktreeZip(repo, dir string, m module.Version) ([]byte, error) {
	// A commit object needs a name; this one is never kept.
	rev, err := gitEnv(repo, []string{"GIT_AUTHOR_NAME=release", "GIT_AUTHOR_EMAIL=release@localhost",
		"GIT_COMMITTER_NAME=release", "GIT_COMMITTER_EMAIL=release@localhost"}, "stash", "create")
	if err != nil {
		return nil, err
	}
	if rev = strings.TrimSpace(rev); rev == "" {
		rev = "HEAD" // nothing changed
	}
	subdir := dir
	if dir == "." {
		subdir = ""
	}
	data, err := vcsZip(repo, rev, subdir, m)
	if err != nil {
		return nil, err
	}
	return data, refuseSubstituted(repo, dir, m, data)
}

// refuseSubstituted refuses a file of the zip that git archive rewrote
// (export-subst set): it holds the data of the commit zipped, not of the
// release commit to be made. A file the archive left out is no matter.
func refuseSubstituted(repo, dir string, m module.Version, data []byte) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	prefix := m.Path + "@" + m.Version + "/"
	var paths []string
	for _, f := range zr.File {
		rel := strings.TrimPrefix(f.Name, prefix)
		if dir != "." {
			rel = path.Join(dir, rel)
		}
		paths = append(paths, rel)
	}
	if len(paths) == 0 {
		return nil
	}
	substituted, err := attrSet(repo, "export-subst", paths)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if substituted[p] {
			return fmt.Errorf("%s: export-subst set: git archive rewrites it with the tagged commit's data, so the zip the tag serves cannot be known before the commit; unset it for the module's files", p)
		}
	}
	return nil
}

// vcsZip returns the module zip of m at rev (a subdir module's when
// subdir is set) as a public proxy makes it from a pushed tag: by
// golang.org/x/mod/zip.CreateFromVCS (git archive, as the go command runs
// it), in a clone of repo made for it that shares its objects (a commit
// no ref names is there too) and carries none of its settings (its own
// attributes, line ends, filter drivers), with no user's or system's git
// configuration.
func vcsZip(repo, rev, subdir string, m module.Version) ([]byte, error) {
	abs, err := filepath.Abs(repo)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "release-zip-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	defer isolateGit(tmp)()
	clone := filepath.Join(tmp, "clone")
	if _, err := git(tmp, "clone", "-q", "--shared", "--no-checkout", abs, clone); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := modzip.CreateFromVCS(&buf, m, clone, rev, subdir); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// isolateGit sets the environment git runs in so that no user's or
// system's configuration applies (home the empty directory to use as
// HOME), and returns what puts the environment back: CreateFromVCS runs
// git with the process's environment.
func isolateGit(home string) (restore func()) {
	set := map[string]string{"HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_CONFIG_SYSTEM": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_ATTR_NOSYSTEM": "1", "GIT_CONFIG_PARAMETERS": "", "GIT_CONFIG_COUNT": "0"}
	saved := map[string]*string{}
	for k, v := range set {
		if old, ok := os.LookupEnv(k); ok {
			saved[k] = &old
		} else {
			saved[k] = nil
		}
		os.Setenv(k, v)
	}
	return func() {
		for k, old := range saved {
			if old == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *old)
			}
		}
	}
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
		modZip, err := vcsZip(repo, tag, subdir, module.Version{Path: m.path, Version: v})
		if err != nil {
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
		for name, data := range map[string][]byte{v + ".zip": modZip, v + ".mod": []byte(gomod), v + ".info": info} {
			if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
				return err
			}
		}
		if err := appendList(filepath.Join(at, "list"), v); err != nil {
			return err
		}
		fmt.Printf("%s@%s: %s (%d bytes)\n", m.path, v, tag, len(modZip))
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
