// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
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

// cacheEntry writes a file in cache last used age ago.
func cacheEntry(t *testing.T, cache, name string, age time.Duration) string {
	t.Helper()
	p := filepath.Join(cache, name[:2], name)
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
// the whole cache.
func TestTheTestCommandMakesRoomForItsBuilds(t *testing.T) {
	const plenty, short = "999999999", "1000"
	t.Run("room enough", func(t *testing.T) {
		cache := t.TempDir()
		old := cacheEntry(t, cache, "aa-old", 48*time.Hour)
		if out := trimCache(t, cache, plenty); out != "" || !exists(old) {
			t.Errorf("with room enough: output %q, the old entry kept %v", out, exists(old))
		}
	})
	t.Run("short, then room", func(t *testing.T) {
		cache := t.TempDir()
		old := cacheEntry(t, cache, "bb-old", 48*time.Hour)
		recent := cacheEntry(t, cache, "cc-recent", time.Hour)
		out := trimCache(t, cache, short, plenty)
		if exists(old) || !exists(recent) || !strings.Contains(out, "unused for a day") || strings.Contains(out, "whole") {
			t.Errorf("old entry kept %v, recent kept %v; output:\n%s", exists(old), exists(recent), out)
		}
	})
	t.Run("short still", func(t *testing.T) {
		cache := t.TempDir()
		recent := cacheEntry(t, cache, "dd-recent", time.Hour)
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
