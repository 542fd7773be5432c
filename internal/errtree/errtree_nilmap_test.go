// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package errtree_test

import (
	"testing"

	"github.com/otelretry/otelretry-go/internal/errtree"
)

type mapErr map[string]string

func (m mapErr) Error() string { return "map error" }

type funcErr func() string

func (f funcErr) Error() string { return "func error" }

// IsNil: a typed nil of every nilable kind is nil, a map's and a func's
// too; a non-nil one is not.
func TestIsNilOfEveryNilableKind(t *testing.T) {
	for name, err := range map[string]error{"map": mapErr(nil), "func": funcErr(nil)} {
		if !errtree.IsNil(err) {
			t.Errorf("IsNil(%s typed nil) = false", name)
		}
	}
	if errtree.IsNil(mapErr{}) || errtree.IsNil(funcErr(func() string { return "" })) {
		t.Error("IsNil of a non-nil map or func error = true")
	}
}
