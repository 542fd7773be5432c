// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// CONTRIBUTING.md: "every .go file starts with the two-line license
// header", and scripts/test.sh --quick runs gofmt, the license headers,
// then go vet. A file whose first lines are not the header (the Copyright
// line missing, the SPDX line below the package clause) fails the license
// step, before go vet; one that starts with it passes it (a reviewer's
// find: the step looked for the SPDX line anywhere).
func TestTheLicenseStepWantsTheHeaderFirst(t *testing.T) {
	root := repoRoot(t)
	for name, src := range map[string]string{
		"spdx-after-package": "package a\n\n// SPDX-License-Identifier: Apache-2.0\n",
		"no-copyright-line":  "// SPDX-License-Identifier: Apache-2.0\n\npackage a\n",
		"header":             "// Copyright The otelretry Authors\n// SPDX-License-Identifier: Apache-2.0\n\npackage a\n",
	} {
		t.Run(name, func(t *testing.T) {
			repo := t.TempDir()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			copyTestCommand(t, root, repo)
			must(os.WriteFile(filepath.Join(repo, "a.go"), []byte(src), 0o644))
			for _, args := range [][]string{{"init", "-q"}, {"add", "."}} {
				cmd := exec.Command("git", args...)
				cmd.Dir = repo
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "scripts/test.sh", "--quick")
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
			out, _ := cmd.CombinedOutput()
			if passed := bytes.Contains(out, []byte("== go vet")); passed != (name == "header") {
				t.Errorf("scripts/test.sh --quick with a.go = %q: license step passed %v:\n%s", src, passed, out)
			}
		})
	}
}

// copyTestCommand copies the test command, scripts/test.sh, and the
// scripts it runs before its first step that a test may stub
// (trim-cache.sh) from the checkout root into the scratch repository repo.
func copyTestCommand(t *testing.T, root, repo string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(repo, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, script := range []string{"test.sh", "trim-cache.sh"} {
		b, err := os.ReadFile(filepath.Join(root, "scripts", script))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "scripts", script), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}
