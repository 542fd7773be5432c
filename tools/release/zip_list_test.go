// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// writeProxy appends each version to @v/list once: a second run for the
// same version leaves the list as it was.
func TestAppendListWritesAVersionOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "list")
	for _, v := range []string{"v0.2.0", "v0.3.0", "v0.3.0", "v0.2.0"} {
		if err := appendList(file, v); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), "v0.2.0\nv0.3.0\n"; got != want {
		t.Errorf("list = %q, want %q", got, want)
	}
}
