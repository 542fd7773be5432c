// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An output file the run cannot write is refused before the run plays: a
// -summary-json in a missing directory played the whole run and printed
// its report, then exited 1 (a reviewer's find).
func TestAnOutputFileThatCannotBeWrittenIsRefusedBeforeTheRun(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		o    options
		flag string
	}{
		{options{repeat: 1, summaryJSON: filepath.Join(dir, "missing", "s.json")}, "-summary-json"},
		{options{repeat: 1, html: filepath.Join(dir, "missing", "r.html")}, "-html"},
		{options{repeat: 1, summaryJSON: dir}, "-summary-json"},
	} {
		cleanEnv(t, nil)
		var out bytes.Buffer
		err := run(t.Context(), c.o, &out)
		if err == nil || !strings.HasPrefix(err.Error(), c.flag+":") {
			t.Errorf("%+v: err %v; want one naming %s", c.o, err, c.flag)
		}
		if out.Len() != 0 {
			t.Errorf("%+v: the run played and printed %d bytes before the refusal", c.o, out.Len())
		}
	}
}

// A file path that is a dangling symbolic link into a missing directory
// is refused too: its own directory exists, and writableTarget passed it,
// yet the write after the run failed (a reviewer's find).
func TestADanglingLinkIntoAMissingDirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "summary.json")
	if err := os.Symlink(filepath.Join(dir, "missing", "s.json"), link); err != nil {
		t.Skip(err)
	}
	werr := os.WriteFile(link, []byte("{}\n"), 0o644)
	if werr == nil {
		t.Fatal("the write through the dangling symlink succeeded; the premise fails")
	}
	if err := writableTarget(link); err == nil {
		t.Errorf("writableTarget(%s) = nil, but the write after the run fails: %v", link, werr)
	}
}

// The paths the refusal must and must not take (a reviewer's table).
func TestWritableTargetTakesWhatCanBeWritten(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"rel.json", true},
		{"./rel.json", true},
		{"-", true},
		{file, true},
		{filepath.Join(dir, "dirlink", "x.json"), true},
		{filepath.Join(dir, "dirlink"), false},
		{dir + "/", false},
		{filepath.Join(file, "x"), false},
		{filepath.Join(dir, "missing", "x"), false},
		{filepath.Join(dir, "missing") + "/", false},
		{"missing/x", false},
	} {
		if err := writableTarget(c.path); (err == nil) != c.ok {
			t.Errorf("writableTarget(%q) = %v; want ok %v", c.path, err, c.ok)
		}
	}
}

// writableTarget judges a link by the file it names: relative links and a
// chain of them taken, a link to a directory and a loop (which no open
// follows) refused, each as opening it for writing finds (a reviewer's
// table; the loop passed).
func TestWritableTargetFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// sub/out -> ../real.json (relative to sub, not to the cwd): writable.
	mustLink(t, os.Symlink("../real.json", filepath.Join(sub, "out")))
	// chain: a -> sub/out -> ../real.json
	mustLink(t, os.Symlink("sub/out", filepath.Join(dir, "a")))
	// link to a directory, relative
	mustLink(t, os.Symlink("sub", filepath.Join(dir, "d")))
	// loop
	mustLink(t, os.Symlink("loop2", filepath.Join(dir, "loop1")))
	mustLink(t, os.Symlink("loop1", filepath.Join(dir, "loop2")))
	for _, c := range []struct {
		path    string
		refused bool
	}{
		{filepath.Join(sub, "out"), false},
		{filepath.Join(dir, "a"), false},
		{filepath.Join(dir, "d"), true},
		{filepath.Join(dir, "loop1"), true},
	} {
		if err := writableTarget(c.path); (err != nil) != c.refused {
			t.Errorf("writableTarget(%q) = %v; want refused %v", c.path, err, c.refused)
		}
		// writing it tells the truth
		f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err == nil {
			f.Close()
		}
		if (err != nil) != c.refused {
			t.Errorf("opening %q for writing: %v; writableTarget's verdict refused=%v disagrees", c.path, err, c.refused)
		}
	}
}

func mustLink(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A link's relative target is resolved by the kernel from the directory
// the link really is in, after the links above it: writableTarget joined
// it to the path as written (filepath.Join cleans "..", as text), so a
// link reached through a linked directory was judged by another file (a
// reviewer's find). Each verdict is compared with what os.OpenFile finds.
func TestWritableTargetResolvesDotDotAfterLinks(t *testing.T) {
	for _, c := range []struct {
		name       string
		lexicalDir bool // dir/shared exists (the lexical target's directory)
		realDir    bool // dir/runs/shared exists (the kernel's)
	}{
		{"real directory only: writable, refused lexically", false, true},
		{"lexical directory only: unwritable, accepted lexically", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(os.MkdirAll(filepath.Join(dir, "runs", "r1"), 0o755))
			if c.realDir {
				must(os.Mkdir(filepath.Join(dir, "runs", "shared"), 0o755))
			}
			if c.lexicalDir {
				must(os.Mkdir(filepath.Join(dir, "shared"), 0o755))
			}
			// dir/latest -> runs/r1; runs/r1/summary.json -> ../shared/summary.json
			must(os.Symlink("runs/r1", filepath.Join(dir, "latest")))
			must(os.Symlink("../shared/summary.json", filepath.Join(dir, "runs", "r1", "summary.json")))
			path := filepath.Join(dir, "latest", "summary.json")
			verdict := writableTarget(path)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			if err == nil {
				f.Close()
			}
			if (verdict != nil) != (err != nil) {
				t.Errorf("writableTarget(%q) = %v; opening it for writing: %v", path, verdict, err)
			}
		})
	}
}
