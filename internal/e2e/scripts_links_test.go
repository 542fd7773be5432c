// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A script reached through a symbolic link finds its own checkout, as
// stack.sh does: release-tool.sh linked from a directory of its own lists
// the checkout's modules (it took the link's directory for the checkout,
// and failed in it, before).
func TestAScriptThroughASymlinkFindsItsCheckout(t *testing.T) {
	root := repoRoot(t)
	link := filepath.Join(t.TempDir(), "bin", "release-tool.sh")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "scripts", "release-tool.sh"), link); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", link, "modules")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "github.com/otelretry/otelretry-go") {
		t.Errorf("release-tool.sh modules through a link: %v\n%s", err, out)
	}
}

// Every script finds its checkout the same way, following a link to it;
// a script that goes by the directory its name was given in would take a
// link's directory for the checkout. Every shell script of the repository
// is read, wherever it sits (a reviewer's find: one under a testdata
// directory was missed by a list of the scripts' directories).
func TestEveryScriptFollowsALinkToFindItsCheckout(t *testing.T) {
	root := repoRoot(t)
	scripts := []string{filepath.Join(root, ".ci", "run")}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".sh"):
			scripts = append(scripts, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) < 15 {
		t.Fatalf("found %d scripts; the layout changed", len(scripts))
	}
	byName := regexp.MustCompile(`dirname "\$0"`)
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if byName.Match(b) {
			t.Errorf(`%s: finds its checkout by dirname "$0", which a link to it defeats; use dirname "$(readlink -f "$0")"`, strings.TrimPrefix(s, root+"/"))
		}
	}
}
