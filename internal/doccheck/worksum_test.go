// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package doccheck

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFreshCloneGoWorkSumIsComplete: the README's commands run from the
// root in workspace mode, and `go doc` or `go run` there loads the whole
// workspace's module graph. When go.work.sum lacks a checksum the graph
// needs, the go command adds it, and a fresh clone is dirty after its
// first `go doc` (it added 212 lines before issue 45). The test copies
// go.work, go.work.sum and the go.mod and go.sum of every module it uses
// (the graph needs nothing else) to a scratch directory, runs `go list -m
// all` there in workspace mode, and expects every file unchanged. It needs
// the module cache or the module proxy, for go.mod files only.
func TestFreshCloneGoWorkSumIsComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command over the workspace's module graph")
	}
	// The test's own toolchain: go test puts its GOROOT/bin first on the
	// PATH (runtime.GOROOT is empty in a binary built with -trimpath).
	const gotool = "go"
	dir := t.TempDir()
	var work struct{ Use []struct{ DiskPath string } }
	out, err := exec.Command(gotool, "work", "edit", "-json", filepath.Join(root, "go.work")).Output()
	if err != nil {
		t.Fatalf("go work edit -json: %v", err)
	}
	if err := json.Unmarshal(out, &work); err != nil {
		t.Fatal(err)
	}
	files := []string{"go.work", "go.work.sum"}
	for _, u := range work.Use {
		files = append(files, filepath.Join(u.DiskPath, "go.mod"), filepath.Join(u.DiskPath, "go.sum"))
	}
	if len(work.Use) < 2 {
		t.Fatalf("go.work uses %v: is its parser broken?", work.Use)
	}
	want := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		want[f] = b
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	cmd := exec.Command(gotool, "list", "-m", "all")
	cmd.Dir = dir
	// Workspace mode, as in a fresh clone, whatever the caller's GOWORK
	// (scripts/test.sh sets off) and GOFLAGS.
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work"), "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list -m all: %v\n%s", err, stderr.String())
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[f]) {
			t.Errorf("go list -m all changed %s (%d lines, was %d): run `go list -m all` at the root and commit it",
				f, bytes.Count(got, []byte("\n")), bytes.Count(want[f], []byte("\n")))
		}
	}
}
