// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"

	"golang.org/x/mod/module"
)

// An export-subst file that is the zip's first entry is refused as any
// other is: refuseSubstituted reads git check-attr's output from its first
// triple (path, attribute, value). The other tests' export-subst files all
// come after .gitattributes or LICENSE in the zip, so a loop that skipped
// the first triple passed them all. Two layouts put it first: a
// subdirectory module whose attributes are the repository root's (its
// .gitattributes is not in the module's zip), and a root file whose name
// sorts before ".gitattributes".
func TestAnExportSubstFileFirstInTheZipIsRefused(t *testing.T) {
	const format = "$Format:%H$\n"
	t.Run("subdir module", func(t *testing.T) {
		repo := taggedRepo(t, map[string]string{
			"LICENSE":        "license text\n",
			".gitattributes": "sub/VERSION export-subst\n",
			"sub/VERSION":    format,
			"sub/go.mod":     "module example.com/r/sub\n\ngo 1.26.0\n",
			"sub/s.go":       "package sub\n",
		})
		_, err := worktreeZip(repo, "sub", module.Version{Path: "example.com/r/sub", Version: "v0.3.0"})
		if err == nil || !strings.Contains(err.Error(), "sub/VERSION: export-subst") {
			t.Errorf("worktreeZip = %v, want sub/VERSION refused for its export-subst", err)
		}
	})
	t.Run("root module", func(t *testing.T) {
		repo := taggedRepo(t, rootModule(map[string]string{
			".gitattributes": "+version.txt export-subst\n",
			"+version.txt":   format,
		}))
		_, err := worktreeZip(repo, ".", module.Version{Path: "example.com/r", Version: "v0.3.0"})
		if err == nil || !strings.Contains(err.Error(), "+version.txt: export-subst") {
			t.Errorf("worktreeZip = %v, want +version.txt refused for its export-subst", err)
		}
	})
}
