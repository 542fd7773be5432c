// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// followLinks follows at most as many links as Linux (40): a chain of 40
// is written through, one of 41 is refused, as the kernel's open would.
func TestWritableTargetFollowsFortyLinksAndNoMore(t *testing.T) {
	dir := t.TempDir()
	prev := "target"
	for i := 1; i <= 41; i++ {
		name := fmt.Sprintf("l%02d", i)
		if err := os.Symlink(prev, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		prev = name
	}
	if err := writableTarget(filepath.Join(dir, "l40")); err != nil {
		t.Errorf("40 links: %v", err)
	}
	if err := writableTarget(filepath.Join(dir, "l41")); err == nil {
		t.Error("41 links: taken, want too many links")
	}
	if _, err := os.OpenFile(filepath.Join(dir, "l41"), os.O_WRONLY|os.O_CREATE, 0o666); err == nil {
		t.Log("note: the kernel opened 41 links")
	}
}
