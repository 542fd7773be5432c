// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/mod/module"
)

// git archive, which the go command reads a tag through, expands the
// $Format:...$ of an export-subst file with the tagged commit's data, which
// the working tree cannot give before the commit: worktreeZip refuses such
// a file, where it returned a zip whose hash (written to go.sum by
// prepare) was not the tag's (a reviewer's find).
func TestAnExportSubstFileIsRefused(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	for name, data := range map[string]string{
		"go.mod":         "module example.com/r\n\ngo 1.26.0\n",
		"LICENSE":        "license text\n",
		"r.go":           "package r\n\n// Commit is $Format:%H$.\nconst Commit = \"$Format:%H$\"\n",
		".gitattributes": "r.go export-subst\n",
	} {
		writeFile(t, repo, name, data)
	}
	runGit(t, repo, "init", "-q")
	runGit(t, repo, "add", ".")
	runGit(t, repo, "commit", "-q", "-m", "c")
	_, err := worktreeZip(repo, ".", module.Version{Path: "example.com/r", Version: "v0.3.0"})
	if err == nil || !strings.Contains(err.Error(), "r.go: export-subst") {
		t.Errorf("worktreeZip = %v, want r.go refused for its export-subst", err)
	}
}
