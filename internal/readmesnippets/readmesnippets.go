// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package readmesnippets

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Snippet is one ```go block of a Markdown file.
type Snippet struct {
	File    string // the Markdown file, from the repository's root ("README.md", "docs/sdk-recipes.md")
	Line    int    // the line of its first code line, from 1
	Section string // the heading it appears under
	Index   int    // its number within its section, from 1
	Code    string // its lines, without the fences
}

// Name names the snippet by its section, so that editing another section
// renames nothing: "wrap-an-existing-client-1"; a snippet of another file
// than README.md by its file too: "sdk-recipes-stripe-go-v82-1".
func (s Snippet) Name() string {
	var b strings.Builder
	dash := false
	name := s.Section
	if s.File != "" && s.File != "README.md" {
		name = strings.TrimSuffix(path.Base(s.File), ".md") + " " + name
	}
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	fmt.Fprintf(&b, "-%d", s.Index)
	return b.String()
}

// file is the snippet's Markdown file, README.md unless it names another.
func (s Snippet) file() string {
	if s.File == "" {
		return "README.md"
	}
	return s.File
}

// Program reports whether the snippet is a whole program: its first line
// of code is a package clause ("package main").
func (s Snippet) Program() bool {
	for _, l := range strings.Split(s.Code, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		return strings.HasPrefix(l, "package ")
	}
	return false
}

// GeneratedPath is where the snippet's generated file goes, under the
// snippets directory: "snippet_NAME.go" in package snippets, or, for a
// program, "program_NAME/main.go", a package main of its own.
func (s Snippet) GeneratedPath() string {
	name := strings.ReplaceAll(s.Name(), "-", "_")
	if s.Program() {
		return "program_" + name + "/main.go"
	}
	return "snippet_" + name + ".go"
}

// header is the start of every generated file: the license and the
// snippet it comes from.
func (s Snippet) header() string {
	return fmt.Sprintf("// Copyright The otelretry Authors\n// SPDX-License-Identifier: Apache-2.0\n\n"+
		"// Code generated from %s (section %q, snippet %d) by readmesnippets; DO NOT EDIT.\n\n", s.file(), s.Section, s.Index)
}

// WrapProgram returns the source of a snippet that is a whole program, as
// it stands, after the header: a reader pastes it into a main.go of its
// own, so it must be package main and complete, imports included.
func WrapProgram(s Snippet) ([]byte, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", s.Code, parser.PackageClauseOnly)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", s.file(), s.Line, err)
	}
	if f.Name.Name != "main" {
		return nil, fmt.Errorf("%s:%d: a snippet that is a whole file must be package main, not %s", s.file(), s.Line, f.Name.Name)
	}
	out, err := format.Source([]byte(s.header() + s.Code))
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", s.file(), s.Line, err)
	}
	return out, nil
}

// funcName is the function a snippet's statements go in.
func (s Snippet) funcName() string {
	var b strings.Builder
	b.WriteString("snippet")
	for _, w := range strings.Split(s.Name(), "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// Extract returns the ```go blocks of file, a Markdown document, in order.
func Extract(file string, markdown []byte) []Snippet {
	var (
		out     []Snippet
		cur     *Snippet
		code    strings.Builder
		line    int
		section string
		index   int
		indent  string // the fence's indentation (a block inside a list item)
	)
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(text, "#"):
			section, index = strings.TrimSpace(strings.TrimLeft(text, "#")), 0
		case cur == nil && strings.TrimSpace(text) == "```go":
			index++
			cur = &Snippet{File: file, Line: line + 1, Section: section, Index: index}
			code.Reset()
			indent = text[:len(text)-len(strings.TrimLeft(text, " "))]
		case cur != nil && strings.TrimSpace(text) == "```":
			cur.Code = code.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			code.WriteString(strings.TrimPrefix(text, indent))
			code.WriteByte('\n')
		}
	}
	return out
}

// knownImports are the import paths of the package names the snippets may
// use without importing them.
var knownImports = map[string]string{
	"context":       "context",
	"errors":        "errors",
	"fmt":           "fmt",
	"io":            "io",
	"slices":        "slices",
	"strings":       "strings",
	"time":          "time",
	"http":          "net/http",
	"otelretry":     "github.com/otelretry/otelretry-go/otelretry",
	"attrs":         "github.com/otelretry/otelretry-go/attrs",
	"api":           "github.com/prometheus/client_golang/api",
	"v1":            "github.com/prometheus/client_golang/api/prometheus/v1",
	"retryablehttp": "github.com/hashicorp/go-retryablehttp",
	"trace":         "go.opentelemetry.io/otel/trace",
	"otel":          "go.opentelemetry.io/otel",
	"propagation":   "go.opentelemetry.io/otel/propagation",
}

// AddImports lets callers name more packages the snippets use.
func AddImports(names map[string]string) {
	for name, path := range names {
		knownImports[name] = path
	}
}

var declStart = regexp.MustCompile(`^(func|type|var|const|import)\b`)

// Wrap turns a snippet into the source of a file of package pkg: its
// import declarations merged with the imports its code uses, its
// declarations at package level, its statements in a function of their
// own, named after the snippet (an expression alone becomes `var _ =
// expr`). Every name a statement declares is used once at the end, as a
// reader's code would go on to use it.
func Wrap(pkg string, s Snippet) ([]byte, error) {
	lines := strings.Split(strings.TrimRight(s.Code, "\n"), "\n")
	var imports, decls, stmts []string
	pending := []string{} // comment lines, attached to what follows
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "//") {
			pending = append(pending, l)
			continue
		}
		m := declStart.FindString(l)
		if m == "" {
			stmts = append(stmts, pending...)
			pending = pending[:0]
			stmts = append(stmts, l)
			continue
		}
		region := append(append([]string{}, pending...), l)
		pending = pending[:0]
		// The declaration goes on while its brackets are open.
		for depth := depthOf(l); depth > 0 && i+1 < len(lines); {
			i++
			region = append(region, lines[i])
			depth += depthOf(lines[i])
		}
		if m == "import" {
			imports = append(imports, region...)
		} else {
			decls = append(decls, region...)
			decls = append(decls, "")
		}
	}
	stmts = append(stmts, pending...)

	var body strings.Builder
	body.WriteString(s.header())
	fmt.Fprintf(&body, "package %s\n\n", pkg)
	body.WriteString("IMPORTS\n\n")
	body.WriteString(strings.Join(decls, "\n"))
	code := strings.TrimSpace(strings.Join(stmts, "\n"))
	switch {
	case code == "":
	case isExpr(code):
		fmt.Fprintf(&body, "\nvar _ = %s\n", code)
	default:
		used, err := declaredNames(code)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", s.file(), s.Line, err)
		}
		fmt.Fprintf(&body, "\nfunc %s() {\n%s\n", s.funcName(), code)
		for _, name := range used {
			fmt.Fprintf(&body, "\t_ = %s\n", name)
		}
		body.WriteString("}\n")
	}

	src := body.String()
	given, err := importSpecs(imports)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", s.file(), s.Line, err)
	}
	paths, err := usedImports(strings.Replace(src, "IMPORTS", "", 1), given)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", s.file(), s.Line, err)
	}
	var imp strings.Builder
	if len(paths) > 0 {
		imp.WriteString("import (\n")
		for _, p := range paths {
			imp.WriteString("\t" + p + "\n")
		}
		imp.WriteString(")")
	}
	out, err := format.Source([]byte(strings.Replace(src, "IMPORTS", imp.String(), 1)))
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", s.file(), s.Line, err)
	}
	return out, nil
}

// depthOf is how many brackets a line opens, less those it closes,
// outside string literals and comments.
func depthOf(line string) int {
	depth := 0
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote && (quote == '`' || i == 0 || line[i-1] != '\\') {
				quote = 0
			}
		case r == '"' || r == '`' || r == '\'':
			quote = r
		case r == '/' && strings.HasPrefix(line[i:], "//"):
			return depth
		case r == '{' || r == '(' || r == '[':
			depth++
		case r == '}' || r == ')' || r == ']':
			depth--
		}
	}
	return depth
}

func isExpr(code string) bool {
	_, err := parser.ParseExpr(code)
	return err == nil
}

// declaredNames are the names the top-level statements of code declare.
func declaredNames(code string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p\nfunc f() {\n"+code+"\n}\n", 0)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	add := func(id *ast.Ident) {
		if id.Name != "_" && !seen[id.Name] {
			seen[id.Name] = true
			names = append(names, id.Name)
		}
	}
	for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := st.Decl.(*ast.GenDecl); ok {
				for _, sp := range g.Specs {
					if vs, ok := sp.(*ast.ValueSpec); ok {
						for _, id := range vs.Names {
							add(id)
						}
					}
				}
			}
		}
	}
	return names, nil
}

// importSpecs parses a snippet's own import declarations: name → spec.
func importSpecs(lines []string) (map[string]string, error) {
	specs := map[string]string{}
	if len(lines) == 0 {
		return specs, nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+strings.Join(lines, "\n")+"\n", parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	for _, is := range f.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		name := assumedName(path)
		spec := is.Path.Value
		if is.Name != nil {
			name = is.Name.Name
			spec = is.Name.Name + " " + spec
		}
		specs[name] = spec
	}
	return specs, nil
}

var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

// assumedName is the package name an import path is assumed to give, as
// goimports assumes it: the last element, past a major version suffix
// ("/v8"), without a "go-" prefix, up to the first character that cannot
// be in a name ("github.com/minio/minio-go/v7" gives minio).
func assumedName(path string) string {
	elems := strings.Split(path, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && majorVersion.MatchString(name) {
		name = elems[len(elems)-2]
	}
	name = strings.TrimPrefix(name, "go-")
	if i := strings.IndexFunc(name, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}); i >= 0 {
		name = name[:i]
	}
	return name
}

// usedImports returns the import specs of the packages src names in
// selectors: the snippet's own imports first, then the known ones. Names
// src does not use are left out, so that the file compiles.
func usedImports(src string, given map[string]string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	var specs []string
	for name := range used {
		if spec, ok := given[name]; ok {
			specs = append(specs, spec)
		} else if path, ok := knownImports[name]; ok {
			specs = append(specs, strconv.Quote(path))
		}
	}
	sort.Strings(specs)
	return specs, nil
}
