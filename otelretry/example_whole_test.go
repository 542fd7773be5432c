// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// Every example of the package reads whole where pkg.go.dev shows it: go/doc
// gives it a playable program (its body plus the helpers of its file it
// uses). An example whose body calls a helper that go/doc cannot carry
// along (the helper uses a declaration of another file) is shown as a body
// that calls a function the reader cannot see, with no Run button. The
// (A reviewer's find: two examples called a helper that used another
// file's declaration.)
func TestExamplesReadWhole(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "otelretry_test" {
			files = append(files, f)
		}
	}
	for _, ex := range doc.Examples(files...) {
		if ex.Play == nil {
			t.Errorf("Example%s (%s): no playable program; pkg.go.dev shows only its body, which calls helpers the reader cannot see",
				ex.Name, fset.Position(ex.Code.Pos()).Filename)
		}
		if body, ok := ex.Code.(*ast.BlockStmt); ok && ex.Play == nil {
			ast.Inspect(body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if id, ok := c.Fun.(*ast.Ident); ok && !builtin[id.Name] {
						t.Logf("  Example%s calls %s, declared outside the example", ex.Name, id.Name)
					}
				}
				return true
			})
		}
	}
}

var builtin = map[string]bool{"len": true, "cap": true, "make": true, "new": true, "append": true, "copy": true,
	"panic": true, "close": true, "delete": true, "min": true, "max": true, "clear": true, "string": true, "int": true, "byte": true}
