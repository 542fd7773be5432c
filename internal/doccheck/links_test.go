// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// readmeMaxLines is the README's bound: a newcomer's page, with the rest
// in docs/ (issue 37).
const readmeMaxLines = 300

func TestREADMEFitsOnAPage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a page of docs/ and link it", n, readmeMaxLines)
	}
}

// pages are the Markdown files whose relative links must resolve, from the
// repository's root.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	out := []string{"README.md", "CONTRIBUTING.md", "RELEASING.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

func TestRelativeLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{} // page → its anchors
	anchorsOf := func(page string) (map[string]bool, error) {
		if a, ok := anchors[page]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			return nil, err
		}
		anchors[page] = Anchors(b)
		return anchors[page], nil
	}
	checked := 0
	for _, page := range pages(t) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range Links(b) {
			if l.External() {
				continue
			}
			checked++
			target, frag, err := l.Resolve(page)
			if err != nil {
				t.Errorf("%s:%d: %s: %v", page, l.Line, l.Target, err)
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
				t.Errorf("%s:%d: %s: no such file %s", page, l.Line, l.Target, target)
				continue
			}
			if frag == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			a, err := anchorsOf(target)
			if err != nil {
				t.Fatal(err)
			}
			if !a[frag] {
				t.Errorf("%s:%d: %s: no heading of %s has the anchor #%s", page, l.Line, l.Target, target, frag)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: is the link parser broken?")
	}
	t.Logf("%d relative links checked", checked)
}

// Link is one inline link or image of a Markdown page.
type Link struct {
	Line   int
	Target string
}

// External reports whether the link leaves the repository (a URL with a
// scheme, or mail).
func (l Link) External() bool {
	u, err := url.Parse(l.Target)
	return err == nil && u.Scheme != ""
}

// Resolve returns the file the link names, from the repository's root, and
// its anchor; a link to "#anchor" names its own page.
func (l Link) Resolve(page string) (file, anchor string, err error) {
	u, err := url.Parse(l.Target)
	if err != nil {
		return "", "", err
	}
	anchor = u.Fragment
	if u.Path == "" {
		return page, anchor, nil
	}
	file = path.Clean(path.Join(path.Dir(page), u.Path))
	if file == ".." || strings.HasPrefix(file, "../") {
		return "", "", fmt.Errorf("leaves the repository")
	}
	return file, anchor, nil
}

// inlineLink matches [text](target) and ![alt](target), with an optional
// title; the text may hold code spans and one level of brackets.
var inlineLink = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^\s()<>]+)>?(?:\s+"[^"]*")?\s*\)`)

// codeSpan matches an inline code span, whose text is not Markdown.
var codeSpan = regexp.MustCompile("`+[^`]*`+")

// Links returns the inline links of a Markdown page, outside fenced code
// blocks and code spans; a link's text may wrap onto the next lines.
func Links(markdown []byte) []Link {
	var text strings.Builder
	last := 0
	eachLine(markdown, func(n int, line string) {
		for ; last < n-1; last++ {
			text.WriteByte('\n') // a code block's lines, kept for the count
		}
		text.WriteString(line)
		text.WriteByte('\n')
		last = n
	})
	prose := codeSpan.ReplaceAllStringFunc(text.String(), func(code string) string {
		return strings.Repeat("\n", strings.Count(code, "\n"))
	})
	var out []Link
	for _, m := range inlineLink.FindAllStringSubmatchIndex(prose, -1) {
		out = append(out, Link{Line: 1 + strings.Count(prose[:m[0]], "\n"), Target: prose[m[2]:m[3]]})
	}
	return out
}

// Anchors returns the anchors GitHub gives a page's headings: Slug of
// each, "-1", "-2", ... appended to the second and later of one slug.
func Anchors(markdown []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	eachLine(markdown, func(_ int, text string) {
		h, ok := heading(text)
		if !ok {
			return
		}
		s := Slug(h)
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	})
	return out
}

// heading returns an ATX heading's text ("## Title" gives "Title").
func heading(line string) (string, bool) {
	trimmed := strings.TrimLeft(line, "#")
	level := len(line) - len(trimmed)
	if level < 1 || level > 6 || (trimmed != "" && trimmed[0] != ' ' && trimmed[0] != '\t') {
		return "", false
	}
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(trimmed), "#")), true
}

// linkText reduces a heading's links to their text, as GitHub renders them.
var linkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// Slug is the anchor GitHub gives a heading: its rendered text in lower
// case, without punctuation but hyphens and underscores, each space a
// hyphen.
func Slug(heading string) string {
	text := linkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// eachLine calls f with every line of a Markdown page outside fenced code
// blocks, numbered from 1.
func eachLine(markdown []byte, f func(n int, text string)) {
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fence := ""
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		f(n, text)
	}
}

// The anchors the pages linked to before this test existed, as GitHub
// rendered them.
func TestSlugIsGitHubs(t *testing.T) {
	for h, want := range map[string]string{
		"Unknown writes: `check_state`":                        "unknown-writes-check_state",
		"Below the transport: net/http's own resends":          "below-the-transport-nethttps-own-resends",
		"HTTP/2 and HTTP/3: the protocol's knowledge boundary": "http2-and-http3-the-protocols-knowledge-boundary",
		"Logs: VictoriaLogs":                                   "logs-victorialogs",
		"azcore v1.24 (every Azure SDK client)":                "azcore-v124-every-azure-sdk-client",
		"See [the table](decisions.md) first":                  "see-the-table-first",
	} {
		if got := Slug(h); got != want {
			t.Errorf("Slug(%q) = %q, want %q", h, got, want)
		}
	}
}

func TestAnchorsNumberRepeatedHeadings(t *testing.T) {
	a := Anchors([]byte("# A\n## Notes\n```\n## Not a heading\n```\n### Notes\n#hashtag\n"))
	for _, want := range []string{"a", "notes", "notes-1"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] || a["hashtag"] {
		t.Errorf("a code block's line or a #word made an anchor: %v", a)
	}
}

func TestLinksSkipCode(t *testing.T) {
	md := []byte("See [a](a.md#x), ![pic](docs/p.png \"title\") and [`code` text](b.md).\n" +
		"`[not](a link)`\n```\n[not](either)\n```\n[web](https://example.com) and [a text\nthat wraps](c.md#y), `code that\nwraps [not](d.md)`\n")
	var got []string
	for _, l := range Links(md) {
		got = append(got, fmt.Sprintf("%d %s %v", l.Line, l.Target, l.External()))
	}
	want := []string{"1 a.md#x false", "1 docs/p.png false", "1 b.md false", "6 https://example.com true", "6 c.md#y false"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Links = %q, want %q", got, want)
	}
}

func TestResolveStaysInTheRepository(t *testing.T) {
	for _, c := range []struct{ page, target, file, anchor string }{
		{"README.md", "docs/budget.md#the-host-table", "docs/budget.md", "the-host-table"},
		{"docs/layers.md", "../README.md#use-it", "README.md", "use-it"},
		{"docs/layers.md", "#redirects", "docs/layers.md", "redirects"},
	} {
		file, anchor, err := Link{Target: c.target}.Resolve(c.page)
		if err != nil || file != c.file || anchor != c.anchor {
			t.Errorf("%s → %s: %q %q %v, want %q %q", c.page, c.target, file, anchor, err, c.file, c.anchor)
		}
	}
	if _, _, err := (Link{Target: "../../etc/passwd"}).Resolve("docs/x.md"); err == nil {
		t.Error("a link out of the repository resolved")
	}
}
