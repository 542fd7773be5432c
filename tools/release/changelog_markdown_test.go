// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"testing"

	"golang.org/x/exp/apidiff"
)

// h2Verdict is apidiff's message for the removal of Verdict from the root
// package of the module classify/h2 (as TestAParagraphAfterTheListIsNotTheLastEntrys
// writes it).
const h2Verdict = "Verdict: removed"

// A fenced block after the list, not indented and after a blank line, ends
// the list as a paragraph does (CommonMark): it is no entry's. RELEASING.md:
// a break of another module is recorded "in an entry (a bullet ...) that
// also names the module's directory ... (a paragraph after the list is no
// entry's)". No entry names `Verdict`; the code block after
// the list, an example of the library, names Verdict too (a reviewer's
// find, as are the five tests below: the hand-made line reader they
// failed on is goldmark's CommonMark parser now).
func TestAFencedBlockAfterTheListIsNotTheLastEntrys(t *testing.T) {
	c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n"+
		"- `classify/h2`: `Evidence` is removed.\n\n"+
		"```go\nv := otelretry.Verdict{}\n```\n\n"+
		"## [0.3.0] - 2026-12-02\n")
	if c.breakNamed("0.3.0", libraryModule+"/classify/h2", h2Verdict) {
		t.Errorf("classify/h2's %q passes, though no entry names `Verdict` (only a code block after the list)", h2Verdict)
	}
}

// A numbered list's items are each an item of the list, as a bullet's
// are: CommonMark lets "2." start an item right after "1."'s line. Read
// as one entry, the library's `Verdict` (item 2) was read as classify/h2's
// (item 1's module).
func TestNumberedItemsAreNotOneEntry(t *testing.T) {
	c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n"+
		"1. `classify/h2`: `Evidence` is removed.\n"+
		"2. `Verdict` is removed.\n\n"+
		"## [0.3.0] - 2026-12-02\n")
	if c.breakNamed("0.3.0", libraryModule+"/classify/h2", h2Verdict) {
		t.Errorf("classify/h2's %q passes, though only the library's item names `Verdict`", h2Verdict)
	}
	msgs := moduleChangesOf(t, "package otelretry\ntype Verdict int\n", "package otelretry\n")
	if len(msgs) != 1 {
		t.Fatalf("apidiff: %q", msgs)
	}
	if !c.breakNamed("0.3.0", libraryModule, msgs[0]) {
		t.Errorf("the library's %q is refused, though item 2 (about the library) names `Verdict`", msgs[0])
	}
}

// An indented bullet after a paragraph that ends the list starts a new
// list (CommonMark: fewer than four spaces), not an item of the entry
// above the paragraph. Its entry is about the library; it was read as an
// item of classify/h2's entry.
// The same after a new subsection's heading, which ends every list.
func TestAnIndentedBulletAfterAParagraphIsNotAnItemOfTheEntryAbove(t *testing.T) {
	for _, between := range []string{"In the library:\n\n", "### Changed (breaking)\n\n"} {
		c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n"+
			"- `classify/h2`: `Evidence` is removed.\n\n"+
			between+
			"  - `Verdict` is removed.\n\n"+
			"## [0.3.0] - 2026-12-02\n")
		if c.breakNamed("0.3.0", libraryModule+"/classify/h2", h2Verdict) {
			t.Errorf("after %q: classify/h2's %q passes, though only the library's entry names `Verdict`", between, h2Verdict)
		}
	}
}

// A heading ends a list (CommonMark: an ATX heading interrupts a
// paragraph), and so does a bullet of another marker, "+ " (a new list):
// the text after either is not classify/h2's entry's.
func TestAHeadingOrAPlusBulletEndsTheEntry(t *testing.T) {
	for _, after := range []string{"#### The library\n`Verdict` is removed.\n", "+ `Verdict` is removed.\n"} {
		c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n"+
			"- `classify/h2`: `Evidence` is removed.\n"+after+"\n"+
			"## [0.3.0] - 2026-12-02\n")
		if c.breakNamed("0.3.0", libraryModule+"/classify/h2", h2Verdict) {
			t.Errorf("after %q: classify/h2's %q passes, though only the library's text names `Verdict`", after, h2Verdict)
		}
	}
}

// A code span opened by two backticks holds single ones (CommonMark):
// "“ `classify/h2` “" names the directory classify/h2 in code. It was
// read as two spans of a blank, and the recorded break refused.
func TestADoubleBacktickSpanNamesTheModulesDirectory(t *testing.T) {
	c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n"+
		"- `` `classify/h2` ``: `Verdict` is removed.\n\n"+
		"## [0.3.0] - 2026-12-02\n")
	if !c.breakNamed("0.3.0", libraryModule+"/classify/h2", h2Verdict) {
		t.Errorf("classify/h2's %q is refused, though its entry names `Verdict` and the directory in a code span", h2Verdict)
	}
}

// RELEASING.md: "a removed package by its path: one recorded break lets no
// other through". A break of another module is recorded only by an entry
// naming the module's directory; cmd/retryinspect's package htmlreport
// is named by its directory path. An entry recording the removal of
// htmlreport's Render recorded the removal of the whole package too; the
// directory records a package's removal only in an entry that writes
// nothing else in code.
func TestAnEntryAboutAPackagesNameRecordsNoRemovalOfThePackage(t *testing.T) {
	const mod = libraryModule + "/cmd/retryinspect"
	load := func(withPkg bool) *apidiff.Module {
		m := &apidiff.Module{Path: mod}
		if withPkg {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package htmlreport\nfunc Render() {}\n", 0)
			if err != nil {
				t.Fatal(err)
			}
			p, err := (&types.Config{}).Check(mod+"/htmlreport", fset, []*ast.File{f}, nil)
			if err != nil {
				t.Fatal(err)
			}
			m.Packages = append(m.Packages, p)
		}
		return m
	}
	var msg string
	for _, ch := range apidiff.ModuleChanges(load(true), load(false)).Changes {
		if !ch.Compatible {
			msg = ch.Message
		}
	}
	if msg == "" {
		t.Fatal("apidiff: no incompatible change")
	}
	c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n"+
		"- `cmd/retryinspect/htmlreport`: `Render` is removed; use `Write`.\n\n"+
		"## [0.3.0] - 2026-12-02\n")
	if !c.breakNamed("0.3.0", mod, "./htmlreport.Render: removed") {
		t.Fatal("the recorded break of Render is refused")
	}
	if c.breakNamed("0.3.0", mod, msg) {
		t.Errorf("%q passes, recorded only by an entry about htmlreport's `Render`", msg)
	}
}
