// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The -html page a run created is removed when the -o report then fails
// to be written (here /dev/full: the open succeeds, the write fails with
// ENOSPC): a failed run leaves no report it made (the first fix left it:
// a reviewer's find).
func TestAFailedTextWriteLeavesNoHTMLPage(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	html := filepath.Join(dir, "report.html")
	var stdout, stderr bytes.Buffer
	code := run([]string{"-html", html, "-o", "/dev/full", "testdata/logs/capture-spans.json"}, &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitError, stderr.String())
	}
	if fi, err := os.Stat(html); err == nil {
		t.Errorf("exit %d (%q), yet the -html page %s the run created was left behind (%d bytes)", code, stderr.String(), html, fi.Size())
	}
}

// -html names a dangling symlink (the user's) whose target the run
// creates; -o then cannot be opened. The run removes the file it made, not
// the user's link (the first fix removed the link: a reviewer's find).
func TestAFailedRunRemovesWhatItMadeThroughALinkNotTheLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.html")
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"-html", link, "-o", filepath.Join(dir, "missing-dir", "r.txt"), "testdata/logs/capture-spans.json"}, &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitError, stderr.String())
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("the user's symlink %s was removed by the failed run: %v", link, err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("the file %s the failed run created (through the link) was left behind", target)
	}
}

// retryinspect -html - -o FILE | head: the page's write to the closed pipe
// ends the process (SIGPIPE), and no -o FILE is made before the page is
// out (the first fix opened it first, and left it empty: a reviewer's
// find).
func TestABrokenPipeLeavesNoEmptyReport(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.txt")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader went away
	defer w.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperMain$")
	cmd.Env = append(os.Environ(), "RETRYINSPECT_TEST_ARGS="+strings.Join([]string{"-html", "-", "-o", out, "testdata/logs/capture-spans.json"}, "\x1f"))
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if err == nil {
		t.Fatalf("the run succeeded writing to a closed pipe")
	}
	if fi, statErr := os.Stat(out); statErr == nil {
		t.Errorf("run ended (%v), yet it left the -o report %s it created, %d bytes", err, out, fi.Size())
	}
}
