// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package readmesnippets

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite snippets/ from README.md and docs/*.md")

// generated returns the files the snippets of README.md and docs/*.md
// give: path under snippets/ → source.
func generated(t *testing.T) map[string][]byte {
	t.Helper()
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, p := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		name, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		name = filepath.ToSlash(name)
		markdown, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		snippets := Extract(name, markdown)
		if len(snippets) == 0 && name == "README.md" {
			t.Fatal("no ```go blocks in README.md")
		}
		for _, s := range snippets {
			wrap := func(s Snippet) ([]byte, error) { return Wrap("snippets", s) }
			if s.Program() {
				wrap = WrapProgram
			}
			src, err := wrap(s)
			if err != nil {
				t.Fatalf("%s:%d: %v", name, s.Line, err)
			}
			file := s.GeneratedPath()
			if _, dup := files[file]; dup {
				t.Fatalf("%s:%d: a second snippet named %s", name, s.Line, file)
			}
			files[file] = src
		}
	}
	return files
}

// TestSnippetsUpToDate fails when snippets/ is not what README.md and
// docs/*.md give: run it with -update after editing a snippet. The
// module's go vet and go build then check the snippets themselves.
func TestSnippetsUpToDate(t *testing.T) {
	want := generated(t)
	old, _ := filepath.Glob(filepath.Join("snippets", "snippet_*.go"))
	programs, _ := filepath.Glob(filepath.Join("snippets", "program_*", "main.go"))
	old = append(old, programs...)
	if *update {
		for _, f := range old {
			os.Remove(f)
			os.Remove(filepath.Dir(f)) // a program's directory, once empty
		}
		for name, src := range want {
			p := filepath.Join("snippets", filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for _, f := range old {
		rel, _ := filepath.Rel("snippets", f)
		if _, ok := want[filepath.ToSlash(rel)]; !ok {
			t.Errorf("%s: no such snippet in README.md or docs/ any more; run go test -run TestSnippetsUpToDate -update", f)
		}
	}
	for name, src := range want {
		got, err := os.ReadFile(filepath.Join("snippets", filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("snippets/%s is not its Markdown's snippet; run go test -run TestSnippetsUpToDate -update", name)
		}
	}
}

// TestSnippetsCompile builds and vets package snippets and the programs
// beside it, so that a broken snippet fails this module's tests, not only
// its go vet.
func TestSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the packages")
	}
	for _, args := range [][]string{{"build", "-o", os.DevNull, "./snippets/..."}, {"vet", "./snippets/..."}} {
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func TestWrapExpression(t *testing.T) {
	src, err := Wrap("p", Snippet{Line: 1, Section: "S", Index: 1, Code: "otelretry.WithMaxAttempts(3)\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(src, []byte("var _ = otelretry.WithMaxAttempts(3)")) || !bytes.Contains(src, []byte(`"github.com/otelretry/otelretry-go/otelretry"`)) {
		t.Errorf("got\n%s", src)
	}
}

func TestWrapStatementsAndDeclarations(t *testing.T) {
	code := "client := &http.Client{}\n\n// T is a type.\ntype T struct{}\n\nfunc f() {\n\t_ = time.Second\n}\n"
	src, err := Wrap("p", Snippet{Line: 1, Section: "Two words", Index: 2, Code: code})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"func snippetTwoWords2() {", "_ = client", "// T is a type.\ntype T struct{}", `"net/http"`, `"time"`} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("no %q in\n%s", want, src)
		}
	}
}

func TestAssumedName(t *testing.T) {
	for path, want := range map[string]string{
		"net/http":                                "http",
		"github.com/elastic/go-elasticsearch/v8":  "elasticsearch",
		"github.com/minio/minio-go/v7":            "minio",
		"github.com/hashicorp/vault/api":          "api",
		"github.com/aws/aws-sdk-go-v2/service/s3": "s3",
		"github.com/hashicorp/go-retryablehttp":   "retryablehttp",
		"gopkg.in/yaml.v3":                        "yaml",
		"github.com/aws/aws-sdk-go-v2/aws":        "aws",
		"github.com/otelretry/otelretry-go/attrs": "attrs",
	} {
		if got := assumedName(path); got != want {
			t.Errorf("assumedName(%q) = %q, want %q", path, got, want)
		}
	}
}

// A snippet of a page under docs/ is named by its page as well, so that
// its file and function cannot meet a README section's of the same name,
// and its generated file names its page; README.md's keep their names.
func TestSnippetOfADocsPage(t *testing.T) {
	md := []byte("# SDK recipes\n\n## stripe-go v82\n\n```go\nvar x = 1\n```\n")
	snippets := Extract("docs/sdk-recipes.md", md)
	if len(snippets) != 1 {
		t.Fatalf("%d snippets, want 1", len(snippets))
	}
	s := snippets[0]
	if got := s.Name(); got != "sdk-recipes-stripe-go-v82-1" {
		t.Errorf("Name() = %q", got)
	}
	src, err := Wrap("p", s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(src, []byte(`generated from docs/sdk-recipes.md (section "stripe-go v82", snippet 1)`)) {
		t.Errorf("got\n%s", src)
	}
	if got := Extract("README.md", md)[0].Name(); got != "stripe-go-v82-1" {
		t.Errorf("README.md's Name() = %q", got)
	}
}

// A snippet that is a whole program stays whole: its own package main,
// with its own imports, under the header; any other package is refused.
func TestWrapProgram(t *testing.T) {
	md := []byte("## Use it\n\n```go\npackage main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(1) }\n```\n")
	s := Extract("README.md", md)[0]
	if !s.Program() {
		t.Fatal("a package main snippet is not a Program")
	}
	if got := s.GeneratedPath(); got != "program_use_it_1/main.go" {
		t.Errorf("GeneratedPath() = %q", got)
	}
	src, err := WrapProgram(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"// SPDX-License-Identifier: Apache-2.0\n", `generated from README.md (section "Use it", snippet 1)`, "package main\n\nimport \"fmt\"\n\nfunc main() {"} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("no %q in\n%s", want, src)
		}
	}
	if (Snippet{Code: "// a comment\nx := 1\n"}).Program() {
		t.Error("statements are a Program")
	}
	if _, err := WrapProgram(Snippet{File: "README.md", Line: 3, Code: "package lib\n"}); err == nil {
		t.Error("a package lib snippet was wrapped as a program")
	}
}
