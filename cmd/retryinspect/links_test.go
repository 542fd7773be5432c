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

// TestOutputsThroughALinkToANewFileAreRefused: -html and -o that reach one file
// not written yet through a link (a dangling symlink to the other output,
// or a linked directory) are refused with exit 2, as the docs promise
// "however spelled (./, a link)". Before, both were written, the second
// replacing the first, and the run exited as if all went well.
func TestOutputsThroughALinkToANewFileAreRefused(t *testing.T) {
	spans := stdoutFile(t, caseNamed(t, "unsafe-resend").roots...)
	for _, how := range []string{"dangling symlink to the -html file", "symlinked directory"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			html := filepath.Join(dir, "report.html")
			var out string
			switch how {
			case "dangling symlink to the -html file":
				out = filepath.Join(dir, "report.txt")
				if err := os.Symlink(html, out); err != nil {
					t.Fatal(err)
				}
			default:
				if err := os.Symlink(dir, filepath.Join(dir, "same")); err != nil {
					t.Fatal(err)
				}
				out = filepath.Join(dir, "same", "report.html")
			}
			code, _, errOut := run3([]string{spans, "-html", html, "-o", out})
			page, _ := os.ReadFile(html)
			if code != exitError || !strings.Contains(errOut, "name the same file") {
				t.Errorf("-html %s -o %s: exit %d, stderr %q; want exit 2 and \"-html and -o name the same file\"; the HTML file now starts %.60q",
					html, out, code, errOut, page)
			}
		})
	}
}

// TestTheSameInputFileTwiceIsRefused: one file given twice (under another spelling:
// a symlink, "./", as a shell glob over a directory with a link gives it)
// is one input read twice, not a pipeline that delivered every span twice.
// Before, the command compared outputs with inputs, but not
// inputs with each other: the file's clean run (exit 0, no finding)
// became exit 1 with a duplicate-request-id finding per attempt whose
// advice blamed "exporter or pipeline retries".
func TestTheSameInputFileTwiceIsRefused(t *testing.T) {
	spans := stdoutFile(t, caseNamed(t, "clean").roots...)
	if code, out, _ := run3([]string{spans}); code != exitClean {
		t.Fatalf("the file alone: exit %d\n%s", code, out)
	}
	link := filepath.Join(t.TempDir(), "link.json")
	if err := os.Symlink(spans, link); err != nil {
		t.Fatal(err)
	}
	for _, second := range []string{link, filepath.Dir(spans) + "/./" + filepath.Base(spans)} {
		code, out, errOut := run3([]string{spans, second})
		if code != exitClean && code != exitError || strings.Contains(out, "[duplicate-request-id]") {
			i := strings.Index(out, "findings:")
			t.Errorf("%s given twice (as %s): exit %d, stderr %q; want it refused (2) or read once (0), not findings:\n%.400s",
				filepath.Base(spans), second, code, errOut, out[max(i, 0):])
		}
	}
}

// TestHelperMain is the command, run in a child process by runAlone
// (with its own stdin and stdout, which run3 cannot give it).
func TestHelperMain(t *testing.T) {
	args := os.Getenv("RETRYINSPECT_TEST_ARGS")
	if args == "" {
		t.Skip("helper")
	}
	os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// runAlone runs the command as its own process, stdin from the file stdin
// ("" for none), and returns its exit code, stdout and stderr.
func runAlone(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperMain$")
	cmd.Env = append(os.Environ(), "RETRYINSPECT_TEST_ARGS="+strings.Join(args, "\x1f"))
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v: hung", args)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// docs/retryinspect.md: "An output (-o, -html) that names an input or the
// other output, and an input named twice, however spelled (./, a link,
// ...), are refused with exit 2 before anything is read or written".
// /dev/stdout is a link to the standard output the other output writes to.
func TestHTMLToDevStdoutWithTheReportOnStdoutIsRefused(t *testing.T) {
	spans := stdoutFile(t, caseNamed(t, "clean").roots...)
	code, _, errOut := runAlone(t, "", spans, "-html", "-", "-json")
	t.Logf("-html - -json: exit %d, %q", code, strings.TrimSpace(errOut))
	for _, args := range [][]string{
		{spans, "-html", "/dev/stdout", "-json"},
		{spans, "-html", "/dev/stdout"},
		{spans, "-html", "-", "-o", "/dev/stdout"},
	} {
		code, out, errOut := runAlone(t, "", args...)
		if code != exitError {
			t.Errorf("%v: exit %d, stderr %q; want exit 2. stdout holds the HTML page (%v) and the text/JSON report (%v) together:\n%.120q ... %.200q",
				args[1:], code, errOut, strings.Contains(out, "<html") || strings.Contains(out, "<!DOCTYPE"),
				strings.Contains(out, "findings") || strings.HasPrefix(strings.TrimSpace(out), "{") || strings.Contains(out, "}\n"), out, out[max(0, len(out)-200):])
		}
	}
}

// An input named twice: "-" (stdin) and /dev/stdin, or "-" and the file
// stdin is redirected from. The clean trace alone exits 0.
func TestStdinNamedTwiceIsRefused(t *testing.T) {
	spans := stdoutFile(t, caseNamed(t, "clean").roots...)
	if code, _, errOut := runAlone(t, spans, "-"); code != exitClean {
		t.Fatalf("alone: exit %d %s", code, errOut)
	}
	for _, args := range [][]string{{"-", "/dev/stdin"}, {"-", "/proc/self/fd/0"}, {"-", "/proc/thread-self/fd/0"}, {"-", spans}} {
		code, out, errOut := runAlone(t, spans, args...)
		if code != exitClean && code != exitError || strings.Contains(out, "[duplicate-request-id]") {
			i := strings.Index(out, "findings:")
			t.Errorf("%v < %s: exit %d, stderr %q; want refused (2) or read once (0):\n%.300s", args, filepath.Base(spans), code, errOut, out[max(i, 0):])
		}
	}
}

// Links that the kernel resolves before "..", an output not written yet.
func TestOutputsThroughALinkedDirAndDotDotAreRefused(t *testing.T) {
	spans := stdoutFile(t, caseNamed(t, "unsafe-resend").roots...)
	base := t.TempDir()
	real := filepath.Join(base, "real", "sub")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	os.MkdirAll(work, 0o755)
	ld := filepath.Join(work, "ld")
	if err := os.Symlink(real, ld); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(base, "real", "report.html") // what work/ld/../report.html is
	out := ld + "/../report.html"
	code, _, errOut := run3([]string{spans, "-html", html, "-o", out})
	page, _ := os.ReadFile(html)
	if code != exitError {
		t.Errorf("-html %s -o %s (one file): exit %d, stderr %q; want exit 2; the HTML file now starts %.60q", html, out, code, errOut, page)
	}
}

// Loops and directories: a clear message and exit 2, no hang, no crash.
func TestLoopsAndDirectoriesAreRefused(t *testing.T) {
	spans := stdoutFile(t, caseNamed(t, "clean").roots...)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Symlink(b, a)
	os.Symlink(a, b)
	self := filepath.Join(dir, "self")
	os.Symlink("self", self)
	for _, args := range [][]string{
		{a}, {spans, a}, {spans, "-o", a}, {spans, "-html", a}, {spans, "-o", a, "-html", b}, {spans, "-o", self, "-html", self},
		{spans, "-o", dir}, {spans, "-html", dir}, {dir}, {spans, "-o", dir, "-html", dir},
	} {
		code, _, errOut := runAlone(t, "", args...)
		t.Logf("%v: exit %d, %q", args[1:], code, strings.TrimSpace(errOut))
		if code != exitError || strings.Contains(errOut, "panic") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// An output over the file stdin is read from ("-", /dev/stdin): refused,
// the trace kept.
func TestOutputOverTheFileStdinIsReadFromIsRefused(t *testing.T) {
	for _, c := range []struct {
		in   string
		flag string
	}{{"-", "-html"}, {"-", "-o"}, {"/dev/stdin", "-html"}} {
		t.Run(c.in+" "+c.flag, func(t *testing.T) {
			spans := stdoutFile(t, caseNamed(t, "clean").roots...)
			before, err := os.ReadFile(spans)
			if err != nil {
				t.Fatal(err)
			}
			code, _, errOut := runAlone(t, spans, c.in, c.flag, spans)
			after, _ := os.ReadFile(spans)
			if code != exitError {
				t.Errorf("%s %s %s < %s: exit %d, stderr %q; want exit 2. The trace file changed: %v, now starts %.60q",
					c.in, c.flag, spans, spans, code, strings.TrimSpace(errOut), !bytes.Equal(before, after), after)
			}
		})
	}
}

// /dev/stdout as an output while stdout is appended to the input: refused,
// the trace kept (an output is created anew, truncated).
func TestDevStdoutOverTheInputIsRefused(t *testing.T) {
	for _, args := range [][]string{{"-o", "/dev/stdout"}, {"-html", "/dev/stdout", "-o", "report.txt"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			spans := stdoutFile(t, caseNamed(t, "clean").roots...)
			before, _ := os.ReadFile(spans)
			for i, a := range args {
				if a == "report.txt" {
					args[i] = filepath.Join(t.TempDir(), a)
				}
			}
			f, err := os.OpenFile(spans, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperMain$")
			cmd.Env = append(os.Environ(), "RETRYINSPECT_TEST_ARGS="+strings.Join(append([]string{spans}, args...), "\x1f"))
			var errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = f, &errOut
			err = cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(spans)
			if code != exitError {
				t.Errorf("in.json %v >> in.json: exit %d, stderr %q; want exit 2. The trace was %d bytes, now %d, starting %.80q",
					args, code, strings.TrimSpace(errOut.String()), len(before), len(after), after)
			}
		})
	}
}

// docs/retryinspect.md: "An output (-o, -html) that names an input or the
// other output ... however spelled (./, a link, ..., /dev/stdout or
// /dev/stdin for -), are refused with exit 2". -html /dev/stdout beside the
// report on stdout is refused (TestHTMLToDevStdoutWithTheReportOnStdoutIsRefused);
// so is the same stream under another spelling, or through a link.
func TestStdoutSpelledOtherwiseBesideTheReportIsRefused(t *testing.T) {
	spans := stdoutFile(t, caseNamed(t, "clean").roots...)
	link := filepath.Join(t.TempDir(), "page.html")
	if err := os.Symlink("/dev/stdout", link); err != nil {
		t.Fatal(err)
	}
	for _, html := range []string{"/dev/stdout", "/dev/./stdout", "//dev/stdout", link} {
		t.Run(html, func(t *testing.T) {
			code, out, errOut := runAlone(t, "", spans, "-html", html)
			if code != exitError {
				t.Errorf("-html %s with the report on stdout (a pipe): exit %d, stderr %q; want exit 2. stdout holds the page: %v and the text report: %v (%d bytes)",
					html, code, strings.TrimSpace(errOut), strings.Contains(out, "<html") || strings.Contains(out, "<!DOCTYPE"), strings.Contains(out, "operation"), len(out))
			}
		})
	}
}
