// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
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
	if rev, err = git(repo, "rev-parse", "--verify", rev+"^{commit}"); err != nil {
		return nil, err
	}
	rev = strings.TrimSpace(rev)
	subdir := dir
	if dir == "." {
		subdir = ""
	}
	var data []byte
	err = inCleanClone(repo, func(clone string) error {
		if data, err = cloneZip(clone, rev, subdir, m); err != nil {
			return err
		}
		return refuseSubstituted(clone, rev, dir, m, data)
	})
	return data, err
}

// refuseSubstituted refuses a file of the zip that git archive rewrote
// (export-subst set, as rev's own .gitattributes files say, read in the
// clean clone): it holds the data of the commit zipped, not of the release
// commit to be made. A file the archive left out is no matter.
func refuseSubstituted(clone, rev, dir string, m module.Version, data []byte) error {
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
	if _, err := git(clone, "read-tree", rev); err != nil { // the index --cached reads the attributes from
		return err
	}
	out, err := git(clone, append([]string{"check-attr", "--cached", "-z", "export-subst", "--"}, paths...)...)
	if err != nil {
		return err
	}
	f := strings.Split(out, "\x00") // path, attribute, value, ...
	for i := 0; i+2 < len(f); i += 3 {
		if f[i+2] == "set" {
			return fmt.Errorf("%s: export-subst set: git archive rewrites it with the tagged commit's data, so the zip the tag serves cannot be known before the commit; unset it for the module's files", f[i])
		}
	}
	return nil
}

// vcsZip returns the module zip of m at rev (a subdir module's when
// subdir is set) as a public proxy makes it from a pushed tag (see
// inCleanClone and cloneZip).
func vcsZip(repo, rev, subdir string, m module.Version) (data []byte, err error) {
	err = inCleanClone(repo, func(clone string) error {
		data, err = cloneZip(clone, rev, subdir, m)
		return err
	})
	return data, err
}

// cloneZip zips rev in clone by golang.org/x/mod/zip.CreateFromVCS (git
// archive, as the go command runs it).
func cloneZip(clone, rev, subdir string, m module.Version) ([]byte, error) {
	var buf bytes.Buffer
	if err := modzip.CreateFromVCS(&buf, m, clone, rev, subdir); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// inCleanClone calls f with a clone of repo made for it that shares its
// objects (a commit no ref names is there too) and carries none of its
// settings (its own attributes, line ends, filter drivers) nor a
// template's, git running with no user's or system's configuration and no
// repository of the environment's, as on a public proxy.
func inCleanClone(repo string, f func(clone string) error) error {
	abs, err := filepath.Abs(repo)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "release-zip-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	defer isolateGit(tmp)()
	clone := filepath.Join(tmp, "clone")
	if _, err := git(tmp, "clone", "-q", "--template=", "--shared", "--no-checkout", abs, clone); err != nil {
		return err
	}
	return f(clone)
}

// isolateGit sets the environment git runs in so that no user's or
// system's configuration applies and no repository the environment names
// (GIT_DIR in a hook) is taken for the clone (home the empty directory to
// use as HOME), and returns what puts the environment back: CreateFromVCS
// runs git with the process's environment.
func isolateGit(home string) (restore func()) {
	set := map[string]string{"HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_CONFIG_SYSTEM": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_ATTR_NOSYSTEM": "1", "GIT_CONFIG_PARAMETERS": "", "GIT_CONFIG_COUNT": "0"}
	unset := []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_TEMPLATE_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
		"GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"}
	saved := map[string]*string{}
	for _, k := range append(slices.Collect(maps.Keys(set)), unset...) {
		if old, ok := os.LookupEnv(k); ok {
			saved[k] = &old
		} else {
			saved[k] = nil
		}
	}
	for k, v := range set {
		os.Setenv(k, v)
	}
	for _, k := range unset {
		os.Unsetenv(k)
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
