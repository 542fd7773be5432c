// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// trimCache runs scripts/trim-cache.sh on a build cache of its own, with a
// df that reports free space from frees, one value per call (the last
// repeated), and returns the script's output.
func trimCache(t *testing.T, cache string, frees ...string) string {
	t.Helper()
	bin := t.TempDir()
	count := filepath.Join(t.TempDir(), "calls")
	df := `#!/bin/sh
n=$(cat "` + count + `" 2>/dev/null || echo 0)
echo $((n + 1)) > "` + count + `"
set -- ` + strings.Join(frees, " ") + `
shift $(( n < $# ? n : $# - 1 ))
printf 'Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/x 1 1 %s 1%% /\n' "$1"
`
	if err := os.WriteFile(filepath.Join(bin, "df"), []byte(df), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(repoRoot(t), "scripts", "trim-cache.sh"))
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOCACHE="+cache, "OTELRETRY_MIN_FREE_GB=20")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("trim-cache.sh: %v\n%s", err, out)
	}
	return string(out)
}

// cacheEntry writes a build entry named as go names them (XX/<hash>-d,
// hash beginning with prefix, two hex digits or more) in cache, last used
// age ago.
func cacheEntry(t *testing.T, cache, prefix string, age time.Duration) string {
	t.Helper()
	return cacheFile(t, cache, filepath.Join(prefix[:2], prefix+"0123456789abcdef-d"), age)
}

// cacheFile writes the file rel of cache, last changed age ago.
func cacheFile(t *testing.T, cache, rel string, age time.Duration) string {
	t.Helper()
	p := filepath.Join(cache, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-age)
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// The test command makes room for its builds when the build cache filled
// the disk (a CI run failed with "no space left on device" once the cache
// held 72 GB): with room enough it touches nothing; short of room it
// removes the entries unused for a day and keeps the others; still short,
// those unused for three hours (a build going on keeps its own: go marks
// an entry it uses at most once an hour); still short, the whole cache,
// where it went from a day's entries to the whole cache at once (stop 83's
// left item: a cold CI run of 1,327 s followed).
func TestTheTestCommandMakesRoomForItsBuilds(t *testing.T) {
	const plenty, short = "999999999", "1000"
	t.Run("room enough", func(t *testing.T) {
		cache := t.TempDir()
		old := cacheEntry(t, cache, "aa01", 48*time.Hour)
		if out := trimCache(t, cache, plenty); out != "" || !exists(old) {
			t.Errorf("with room enough: output %q, the old entry kept %v", out, exists(old))
		}
	})
	t.Run("short, then room", func(t *testing.T) {
		cache := t.TempDir()
		old := cacheEntry(t, cache, "bb02", 48*time.Hour)
		recent := cacheEntry(t, cache, "cc03", time.Hour)
		out := trimCache(t, cache, short, plenty)
		if exists(old) || !exists(recent) || !strings.Contains(out, "unused for a day") || strings.Contains(out, "whole") {
			t.Errorf("old entry kept %v, recent kept %v; output:\n%s", exists(old), exists(recent), out)
		}
	})
	t.Run("short, short, then room", func(t *testing.T) {
		cache := t.TempDir()
		old := cacheEntry(t, cache, "bd02", 48*time.Hour)
		hours := cacheEntry(t, cache, "bd03", 5*time.Hour)
		recent := cacheEntry(t, cache, "bd04", time.Hour)
		out := trimCache(t, cache, short, short, plenty)
		if exists(old) || exists(hours) || !exists(recent) || !strings.Contains(out, "unused for three hours") || strings.Contains(out, "whole") {
			t.Errorf("day-old entry kept %v, 5-hour-old kept %v, recent kept %v; output:\n%s", exists(old), exists(hours), exists(recent), out)
		}
	})
	// What go keeps in the cache beside its entries is never an entry: the
	// fuzzing corpus, which go clean -cache keeps too, testexpire.txt,
	// whose removal would bring back the results go clean -testcache
	// invalidated, the README and trim.txt; nor is a file of another name
	// in an entry's directory (a reviewer's find: every old file went).
	t.Run("short, only entries", func(t *testing.T) {
		cache := t.TempDir()
		var kept []string
		for _, rel := range []string{"fuzz/example.com/p/FuzzX/0123456789abcdef", "testexpire.txt", "README", "trim.txt", "ee/notes.txt"} {
			kept = append(kept, cacheFile(t, cache, rel, 48*time.Hour))
		}
		old := cacheEntry(t, cache, "ee05", 48*time.Hour)
		out := trimCache(t, cache, short, plenty)
		for _, p := range kept {
			if !exists(p) {
				t.Errorf("%s removed; output:\n%s", strings.TrimPrefix(p, cache+"/"), out)
			}
		}
		if exists(old) {
			t.Errorf("the old entry kept; output:\n%s", out)
		}
	})
	// A GOCACHE that is a link trims what it points at (a reviewer's find:
	// nothing was removed, and a full disk then lost the whole cache).
	t.Run("short, the cache a link", func(t *testing.T) {
		real := t.TempDir()
		link := filepath.Join(t.TempDir(), "cache")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		old := cacheEntry(t, real, "ab06", 48*time.Hour)
		recent := cacheEntry(t, real, "ab07", time.Hour)
		out := trimCache(t, link, short, plenty)
		if exists(old) || !exists(recent) {
			t.Errorf("old entry kept %v, recent kept %v; output:\n%s", exists(old), exists(recent), out)
		}
	})
	t.Run("df says no number", func(t *testing.T) {
		cache := t.TempDir()
		old := cacheEntry(t, cache, "ac08", 48*time.Hour)
		out := trimCache(t, cache, "-")
		if !exists(old) || !strings.Contains(out, "nothing trimmed") {
			t.Errorf("old entry kept %v; output:\n%s", exists(old), out)
		}
	})
	t.Run("short still", func(t *testing.T) {
		cache := t.TempDir()
		recent := cacheEntry(t, cache, "dd04", time.Hour)
		out := trimCache(t, cache, short)
		if exists(recent) || !strings.Contains(out, "removing the whole build cache") {
			t.Errorf("recent entry kept %v; output:\n%s", exists(recent), out)
		}
	})
}

// scripts/test.sh makes room before its first build: the first of its
// command lines (comments left out) that runs go or the stack's builds
// comes after trim-cache.sh's.
func TestTheTestCommandTrimsTheCacheFirst(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	build := regexp.MustCompile(`(^|[\s(])(go (vet|test|build|run|list)|scripts/stack\.sh)\b`)
	trimAt, buildAt := -1, -1
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#"):
		case trimAt < 0 && strings.Contains(line, "scripts/trim-cache.sh"):
			trimAt = i + 1
		case buildAt < 0 && build.MatchString(line):
			buildAt = i + 1
		}
	}
	if trimAt < 0 || buildAt < 0 || trimAt > buildAt {
		t.Errorf("scripts/test.sh runs trim-cache.sh on line %d, its first build on line %d; want it first", trimAt, buildAt)
	}
}

// A threshold that is no whole number of gigabytes is refused by name,
// before anything is removed.
func TestTrimCacheRefusesABadThreshold(t *testing.T) {
	cache := t.TempDir()
	old := cacheEntry(t, cache, "ad09", 48*time.Hour)
	// Nor one too large for bash's arithmetic in KiB, which wrapped round
	// and trimmed nothing (a reviewer's find).
	for _, v := range []string{"abc", "20GB", "1.5", "-5", "17592186044416", "9223372036854775807", "99999999999999999999", "1000000000"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(repoRoot(t), "scripts", "trim-cache.sh"))
		cmd.Env = append(os.Environ(), "GOCACHE="+cache, "OTELRETRY_MIN_FREE_GB="+v)
		out, err := cmd.CombinedOutput()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "OTELRETRY_MIN_FREE_GB="+v) {
			t.Errorf("OTELRETRY_MIN_FREE_GB=%s: %v\n%s", v, err, out)
		}
	}
	if !exists(old) {
		t.Error("an entry was removed under a bad threshold")
	}
}
