// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package attrs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
)

// Each list function says it "lists every" value of its type (Decisions,
// ErrorClasses, Reasons, KeySources, HintProblems; the Outcomes are
// decisions, which TestClosedSets checks), and Valid
// reads that list: a constant declared in vocab.go but left out of its
// list would be invalid, and labelled _OTHER in the metrics.
func TestEveryDeclaredValueIsListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "vocab.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			typ, ok := vs.Type.(*ast.Ident)
			if !ok {
				continue
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					declared[typ.Name] = append(declared[typ.Name], s)
				}
			}
		}
	}
	listed := map[string][]string{
		"Decision":    valuesOf(attrs.Decisions()),
		"ErrorClass":  valuesOf(attrs.ErrorClasses()),
		"Reason":      valuesOf(attrs.Reasons()),
		"KeySource":   valuesOf(attrs.KeySources()),
		"HintProblem": valuesOf(attrs.HintProblems()),
	}
	for typ, list := range listed {
		if len(declared[typ]) == 0 {
			t.Errorf("vocab.go declares no %s constant", typ)
		}
		for _, v := range declared[typ] {
			if !slices.Contains(list, v) {
				t.Errorf("%s %q is declared in vocab.go but not listed (so not Valid)", typ, v)
			}
		}
	}
}
