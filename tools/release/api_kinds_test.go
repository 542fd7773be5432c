// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
)

// recordedBy reports whether the only incompatible apidiff message
// containing want (between oldSrc and newSrc, package otelretry) is
// recorded by a "### Changed (breaking)" entry text.
func recordedBy(t *testing.T, oldSrc, newSrc, want, entryText string) (string, bool) {
	t.Helper()
	var msg string
	for _, m := range moduleChangesOf(t, "package otelretry\n"+oldSrc, "package otelretry\n"+newSrc) {
		if strings.Contains(m, want) {
			msg = m
		}
	}
	if msg == "" {
		t.Fatalf("apidiff: no message containing %q", want)
	}
	c := parseWithIntro(t, "## [Unreleased]\n\n### Changed (breaking)\n\n- "+entryText+"\n\n## [0.3.0] - 2026-12-02\n")
	return msg, c.breakNamed("0.3.0", libraryModule, msg)
}

// RELEASING.md: a method is named "with its type ..., a generic type's
// without its type parameters". A generic interface whose constraint holds
// brackets (S ~[]E, as in package slices) gets a method: apidiff writes
// "./otelretry.G[S ~[]E, E any].N: added", and `G.N` records it (a
// reviewer's find: the brackets inside the constraint cut the name).
func TestAGenericTypesMethodWithBracketsInItsConstraintIsNamed(t *testing.T) {
	msg, ok := recordedBy(t,
		"type G[S ~[]E, E any] interface{ M(S) }\n",
		"type G[S ~[]E, E any] interface{ M(S); N() }\n",
		".N: added", "`G.N`: a new method every implementation must have.")
	if !ok {
		t.Errorf("%q (names %q) is not recorded by an entry naming `G.N`", msg, changedNames(msg))
	}
}

// RELEASING.md: "a method a type had from an embedded one on either
// type". T embedded *E[map[string]int]; apidiff writes
// "./otelretry.(*E[map[string]int]).M, method set of *T: removed", and
// `(*E).M` records it as `T.M` does (a reviewer's find).
func TestAMethodFromAnEmbeddedInstantiatedGenericIsNamedOnIt(t *testing.T) {
	for _, arg := range []string{"map[string]int", "[]int"} {
		msg, ok := recordedBy(t,
			"type E[K any] struct{}\nfunc (*E[K]) M() {}\ntype T struct{ *E["+arg+"] }\n",
			"type E[K any] struct{}\nfunc (*E[K]) M() {}\ntype T struct{}\n",
			"method set of", "`(*E).M` is no longer a method of `*T`.")
		if !ok {
			t.Errorf("%q (names %q) is not recorded by an entry naming `(*E).M`", msg, changedNames(msg))
		}
	}
}

// Each kind of incompatible change, from a real apidiff run, is recorded by
// an entry naming it as RELEASING.md says, and not by entries naming other
// things (a reviewer's run, held).
func TestEachKindOfBreakIsRecordedByItsNameAlone(t *testing.T) {
	cases := []struct{ old, new, want, wrong string }{
		{"const (\nA = 1\nB = 2\n)\n", "const (\nA = 1\n)\n", "`otelretry.B`", "`A`"},
		{"var V int\n", "var V string\n", "`V`", "`T.V`"},
		{"type I interface{ M(); N() }\n", "type I interface{ M() }\n", "`I.N`", "`N`"},
		{"type I interface{ M() }\n", "type I interface{ M(); N() }\n", "`I.N`", "`I`"},
		{"type S struct{ F int }\n", "type S struct{ F string }\n", "`S.F`", "`F`"},
		{"type E struct{}\nfunc (E) M() {}\ntype S struct{ E }\n", "type E struct{}\nfunc (E) M() {}\ntype S struct{}\n", "`S.M`", "`E`"},
		{"func F[T any](T) {}\n", "func F[T comparable](T) {}\n", "`F`", "`T`"},
		{"type A = int\n", "type A = string\n", "`A`", "`otelretry.B`"},
		{"type T struct{}\nfunc (T) M() {}\n", "type T struct{}\nfunc (*T) M() {}\n", "`(*T).M`", "`M`"},
		{"type G[T any] interface{ M(T) }\n", "type G[T any] interface{ M(T); N() }\n", "`G[T].N`", "`G`"},
	}
	for _, k := range cases {
		msgs := moduleChangesOf(t, "package otelretry\n"+k.old, "package otelretry\n"+k.new)
		if len(msgs) == 0 {
			t.Fatalf("no message for %q", k.new)
		}
		for _, msg := range msgs[:1] {
			for entry, want := range map[string]bool{k.want: true, k.wrong: false, "`classify/h2`: " + k.want: false} {
				c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n- "+entry+": gone.\n\n## [0.3.0] - 2026-12-02\n")
				if got := c.breakNamed("0.3.0", libraryModule, msg); got != want {
					t.Errorf("%q by %s: %v, want %v", msg, entry, got, want)
				}
			}
		}
	}
}

// An un-indented paragraph after a blank line ends a Markdown list: it is
// not part of the entry above it. RELEASING.md: a break of another module
// is recorded "in an entry (a bullet ...) that also names the module's
// directory". Here no entry names both `classify/h2` and `Verdict` (a
// reviewer's find: the paragraph was read as the last entry's).
func TestAParagraphAfterTheListIsNotTheLastEntrys(t *testing.T) {
	c := parseWithIntro(t, "## [Unreleased]\n\n### Removed\n\n"+
		"- `classify/h3`: `Verdict` is removed.\n\n"+
		"The module `classify/h2` keeps its API.\n\n"+
		"## [0.3.0] - 2026-12-02\n")
	if c.breakNamed("0.3.0", libraryModule+"/classify/h2", "Verdict: removed") {
		t.Error("classify/h2's Verdict: removed passes, though only classify/h3's entry names `Verdict`")
	}
}
