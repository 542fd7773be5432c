// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The recipes the tests run are the docs': every declaration of a
// *recipe.go file stands, to the letter, among the declarations of the
// Go snippets of README.md and docs/*.md (internal/readmesnippets
// keeps those equal to the Markdown, one file per snippet). Only imports
// and comments may differ.
func TestRecipesAreTheDocs(t *testing.T) {
	type snippetDecl struct{ src, from string }
	docs := map[string]snippetDecl{}
	snippets, err := filepath.Glob("../readmesnippets/snippets/snippet_*.go")
	if err != nil || len(snippets) == 0 {
		t.Fatalf("no snippets found (%v)", err)
	}
	pages := map[string]int{}
	for _, f := range snippets {
		from := generatedFrom(t, f)
		pages[from]++
		for name, src := range declarations(t, f) {
			docs[name] = snippetDecl{src, from}
		}
	}
	if pages["docs/sdk-recipes.md"] == 0 {
		t.Fatalf("no snippet of docs/sdk-recipes.md among %v", pages)
	}
	recipes, _ := filepath.Glob("*recipe.go")
	if len(recipes) == 0 {
		t.Fatal("no recipe files")
	}
	for _, f := range recipes {
		for name, src := range declarations(t, f) {
			want, ok := docs[name]
			switch {
			case !ok:
				t.Errorf("%s: %s is in no snippet of README.md or docs/", f, name)
			case want.src != src:
				t.Errorf("%s: %s differs from %s's:\n--- %s\n%s\n--- %s\n%s", f, name, want.from, want.from, want.src, f, src)
			}
		}
	}
}

// generatedFrom is the Markdown file a generated snippet file names.
func generatedFrom(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := generatedHeader.FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no generated-from header", path)
	}
	return string(m[1])
}

var generatedHeader = regexp.MustCompile(`(?m)^// Code generated from (\S+) \(section`)

// declarations returns the top-level declarations of a Go file other than
// imports, printed without comments, by name (a method by its receiver's
// type and name).
func declarations(t *testing.T, path string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0) // no comments
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		var name string
		switch d := d.(type) {
		case *ast.FuncDecl:
			name = d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				var b bytes.Buffer
				format.Node(&b, fset, d.Recv.List[0].Type)
				name = b.String() + "." + name
			}
		case *ast.GenDecl:
			if d.Tok == token.IMPORT || len(d.Specs) == 0 {
				continue
			}
			switch s := d.Specs[0].(type) {
			case *ast.TypeSpec:
				name = s.Name.Name
			case *ast.ValueSpec:
				name = s.Names[0].Name
			}
		}
		var b bytes.Buffer
		if err := format.Node(&b, fset, d); err != nil {
			t.Fatal(err)
		}
		out[name] = b.String()
	}
	return out
}
