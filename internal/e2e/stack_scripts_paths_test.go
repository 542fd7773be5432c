// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A run directory whose path holds a space (OTELRETRY_RUN_DIR, or a HOME or
// OTELRETRY_CACHE with one): scripts/e2e.sh sources the env file that `up`
// writes ("source it before the e2e test"), under set -e, and must get
// OTELRETRY_STACK_LOGS = RUN/logs (a reviewer's find: the value was
// written unquoted, and the source failed).
func TestStackEnvFileWithASpaceInTheRunDir(t *testing.T) {
	run := filepath.Join(t.TempDir(), "stack run")
	s := newFakeStack(t, "OTELRETRY_RUN_DIR="+run)
	checkout := stackCheckout(t)
	t.Cleanup(func() { s.stack(t, checkout, "down") })
	if out, err := s.stack(t, checkout, "up"); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	pidsIn(t, run)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c",
		`set -euo pipefail; source "$(bash "$1" env)"; printf '%s' "$OTELRETRY_STACK_LOGS"`,
		"sh", filepath.Join(checkout, "scripts", "stack.sh"))
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != filepath.Join(run, "logs") {
		t.Errorf("source \"$(scripts/stack.sh env)\" under set -e with run dir %q: err %v, OTELRETRY_STACK_LOGS/output %q, want %q",
			run, err, out, filepath.Join(run, "logs"))
	}
}

// The usage text (any unknown command: the header of the script) printed
// when the script is run by a relative path from a directory other than
// the checkout's root, as a newcomer in scripts/ or in a subdirectory would
// (a reviewer's find: it read its header by a path relative to where it
// was started, after it had changed to the checkout).
func TestStackUsageFromASubdirectory(t *testing.T) {
	checkout := stackCheckout(t)
	if err := os.MkdirAll(filepath.Join(checkout, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, script string }{
		{checkout, "scripts/stack.sh"},                           // control
		{filepath.Join(checkout, "docs"), "../scripts/stack.sh"}, // a subdirectory
		{filepath.Join(checkout, "scripts"), "./stack.sh"},       // scripts/
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, "bash", c.script, "help")
		cmd.Dir = c.dir
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, _ := cmd.CombinedOutput()
		cancel()
		if !strings.Contains(string(out), "Usage: scripts/stack.sh") {
			t.Errorf("cd %s && bash %s help: no usage text; output:\n%s", strings.TrimPrefix(c.dir, checkout), c.script, out)
		}
	}
}

// The script reached through a symbolic link (one in a directory on the
// PATH) is its checkout's: `status` through the link reads the stack `up`
// started from the checkout (a reviewer's remark: the link's own directory
// was taken for the checkout, and its run directory with it).
func TestStackThroughASymlinkIsTheCheckouts(t *testing.T) {
	s := newFakeStack(t)
	checkout := stackCheckout(t)
	t.Cleanup(func() { s.stack(t, checkout, "down") })
	s.up(t, checkout)
	link := filepath.Join(t.TempDir(), "bin", "stack.sh")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(checkout, "scripts", "stack.sh"), link); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", link, "status")
	cmd.Dir, cmd.Env = t.TempDir(), s.env
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "collector  running") {
		t.Errorf("status through a link to the checkout's stack.sh:\n%s", out)
	}
}
