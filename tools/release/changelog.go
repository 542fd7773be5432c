// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"golang.org/x/mod/semver"
)

// isRelease reports whether v is a release version X.Y.Z: no v prefix, no
// pre-release, no build metadata.
func isRelease(v string) bool {
	return semver.IsValid("v"+v) && semver.Canonical("v"+v) == "v"+v && semver.Prerelease("v"+v) == ""
}

// changelog is what the release tooling reads in CHANGELOG.md.
type changelog struct {
	// newest is the newest "## [X.Y.Z] - DATE" heading's version: what
	// otelretry.Version names (otelretry/version_test.go holds the two
	// together).
	newest string
	// breaking: the "## [Unreleased]" section has a subsection whose
	// heading says breaking ("### Changed (breaking)") or "### Removed".
	breaking bool
	// breakingEntries holds, for each section, its breaking subsections'
	// entries (list items, nested ones each their own, and blocks outside
	// lists), each as the names and the code spans it writes: a break of a
	// module other than the library's is recorded by an entry that names
	// the module's directory too.
	breakingEntries map[string][]entry
	// unreleasedAt is the line (from 0) of the "## [Unreleased]" heading,
	// which the release rule puts first; -1 for none.
	unreleasedAt int
}

// entry is one breaking entry: the names it records (entryNames of what it
// writes as code), and its code spans whole.
type entry struct {
	names map[string]bool
	spans []string
}

// namesDir reports whether the entry names a module's directory dir in
// one of its code spans.
func (e entry) namesDir(dir string) bool {
	return slices.ContainsFunc(e.spans, func(s string) bool { return strings.Contains(s, dir) })
}

// aboutOtherModule reports whether the entry is about a published module
// other than the library's: its first code span (its own, or that of the
// entry it is an item of) names that module's directory ("- `classify/h2`:
// `Evidence` ...", "- `classify/h2.Evidence` ..."). It records that module's break, not the library's of
// the same name; an entry about the library may name another module's
// directory further on.
func (e entry) aboutOtherModule() bool {
	return len(e.spans) > 0 && slices.ContainsFunc(published, func(dir string) bool {
		return dir != "." && strings.Contains(e.spans[0], dir) // `classify/h2`, `classify/h2.Evidence`, its module path
	})
}

// since reports whether a CHANGELOG section is newer than the baseline.
func since(section, baseline string) bool {
	return section == "Unreleased" || semver.Compare("v"+section, "v"+baseline) > 0
}

// breakNamed reports whether a breaking entry since the baseline records
// the incompatible change message of the module at modulePath: names its
// changed name (changedNames) in `code`, for a module other than the
// library's in an entry that names the module's directory in `code` too
// (`classify/h2`), for the library's in an entry not about another module
// (aboutOtherModule), and for a removed package its import path (or its
// directory, when that is a path) in `code`.
// A name alone, written for another module's break or in an example,
// records nothing else.
func (c changelog) breakNamed(baseline, modulePath, message string) bool {
	subject, _, _ := strings.Cut(message, ": ")
	removedPackage, isPackage := strings.CutPrefix(subject, "package ")
	dir, other := strings.CutPrefix(modulePath, libraryModule+"/")
	names := changedNames(message)
	recorded := func(e entry) bool { return slices.ContainsFunc(names, func(n string) bool { return e.names[n] }) }
	for section, entries := range c.breakingEntries {
		if !since(section, baseline) {
			continue
		}
		for _, e := range entries {
			switch {
			case isPackage:
				// Its import path, or its directory when that is a path
				// (`classify/h4`, not a bare word: `attrs` names much
				// else) in an entry that writes nothing else in code: an
				// entry about a break inside that package names its
				// directory too, and records no removal of it.
				rel, inRepo := strings.CutPrefix(removedPackage, libraryModule+"/")
				onlyDir := inRepo && strings.Contains(rel, "/") && len(e.spans) > 0 &&
					!slices.ContainsFunc(e.spans, func(s string) bool { return s != rel })
				if slices.Contains(e.spans, removedPackage) || onlyDir {
					return true
				}
			case recorded(e) && (other && e.namesDir(dir) || !other && !e.aboutOtherModule()):
				return true
			}
		}
	}
	return false
}

var (
	qualifiedName = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*`)
)

// entryNames returns the names each qualified name in code records: the
// name as written (without a receiver's pointer and parentheses or type
// parameters), and without its package when it starts with one (a
// lower-case first element): "(*Transport).Close" gives Transport.Close,
// "otelretry.Budget.Tokens" otelretry.Budget.Tokens and Budget.Tokens, and
// "Config.Budget" Config.Budget alone, no record of a type Budget.
func entryNames(code string) []string {
	code = strings.NewReplacer("(", "", ")", "", "*", "").Replace(withoutTypeParameters(code))
	var names []string
	for _, q := range qualifiedName.FindAllString(code, -1) {
		names = append(names, q)
		if pkg, rest, ok := strings.Cut(q, "."); ok && pkg[0] >= 'a' && pkg[0] <= 'z' {
			names = append(names, rest)
		}
	}
	return names
}

// isBreakingSubsection reports whether a "### " heading's title records
// incompatible changes: "Changed (breaking)" or "Removed" (RELEASING.md),
// not any title that holds the word ("Changed (non-breaking)").
func isBreakingSubsection(title string) bool {
	title = strings.ToLower(strings.TrimSpace(title))
	return title == "changed (breaking)" || title == "removed"
}

var (
	// sectionLine is a section heading's line: "## [Unreleased]",
	// "## [0.3.0] - 2026-12-02" (otelretry/version_test.go's reading).
	sectionLine    = regexp.MustCompile(`^## \[([^\]]*)\]`)
	releaseHeading = regexp.MustCompile(`^## \[([^\]]*)\] - (\d{4}-\d{2}-\d{2})$`)
)

// checkSection checks a "## [...]" heading against the rule
// (otelretry/version_test.go's TestReleasedVersionRule): "## [Unreleased]"
// first (once), undated, then "## [X.Y.Z] - YYYY-MM-DD" headings of
// releases, each older than the one above it; above is the section
// heading above it, "" for none, and older the version of the release
// heading above it, "" for none.
func checkSection(line, section, above, older string) error {
	if section == "Unreleased" {
		if line != "## [Unreleased]" || above != "" {
			return fmt.Errorf("CHANGELOG.md: %q: want \"## [Unreleased]\", undated, above every release", line)
		}
		return nil
	}
	m := releaseHeading.FindStringSubmatch(line)
	if m == nil || !isRelease(section) {
		return fmt.Errorf("CHANGELOG.md: %q: want \"## [X.Y.Z] - YYYY-MM-DD\"", line)
	}
	if _, err := time.Parse(time.DateOnly, m[2]); err != nil {
		return fmt.Errorf("CHANGELOG.md: %q: %v", line, err)
	}
	if older != "" && semver.Compare("v"+section, "v"+older) >= 0 {
		return fmt.Errorf("CHANGELOG.md: %q: not older than %s, the release above it", line, older)
	}
	return nil
}

func readChangelog(path string) (changelog, error) {
	f, err := os.Open(path)
	if err != nil {
		return changelog{}, err
	}
	defer f.Close()
	return parseChangelog(bufio.NewScanner(f))
}

// parseChangelog reads CHANGELOG.md as Markdown (goldmark, CommonMark): its
// "## [...]" sections, checked against the release rule, and in each
// section its breaking subsections' entries. An entry is a list item, of
// any list at the subsection's top level, bulleted or numbered; an item of
// an item is an entry of its own that sees the code spans of the top-level
// item it is in (its module), not its siblings'; a block outside any list
// (a paragraph, a code block, a heading) is an entry of its own.
func parseChangelog(sc *bufio.Scanner) (changelog, error) {
	var src []byte
	for sc.Scan() {
		src = append(append(src, sc.Bytes()...), '\n')
	}
	if err := sc.Err(); err != nil {
		return changelog{}, err
	}
	c := changelog{breakingEntries: map[string][]entry{}, unreleasedAt: -1}
	p := changelogParser{c: &c, src: src, sectionLines: map[int]bool{}}
	doc := goldmark.DefaultParser().Parse(text.NewReader(src))
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if err := p.block(n); err != nil {
			return c, err
		}
	}
	if err := p.checkSectionLines(); err != nil {
		return c, err
	}
	if c.newest == "" {
		return c, fmt.Errorf("CHANGELOG.md: no released version (\"## [X.Y.Z] - YYYY-MM-DD\")")
	}
	return c, nil
}

// changelogParser walks the CHANGELOG's top-level blocks in order.
type changelogParser struct {
	c          *changelog
	src        []byte
	section    string // the "## [...]" section the blocks are in
	older      string // the release heading last read
	inBreaking bool   // the blocks are in a breaking subsection
	// sectionLines are the lines (from 0) of the section headings read.
	sectionLines map[int]bool
}

// block reads one top-level block.
func (p *changelogParser) block(n gast.Node) error {
	if h, ok := n.(*gast.Heading); ok && h.Level <= 3 {
		return p.heading(h)
	}
	if !p.inBreaking {
		return nil
	}
	if list, ok := n.(*gast.List); ok {
		for item := list.FirstChild(); item != nil; item = item.NextSibling() {
			p.entry(item, nil)
		}
		return nil
	}
	p.entry(n, nil)
	return nil
}

// heading reads a section's ("## [...]") or a subsection's ("### ...")
// heading. Every level-2 heading is a section's, written as the release
// rule wants it ("## [Unreleased]", "## [X.Y.Z] - YYYY-MM-DD", nothing
// after): otelretry's version test reads such lines alone, so a heading
// CommonMark reads in another shape (indented, escaped, setext, a trailing
// space) is refused rather than read apart. A subsection is told by its
// text as read ("### **Removed**" is a Removed subsection).
func (p *changelogParser) heading(h *gast.Heading) error {
	if h.Level == 3 {
		p.inBreaking = isBreakingSubsection(p.readText(h))
		if p.inBreaking && p.section == "Unreleased" && p.c.newest == "" {
			p.c.breaking = true
		}
		return nil
	}
	if h.Level != 2 {
		return nil
	}
	line := p.headingLine(h)
	m := sectionLine.FindStringSubmatch(line)
	if m == nil {
		return fmt.Errorf("CHANGELOG.md: %q: a level-2 heading is a section's, \"## [Unreleased]\" or \"## [X.Y.Z] - YYYY-MM-DD\"", line)
	}
	if err := checkSection(line, m[1], p.section, p.older); err != nil {
		return err
	}
	at := bytes.Count(p.src[:p.start(h)], []byte{'\n'})
	p.sectionLines[at] = true
	p.section, p.inBreaking = m[1], false
	if p.section == "Unreleased" {
		p.c.unreleasedAt = at
	} else {
		p.older = p.section
		if p.c.newest == "" {
			p.c.newest = p.section
		}
	}
	return nil
}

// checkSectionLines refuses a "## [" line that is no section heading (in
// a fence, an HTML block, a list): otelretry's version test, which reads
// lines, would take it for one.
func (p *changelogParser) checkSectionLines() error {
	for i, line := range strings.Split(string(p.src), "\n") {
		if sectionLine.MatchString(line) && !p.sectionLines[i] {
			return fmt.Errorf("CHANGELOG.md: line %d: %q reads as a section heading to a line reader, but is inside a block: move it out or indent it", i+1, line)
		}
	}
	return nil
}

// entry records n (a list item, or a block outside any list) as an entry
// of the section, seeing the code spans top of the top-level item it is
// an item of (nil for a top-level one); the items of its lists are
// entries of their own.
func (p *changelogParser) entry(n gast.Node, top []string) {
	sec := p.c.breakingEntries[p.section]
	p.c.breakingEntries[p.section] = append(sec, entry{names: map[string]bool{}, spans: slices.Clone(top)})
	i := len(p.c.breakingEntries[p.section]) - 1
	var items []gast.Node
	gast.Walk(n, func(m gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		e := &p.c.breakingEntries[p.section][i]
		switch m := m.(type) {
		case *gast.List:
			if m != n {
				for item := m.FirstChild(); item != nil; item = item.NextSibling() {
					items = append(items, item)
				}
				return gast.WalkSkipChildren, nil
			}
		case *gast.CodeSpan:
			span := p.inlineText(m)
			for _, name := range entryNames(span) {
				e.names[name] = true
			}
			e.spans = append(e.spans, span)
			return gast.WalkSkipChildren, nil
		case *gast.FencedCodeBlock, *gast.CodeBlock:
			lines := m.Lines()
			for j := range lines.Len() {
				seg := lines.At(j)
				for _, name := range entryNames(string(seg.Value(p.src))) {
					e.names[name] = true
				}
			}
			return gast.WalkSkipChildren, nil
		}
		return gast.WalkContinue, nil
	})
	if top == nil {
		top = p.c.breakingEntries[p.section][i].spans
	}
	for _, item := range items {
		p.entry(item, top)
	}
}

// inlineText is the text an inline node holds (a code span's).
func (p *changelogParser) inlineText(n gast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*gast.Text); ok {
			b.Write(t.Segment.Value(p.src))
		} else {
			b.WriteString(p.inlineText(c))
		}
	}
	return b.String()
}

// start is the offset of a heading's text in the source.
func (p *changelogParser) start(h *gast.Heading) int {
	if lines := h.Lines(); lines.Len() > 0 {
		return lines.At(0).Start
	}
	return 0
}

// readText is a heading's text as CommonMark reads it: rendered by
// goldmark, its tags dropped and its character references resolved, so
// that escapes and references are read where they count and a code span's
// text is kept as written ("Changed \\(breaking\\)" and "&#82;emoved" read
// as Changed (breaking) and Removed; "\\&#82;emoved" and "`&#82;emoved`" as
// &#82;emoved).
func (p *changelogParser) readText(h *gast.Heading) string {
	var b bytes.Buffer
	if err := goldmark.DefaultRenderer().Render(&b, p.src, h); err != nil {
		return p.inlineText(h)
	}
	text := imageTag.ReplaceAllString(b.String(), "$1")
	return strings.TrimSpace(html.UnescapeString(htmlTag.ReplaceAllString(text, "")))
}

var (
	// imageTag is a rendered image, read as its alt text: CommonMark's
	// plain text of an image ("### ![Removed](x.png)" reads as Removed).
	imageTag = regexp.MustCompile(`<img [^>]*\balt="([^"]*)"[^>]*>`)
	// htmlTag is a tag of rendered HTML.
	htmlTag = regexp.MustCompile(`<[^>]*>`)
)

// headingLine is the line a heading's text is on, as written ("## [0.3.0]
// - 2026-12-02"; the text's own line for a setext heading).
func (p *changelogParser) headingLine(h *gast.Heading) string {
	start := p.start(h)
	begin := bytes.LastIndexByte(p.src[:start], '\n') + 1
	end := bytes.IndexByte(p.src[start:], '\n')
	if end < 0 {
		end = len(p.src) - start
	}
	return string(p.src[begin : start+end])
}

// nextVersion returns the version the API is headed for, as the CHANGELOG
// says, relative to the baseline's release: the newest release heading
// when it is newer than the baseline (a release in preparation, or one
// whose baseline was not taken yet); otherwise, between releases, the
// next breaking version (a new minor before 1.0, a new major after) when
// the [Unreleased] section has a breaking subsection, and the next patch
// when it has none.
func nextVersion(baseline string, c changelog) (next, why string, err error) {
	switch semver.Compare("v"+c.newest, "v"+baseline) {
	case 1:
		return c.newest, "the CHANGELOG's newest release", nil
	case -1:
		return "", "", fmt.Errorf("the API baseline is of %s, newer than the CHANGELOG's newest release %s", baseline, c.newest)
	}
	major, minor, patch := parts(baseline)
	switch {
	case !c.breaking:
		return major + "." + minor + "." + plusOne(patch), "[Unreleased] has no breaking subsection", nil
	case major == "0":
		return "0." + plusOne(minor) + ".0", "[Unreleased] has a breaking subsection", nil
	default:
		return plusOne(major) + ".0.0", "[Unreleased] has a breaking subsection", nil
	}
}

// breakingAllowed reports whether going from release from to release to
// may break the API: a new minor version before 1.0, a new major one from
// 1.0 on.
func breakingAllowed(from, to string) bool {
	if semver.Major("v"+from) == "v0" {
		return semver.Compare(semver.MajorMinor("v"+to), semver.MajorMinor("v"+from)) > 0
	}
	return semver.Compare(semver.Major("v"+to), semver.Major("v"+from)) > 0
}

// parts splits a release version X.Y.Z (checked by isRelease) into its
// numbers, kept as decimal text: semver bounds none of them, and neither
// does this tool.
func parts(v string) (major, minor, patch string) {
	f := strings.SplitN(v, ".", 3)
	if len(f) != 3 {
		return "0", "0", "0"
	}
	return f[0], f[1], f[2]
}

// plusOne returns the decimal number n (digits only, as isRelease
// checked) plus one, however many digits it has.
func plusOne(n string) string {
	d := []byte(n)
	for i := len(d) - 1; i >= 0; i-- {
		if d[i] < '9' {
			d[i]++
			return string(d)
		}
		d[i] = '0'
	}
	return "1" + string(d)
}

// libraryVersion returns the value of otelretry.Version, read from the
// source.
func libraryVersion(repo string) (string, error) {
	path := filepath.Join(repo, "otelretry", "version.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name != "Version" || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					return strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return "", fmt.Errorf("%s: no const Version = \"...\"", path)
}

var versionLine = regexp.MustCompile(`(?m)^const Version = "([^"]*)"$`)

// bump makes the edits of a release's version commit in repo: the
// CHANGELOG's [Unreleased] section becomes "## [X.Y.Z] - DATE" (day's
// date), under a new empty [Unreleased], and otelretry.Version becomes
// X.Y.Z. It refuses a version that is not newer than the CHANGELOG's
// newest release, a version that may not break the API when [Unreleased]
// has a breaking subsection, and a CHANGELOG or Version out of the state
// between releases; it writes nothing then.
func bump(repo, version string, day time.Time) error {
	if !isRelease(version) {
		return fmt.Errorf("%q is not a release version X.Y.Z", version)
	}
	changelogPath := filepath.Join(repo, "CHANGELOG.md")
	c, err := readChangelog(changelogPath)
	if err != nil {
		return err
	}
	if semver.Compare("v"+version, "v"+c.newest) <= 0 {
		return fmt.Errorf("%s is not newer than the CHANGELOG's newest release %s", version, c.newest)
	}
	if c.breaking && !breakingAllowed(c.newest, version) {
		// The version commit then holds its own baseline: no later check
		// compares the release with the one before.
		next, _, _ := nextVersion(c.newest, c)
		return fmt.Errorf("[Unreleased] has a breaking subsection: %s would break the API of %s in a patch release; the next version is %s", version, c.newest, next)
	}
	if v, err := libraryVersion(repo); err != nil {
		return err
	} else if v != c.newest {
		return fmt.Errorf("otelretry.Version is %s, the CHANGELOG's newest release %s: fix that first", v, c.newest)
	}
	data, err := os.ReadFile(changelogPath)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	unreleased := c.unreleasedAt
	if unreleased < 0 || unreleased >= len(lines) {
		return fmt.Errorf("%s: the first section is not \"## [Unreleased]\", whose changes the release takes", changelogPath)
	}
	eol := "\n"
	if strings.HasSuffix(lines[unreleased], "\r\n") {
		eol = "\r\n"
	}
	lines[unreleased] = "## [Unreleased]" + eol + eol + "## [" + version + "] - " + day.Format(time.DateOnly) + eol

	versionPath := filepath.Join(repo, "otelretry", "version.go")
	src, err := os.ReadFile(versionPath)
	if err != nil {
		return err
	}
	if n := len(versionLine.FindAllIndex(src, -1)); n != 1 {
		return fmt.Errorf("%s: %d lines `const Version = \"...\"`, want 1", versionPath, n)
	}
	src = versionLine.ReplaceAll(src, []byte(`const Version = "`+version+`"`))
	if err := os.WriteFile(changelogPath, []byte(strings.Join(lines, "")), 0o644); err != nil {
		return err
	}
	return os.WriteFile(versionPath, src, 0o644)
}
