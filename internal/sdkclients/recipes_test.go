// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package sdkclients

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// The recipes the tests run are the README's: every declaration of a
// *recipe.go file stands, to the letter, among the declarations of the
// README's snippets (internal/readmesnippets keeps those equal to
// README.md). Only imports and comments may differ.
func TestRecipesAreTheREADMEs(t *testing.T) {
	readme := map[string]string{}
	snippets, err := filepath.Glob("../readmesnippets/snippets/*.go")
	if err != nil || len(snippets) == 0 {
		t.Fatalf("no README snippets found (%v)", err)
	}
	for _, f := range snippets {
		for name, src := range declarations(t, f) {
			readme[name] = src
		}
	}
	recipes, _ := filepath.Glob("*recipe.go")
	if len(recipes) == 0 {
		t.Fatal("no recipe files")
	}
	for _, f := range recipes {
		for name, src := range declarations(t, f) {
			want, ok := readme[name]
			switch {
			case !ok:
				t.Errorf("%s: %s is in no README snippet", f, name)
			case want != src:
				t.Errorf("%s: %s differs from the README's:\n--- README\n%s\n--- %s\n%s", f, name, want, f, src)
			}
		}
	}
}

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
