// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
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
// link's directory for the checkout.
func TestEveryScriptFollowsALinkToFindItsCheckout(t *testing.T) {
	root := repoRoot(t)
	var scripts []string
	for _, pattern := range []string{"scripts/*.sh", "benchmarks/*.sh", ".ci/run"} {
		found, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, found...)
	}
	if len(scripts) < 10 {
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
