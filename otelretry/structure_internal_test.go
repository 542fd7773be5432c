// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// The attempt and the operation hold at most 15 fields each: state that
// belongs together lives in a struct of its own (wire, identity, clock,
// requestPolicy, progress, opTelemetry), so that no single record grows
// flags for every concern again.
func TestAttemptAndOperationStayNarrow(t *testing.T) {
	fset := token.NewFileSet()
	for file, name := range map[string]string{"attempt.go": "attempt", "operation.go": "operation"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != name {
				return true
			}
			found = true
			fields := 0
			for _, f := range ts.Type.(*ast.StructType).Fields.List {
				fields += max(len(f.Names), 1)
			}
			if fields > 15 {
				t.Errorf("%s has %d fields, want at most 15", name, fields)
			}
			return false
		})
		if !found {
			t.Errorf("type %s not found in %s", name, file)
		}
	}
}
