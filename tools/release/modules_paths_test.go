// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	"golang.org/x/mod/module"
)

// RELEASING.md: the release commit has each published module "without
// replace directives (`go install module@version` refuses a module that
// has them)"; release.sh runs `check -released` after prepare to hold it.
// go install refuses any replace (and any exclude), not only one of a
// published module (a reviewer's find: a third party's was let through).
func TestAReleaseRefusesEveryReplaceAndExclude(t *testing.T) {
	root := parseMod(t, ".", "module example.com/r\n\ngo 1.26.0\n")
	for name, text := range map[string]string{
		"replace": "module example.com/r/cmd/x\n\ngo 1.26.0\n\nrequire (\n\texample.com/r v0.3.0\n\tgolang.org/x/text v0.20.0\n)\n\nreplace golang.org/x/text => ../../forks/text\n",
		"exclude": "module example.com/r/cmd/x\n\ngo 1.26.0\n\nrequire (\n\texample.com/r v0.3.0\n\tgolang.org/x/text v0.20.0\n)\n\nexclude golang.org/x/text v0.19.0\n",
	} {
		rel := parseMod(t, "cmd/x", text)
		if errs := checkRequirements([]mod{root, rel}, "v0.3.0", true); len(errs) == 0 {
			t.Errorf("%s: check -released accepts a release go.mod with a %s directive, which go install module@version refuses", name, name)
		}
	}
}

// A published module whose go.mod names a path other than the one its
// directory (its tag prefix) gives: the tag cmd/x/vX.Y.Z serves the module
// example.com/r/cmd/x only, so the go command refuses the zip it reads (a
// reviewer's find).
func TestAModulePathNotOfItsDirectoryIsRefused(t *testing.T) {
	root := parseMod(t, ".", "module example.com/r\n\ngo 1.26.0\n")
	wrong := parseMod(t, "cmd/x", "module example.com/r/cmd/y\n\ngo 1.26.0\n\nrequire example.com/r "+placeholder+"\n\nreplace example.com/r => ../..\n")
	errs := checkRequirements([]mod{root, wrong}, "v0.3.0", false)
	if len(errs) == 0 {
		t.Errorf("check accepts %s's module path %s, not the path its directory gives (example.com/r/cmd/x)", wrong.dir, wrong.path)
	}
}

// modulePathOf's doc: "the module path m's directory gives: the root
// module's path, then m's directory". From v2 on (RELEASING.md: "a new
// major one after [1.0]") the root is example.com/r/v2, and the module the
// tag cmd/x/v2.0.0 serves is example.com/r/cmd/x/v2: the major suffix ends
// the path. The path the tool wants, example.com/r/v2/cmd/x, is one no
// v2.0.0 can be of (module.Check refuses it; modzip.Create too; a
// reviewer's find against the path check's first form).
func TestAModulePathFromV2OnEndsInItsMajorVersion(t *testing.T) {
	root := parseMod(t, ".", "module example.com/r/v2\n\ngo 1.26.0\n")
	sub := parseMod(t, "cmd/x", "module example.com/r/cmd/x/v2\n\ngo 1.26.0\n")
	want := modulePathOf([]mod{root, sub}, sub)
	if err := module.Check(want, "v2.0.0"); err != nil {
		t.Errorf("modulePathOf = %s, which cannot be tagged v2.0.0: %v", want, err)
	}
	if err := module.Check(sub.path, "v2.0.0"); err != nil {
		t.Fatal(err)
	}
	if errs := checkRequirements([]mod{root, sub}, "v2.0.0", true); len(errs) > 0 {
		t.Errorf("check -released refuses the path the go command gives cmd/x at v2: %v", errs)
	}
}
