// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/mod/modfile"
)

// RELEASING.md: "Between releases the published modules require each other
// at v0.0.0-00010101000000-000000000000 with a replace to the module's
// directory". A replace that names another version on its left side
// (example.com/r v0.2.0 => ../..) does not apply to the placeholder
// requirement (the go command would fetch example.com/r at the
// placeholder): it is no development state (it passed, keyed by path).
func TestAReplaceOfAnotherVersionIsNotTheDevelopmentState(t *testing.T) {
	root := parseMod(t, ".", "module example.com/r\n\ngo 1.26.0\n")
	other := parseMod(t, "a/b", "module example.com/r/a/b\n\ngo 1.26.0\n\nreplace example.com/r v0.2.0 => ../..\n\nrequire example.com/r "+placeholder+"\n")
	if errs := checkRequirements([]mod{root, other}, "v0.3.0", false); len(errs) == 0 {
		t.Error("a replace of example.com/r v0.2.0, which leaves the placeholder requirement unreplaced, passes as the development state")
	}
}

// prepare's doc: the release commit's modules require each other "at
// vVERSION, without replace directives". A replace written with the
// placeholder version on its left (a development state checkRequirements
// accepts) is dropped too (it was kept: only a replace without a version
// was dropped).
func TestPrepareDropsAReplaceWithAVersion(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	files := map[string]string{
		"LICENSE": "license\n",
		"go.mod":  "module example.com/r\n\ngo 1.26.0\n",
		"r.go":    "package r\n",
		"classify/h2/go.mod": "module example.com/r/classify/h2\n\ngo 1.26.0\n\nrequire example.com/r " + placeholder +
			"\n\nreplace example.com/r " + placeholder + " => ../..\n",
		"classify/h2/h2.go":        "package h2\n",
		"classify/h3/go.mod":       "module example.com/r/classify/h3\n\ngo 1.26.0\n",
		"classify/h3/h3.go":        "package h3\n",
		"cmd/retryinspect/go.mod":  "module example.com/r/cmd/retryinspect\n\ngo 1.26.0\n",
		"cmd/retryinspect/main.go": "package main\n",
	}
	for name, data := range files {
		writeFile(t, repo, name, data)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "c"}} {
		runGit(t, repo, args...)
	}
	t.Chdir(repo)
	if err := prepare("0.4.0"); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(repo, "classify", "h2", "go.mod"))
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Replace) > 0 {
		t.Errorf("the release commit's classify/h2/go.mod keeps a replace directive:\n%s", data)
	}
}

// RELEASING.md: between releases a module requires another "at
// v0.0.0-00010101000000-000000000000 with a replace to the module's
// directory". When a go.mod has both a replace of the placeholder version
// and one without a version, the go command uses the one with the version
// (a versioned replace wins), so the requirement goes elsewhere here: no
// development state (it passed: the replace read last was taken).
func TestTheVersionedReplaceIsTheOneThatApplies(t *testing.T) {
	root := parseMod(t, ".", "module example.com/r\n\ngo 1.26.0\n")
	other := parseMod(t, "a/b", "module example.com/r/a/b\n\ngo 1.26.0\n\n"+
		"replace example.com/r "+placeholder+" => ../../../elsewhere\n\n"+
		"replace example.com/r => ../..\n\n"+
		"require example.com/r "+placeholder+"\n")
	if errs := checkRequirements([]mod{root, other}, "v0.3.0", false); len(errs) == 0 {
		t.Error("a go.mod whose placeholder requirement is replaced by ../../../elsewhere (the versioned replace) passes as the development state")
	}
}
