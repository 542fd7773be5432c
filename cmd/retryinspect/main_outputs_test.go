// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestAFailedRunLeavesNoReport: a run that exits 2 because the -o
// report cannot be written must not leave the -html report behind as if
// the run had succeeded (nothing is written on failure).
func TestAFailedRunLeavesNoReport(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "report.html")
	out := filepath.Join(dir, "missing-dir", "report.txt")
	var stdout, stderr bytes.Buffer
	code := run([]string{"-html", html, "-o", out, "testdata/logs/capture-spans.json"}, &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitError, stderr.String())
	}
	if _, err := os.Stat(html); err == nil {
		t.Errorf("exit %d (%q), yet the -html report %s was written and left behind", code, stderr.String(), html)
	}
}

// TestOutputsUntouchedOnAnInputError: -o and -html stay untouched when
// the input cannot be read (held).
func TestOutputsUntouchedOnAnInputError(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "report.html")
	out := filepath.Join(dir, "report.txt")
	if err := os.WriteFile(out, []byte("previous"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{dir, filepath.Join(dir, "nope.json")} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"-html", html, "-o", out, in}, &stdout, &stderr); code != exitError {
			t.Fatalf("%s: exit %d, want 2", in, code)
		}
		if b, _ := os.ReadFile(out); string(b) != "previous" {
			t.Errorf("%s: -o changed to %q", in, b)
		}
		if _, err := os.Stat(html); err == nil {
			t.Errorf("%s: -html written", in)
		}
	}
}

// An existing -o file is left as it was when the -html report cannot be
// opened: the outputs are truncated only once both are open.
func TestAnExistingReportIsKeptWhenTheOtherOutputFails(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.txt")
	if err := os.WriteFile(out, []byte("previous"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-html", filepath.Join(dir, "missing-dir", "r.html"), "-o", out, "testdata/logs/capture-spans.json"}, &stdout, &stderr); code != exitError {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitError, stderr.String())
	}
	if b, _ := os.ReadFile(out); string(b) != "previous" {
		t.Errorf("-o changed to %q", b)
	}
}

// The mirror of TestAnExistingReportIsKeptWhenTheOtherOutputFails: -html
// names an existing page, -o cannot be created. The failed run keeps the
// existing page as it was: the report's file is tried first (the page was
// replaced: a reviewer's find).
func TestAnExistingPageIsKeptWhenTheReportCannotBeMade(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "report.html")
	if err := os.WriteFile(html, []byte("previous"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"-html", html, "-o", filepath.Join(dir, "missing-dir", "r.txt"), "testdata/logs/capture-spans.json"}, &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitError, stderr.String())
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatalf("the existing -html page was removed by the failed run: %v", err)
	}
	if string(b) != "previous" {
		t.Errorf("exit %d, yet the existing -html page was changed to %d bytes (%.40q...)", code, len(b), b)
	}
}

// A report that opens but cannot be written (/dev/full: a full disk)
// fails the run after the page was written; the existing page stays as it
// was, as every existing output is put in place only when all are written
// (it was replaced: a reviewer's find).
func TestAnExistingPageIsKeptWhenTheReportFailsAsItIsWritten(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "report.html")
	if err := os.WriteFile(html, []byte("previous"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"-html", html, "-o", "/dev/full", "testdata/logs/capture-spans.json"}, &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitError, stderr.String())
	}
	if b, _ := os.ReadFile(html); string(b) != "previous" {
		t.Errorf("exit %d (%q), yet the existing -html page was changed to %d bytes", code, stderr.String(), len(b))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d entries after the failed run, want the page alone", len(entries))
	}
}

// An existing report is replaced whole on success: through a link, the
// file it points at gets the new report and keeps its permissions, and
// the link stays a link.
func TestAnExistingReportIsReplacedThroughItsLink(t *testing.T) {
	dir := t.TempDir()
	file, link := filepath.Join(dir, "report.txt"), filepath.Join(dir, "latest.txt")
	if err := os.WriteFile(file, []byte("previous"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o640); err != nil { // past the umask
		t.Fatal(err)
	}
	if err := os.Symlink("report.txt", link); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-o", link, "testdata/logs/capture-spans.json"}, &stdout, &stderr); code == exitError {
		t.Fatalf("exit 2: %s", stderr.String())
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is no longer a link: %v", err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("the report's permissions are %v, want its own 0640", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(file); len(b) == 0 || string(b) == "previous" {
		t.Errorf("the report holds %q, want the new report", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the directory holds %d entries, want the report and its link", len(entries))
	}
}
