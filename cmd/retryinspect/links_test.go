package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
