// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The API baseline's export data must name no directory of the machine
// that made it (noMachinePaths): the tree, GOROOT, the temporary
// directory and HOME are each refused where they appear, and data naming
// none passes.
func TestExportDataNamingAMachineDirectoryIsRefused(t *testing.T) {
	tree := t.TempDir()
	home, _ := os.UserHomeDir()
	for name, dir := range map[string]string{
		"the tree": filepath.Join(tree, "otelretry"), "GOROOT": goEnv("GOROOT"),
		"the temporary directory": os.TempDir(), "HOME": home,
	} {
		if len(dir) <= 1 {
			continue // not set here
		}
		data := []byte("\x00pkg\x00" + dir + "/file.go\x00")
		if err := noMachinePaths(data, tree); err == nil {
			t.Errorf("export data naming %s (%s): no error", name, dir)
		}
	}
	if err := noMachinePaths([]byte("\x00pkg\x00github.com/otelretry/otelretry-go/otelretry/file.go\x00"), tree); err != nil {
		t.Errorf("export data naming no machine directory: %v", err)
	}
}
