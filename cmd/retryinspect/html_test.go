// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// The HTML report is checked in a real browser by the module in htmltest;
// these tests cover the command line and the page's text.

// TestHTMLFile: -html FILE writes the page and leaves stdout and the exit
// status as they are without it, with the text report or --json.
func TestHTMLFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		code int
	}{{"clean-read", exitClean}, {"unsafe-resend", exitFindings}} {
		spans := stdoutFile(t, caseNamed(t, tc.name).roots...)
		for _, mode := range [][]string{nil, {"-json"}} {
			page := filepath.Join(t.TempDir(), "report.html")
			code, out, errOut := run3(append([]string{spans}, mode...))
			codeHTML, outHTML, errHTML := run3(append([]string{spans, "-html", page}, mode...))
			if code != tc.code || codeHTML != code || outHTML != out || errOut != "" || errHTML != "" {
				t.Errorf("%s %v: exit %d and %d (want %d), stderr %q %q, stdout equal %v",
					tc.name, mode, code, codeHTML, tc.code, errOut, errHTML, outHTML == out)
			}
			doc, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(doc, []byte("<!DOCTYPE html>")) || !bytes.Contains(doc, []byte("from <code>"+spans+"</code>")) {
				t.Errorf("%s: the page does not start as one or does not name its input:\n%.400s", tc.name, doc)
			}
		}
	}
}

// TestHTMLStdout: -html - writes the page instead of the text report,
// with the same exit status.
func TestHTMLStdout(t *testing.T) {
	spans := stdoutFile(t, caseNamed(t, "unsafe-resend").roots...)
	code, out, errOut := run3([]string{spans, "-html", "-"})
	if code != exitFindings || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"<!DOCTYPE html>", `data-code="unsafe-resend"`, "op-post-timeout", "</html>\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	if strings.Contains(out, "findings: 1") {
		t.Error("stdout holds the text report too")
	}
}

// TestHTMLUsage: the flag's misuses and an unwritable file exit 2.
func TestHTMLUsage(t *testing.T) {
	spans := stdoutFile(t, readTimeline())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{spans, "-html", ""}, "the -html file name is empty"},
		{[]string{spans, "-html", "-", "-json"}, "-html - and -json both write to stdout"},
		{[]string{spans, "-html", filepath.Join(t.TempDir(), "no", "such", "dir.html")}, "writing the HTML report: "},
	} {
		code, out, errOut := run3(tc.args)
		if code != exitError || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestHTMLSameWords: the page shows the text report's first line and every
// finding and note in the words of the text report. (The attempt tables
// are laid out by the text report's own code.)
func TestHTMLSameWords(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			spans := stdoutFile(t, tc.roots...)
			_, text, _ := run3([]string{spans})
			_, page, _ := run3([]string{spans, "-html", "-"})
			unescaped := html.UnescapeString(page)
			for line := range strings.Lines(text) {
				line = strings.TrimSpace(line)
				var want string
				switch {
				case strings.HasPrefix(line, "["): // [code] where
					want = line[strings.Index(line, "]")+2:]
				case strings.HasPrefix(line, "seen:"), strings.HasPrefix(line, "check:"):
					want = strings.TrimSpace(line[strings.Index(line, ":")+1:])
				case strings.HasPrefix(line, "retryinspect: "):
					want = strings.TrimPrefix(line, "retryinspect: ")
				default:
					continue
				}
				if !strings.Contains(unescaped, want) {
					t.Errorf("the page lacks %q of the text report", want)
				}
			}
		})
	}
}

// TestFindingOperations: a finding names the operations its text names,
// for the page's links.
func TestFindingOperations(t *testing.T) {
	var buf bytes.Buffer
	if err := tracefixture.WriteStdout(&buf, false, outerLayerResends()...); err != nil {
		t.Fatal(err)
	}
	spans, err := read.Stdout(&buf, "in", read.DefaultMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	r := inspect.Analyze(spans)
	var got [][]string
	for _, f := range r.Findings {
		var ids []string
		for _, i := range f.Operations() {
			ids = append(ids, r.Operations[i].ID)
		}
		got = append(got, ids)
	}
	want := [][]string{{"op-o2", "op-o1"}, {"op-pay", "op-pay"}, {"op-marked"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("the findings name operations %q, want %q", got, want)
	}
}

// TestOuterLayerResendAcrossTraces: an operation marked as a repeat names
// the earlier operation of its id wherever it is in the input, here in
// another trace, and never calls it "not in the input".
func TestOuterLayerResendAcrossTraces(t *testing.T) {
	var buf bytes.Buffer
	if err := tracefixture.WriteStdout(&buf, false, outerLayerLoop()...); err != nil {
		t.Fatal(err)
	}
	spans, err := read.Stdout(&buf, "in", read.DefaultMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	r := inspect.Analyze(spans)
	if len(r.Findings) != 1 || r.Findings[0].Code != inspect.CodeOuterLayerResend {
		t.Fatalf("findings %+v, want one outer-layer-resend", r.Findings)
	}
	f := r.Findings[0]
	earlier := r.Operations[0]
	if strings.Contains(f.Seen, "not in the input") || !strings.Contains(f.Seen, "repeats operation \"op-loop\" (trace "+earlier.TraceID+", span "+earlier.SpanID) {
		t.Errorf("the finding does not name the earlier operation in trace %s: %s", earlier.TraceID, f.Seen)
	}
	var ops []string
	for _, i := range f.Operations() {
		ops = append(ops, r.Operations[i].SpanID)
	}
	if want := []string{r.Operations[1].SpanID, earlier.SpanID}; !slices.Equal(ops, want) {
		t.Errorf("the finding links the operations %v, want %v", ops, want)
	}
}

// TestHeadlinesCountEachFindingOnce: a finding that names two operations
// of one dependency (an outer-layer-resend names the operation and the
// one it repeats) counts once in that dependency's headline, so that the
// headlines, the page's figure, the text report and the JSON report give
// one count.
func TestHeadlinesCountEachFindingOnce(t *testing.T) {
	spans := stdoutFile(t, outerLayerResends()...)
	_, text, _ := run3([]string{spans})
	_, doc, _ := run3([]string{spans, "-json"})
	_, page, _ := run3([]string{spans, "-html", "-"})
	var r struct{ Findings []json.RawMessage }
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatal(err)
	}
	const want = 3 // two outer-layer-resend, each naming two operations, and a repeat alone
	if len(r.Findings) != want || !strings.Contains(text, fmt.Sprintf("\nfindings: %d\n", want)) {
		t.Fatalf("JSON has %d findings, text %q; want %d", len(r.Findings), text, want)
	}
	if card := fmt.Sprintf(`<div class="v">%d</div><div class="l">findings</div>`, want); !strings.Contains(page, card) {
		t.Errorf("the page's figure is not %d findings", want)
	}
	inHeadlines := 0
	for _, m := range regexp.MustCompile(`data-role="headline">(.*?)</li>`).FindAllStringSubmatch(page, -1) {
		if n := regexp.MustCompile(`; (\d+) findings?`).FindStringSubmatch(html.UnescapeString(m[1])); n != nil {
			k, _ := strconv.Atoi(n[1])
			inHeadlines += k
		}
	}
	if inHeadlines != want {
		t.Errorf("the headlines count %d findings, want %d:\n%s", inHeadlines, want, page[strings.Index(page, `id="answer"`):strings.Index(page, `<div class="cards">`)])
	}
}
