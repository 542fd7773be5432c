// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"golang.org/x/exp/apidiff"
)

// moduleChangesOf returns the incompatible apidiff messages between two
// versions of the library's package otelretry, given as source.
func moduleChangesOf(t *testing.T, oldSrc, newSrc string) []string {
	t.Helper()
	load := func(src string) *apidiff.Module {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkg, err := (&types.Config{}).Check(libraryModule+"/otelretry", fset, []*ast.File{f}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return &apidiff.Module{Path: libraryModule, Packages: []*types.Package{pkg}}
	}
	var msgs []string
	for _, ch := range apidiff.ModuleChanges(load(oldSrc), load(newSrc)).Changes {
		if !ch.Compatible {
			msgs = append(msgs, ch.Message)
		}
	}
	return msgs
}

// RELEASING.md, "API compatibility": a method is named "with its type,
// `Transport.Close` or `(*Transport).Close`", a generic type's too: apidiff
// writes the receiver with its type parameters ("./otelretry.(*Cache[K]).Get"),
// which were read as the name Cache (a reviewer's find, against the first
// fix: an entry recording `(*Cache).Get` was refused).
func TestARecordedBreakOfAGenericTypesMethodIsNamed(t *testing.T) {
	msgs := moduleChangesOf(t,
		"package otelretry\ntype Cache[K comparable] struct{}\nfunc (c *Cache[K]) Get(k K) int { return 0 }\n",
		"package otelretry\ntype Cache[K comparable] struct{}\n")
	if len(msgs) != 1 {
		t.Fatalf("apidiff: %q, want one message", msgs)
	}
	c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n"+
		"- `(*Cache).Get`: a cache is read with `Lookup`.\n\n"+
		"## [0.3.0] - 2026-12-02\n")
	if !c.breakNamed("0.3.0", libraryModule, msgs[0]) {
		t.Errorf("%q (names %q) is not named by an entry recording `(*Cache).Get`", msgs[0], changedNames(msgs[0]))
	}
}

// The other way round: an entry that names the generic type Cache alone
// (for a break of its own) records no break of its methods: "one recorded
// break lets no other through" (RELEASING.md; a reviewer's find).
func TestAGenericTypesNameRecordsNoBreakOfItsMethods(t *testing.T) {
	msgs := moduleChangesOf(t,
		"package otelretry\ntype Cache[K comparable] struct{}\nfunc (c *Cache[K]) Get(k K) int { return 0 }\n",
		"package otelretry\ntype Cache[K comparable] struct{ Size int }\nfunc (c *Cache[K]) Get(k K) (int, bool) { return 0, false }\n")
	if len(msgs) != 1 {
		t.Fatalf("apidiff: %q, want one message", msgs)
	}
	c := parseWithIntro(t, "## [Unreleased]\n\n### Changed (breaking)\n\n"+
		"- `Cache` is no longer comparable.\n\n"+
		"## [0.3.0] - 2026-12-02\n")
	if c.breakNamed("0.3.0", libraryModule, msgs[0]) {
		t.Errorf("%q (names %q) passes, recorded by an entry that names only the type `Cache`", msgs[0], changedNames(msgs[0]))
	}
}

// A field or a method is named with its type, so that it records no other
// name: an entry recording the removal of the field Config.Budget records
// no removal of the type Budget, and one recording (*Budget).Close none of
// a package-level Close (a reviewer's find against the first fix, which
// noted every dotted suffix of an entry's name).
func TestAFieldsBreakRecordsNoPackageLevelNameOfItsName(t *testing.T) {
	c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n"+
		"- `Config.Budget`: pass `WithBudget`.\n"+
		"- `(*Budget).Close`: a budget holds nothing to close.\n\n"+
		"## [0.3.0] - 2026-12-02\n")
	if !c.breakNamed("0.3.0", libraryModule, "./otelretry.Config.Budget: removed") {
		t.Fatal("the recorded break is not recognised")
	}
	for _, msg := range []string{"./otelretry.Budget: removed", "./otelretry.Close: removed"} {
		if c.breakNamed("0.3.0", libraryModule, msg) {
			t.Errorf("%q (names %q) passes: the CHANGELOG records only `Config.Budget` and `(*Budget).Close`", msg, changedNames(msg))
		}
	}
}

// A method a type had from an embedded type ("./otelretry.(*E).M, method
// set of *T: removed", as apidiff writes it) is recorded by an entry that
// names it on either type.
func TestAMethodSetChangeIsNamedOnEitherType(t *testing.T) {
	msgs := moduleChangesOf(t,
		"package otelretry\ntype E struct{}\nfunc (*E) M() {}\ntype T struct{ *E }\n",
		"package otelretry\ntype E struct{}\nfunc (*E) M() {}\ntype T struct{}\n")
	var methodSet string
	for _, m := range msgs {
		if strings.Contains(m, "method set of") {
			methodSet = m
		}
	}
	if methodSet == "" {
		t.Fatalf("apidiff: %q, want a method set's change", msgs)
	}
	for entry, want := range map[string]bool{"`T.M`": true, "`(*E).M`": true, "`M`": false, "`T`": false} {
		c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n- "+entry+": gone.\n\n## [0.3.0] - 2026-12-02\n")
		if got := c.breakNamed("0.3.0", libraryModule, methodSet); got != want {
			t.Errorf("%q recorded by an entry naming %s: %v, want %v", methodSet, entry, got, want)
		}
	}
}
