// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package readmesnippets

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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
		args = slices.Insert(args, 1, buildFlags...)
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

// TestREADMEProgramSendsTraceContext runs the README's program against a
// server on 127.0.0.1 (its target set at link time) and checks that it
// does what the README's picture shows: the server receives the W3C trace
// context of the attempt span that called it (otelretry, like otelhttp,
// injects through the global propagator, which the program sets), and the
// program's spans, in spans.json, hold that attempt span.
func TestREADMEProgramSendsTraceContext(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the README's program")
	}
	markdown, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(Extract("README.md", markdown), Snippet.Program)
	if i < 0 {
		t.Fatal("README.md has no program")
	}
	program := Extract("README.md", markdown)[i]

	var mu sync.Mutex
	var traceparents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		traceparents = append(traceparents, r.Header.Get("traceparent"))
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"order-42"}`)
	}))
	defer srv.Close()

	dir := t.TempDir()
	bin := filepath.Join(dir, "program")
	args := append(append([]string{"build"}, buildFlags...), "-o", bin, "-ldflags=-X=main.target="+srv.URL+"/orders",
		"./"+filepath.Join("snippets", filepath.Dir(program.GeneratedPath())))
	build := exec.Command("go", args...)
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, bin)
	run.Dir = dir // where it writes spans.json
	out, err := run.CombinedOutput()
	if err != nil || !bytes.HasPrefix(out, []byte("201 Created after 1 attempts (return)")) {
		t.Fatalf("the program: %v\n%s", err, out)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(traceparents) != 1 || traceparents[0] == "" {
		t.Fatalf("the server saw traceparent %q, want one from the attempt", traceparents)
	}
	// 00-<trace id>-<parent span id>-<flags>: the parent is the attempt span.
	parts := strings.Split(traceparents[0], "-")
	if len(parts) != 4 {
		t.Fatalf("traceparent %q", traceparents[0])
	}
	spans, err := os.ReadFile(filepath.Join(dir, "spans.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(spans))
	found := false
	for dec.More() {
		var s struct {
			SpanContext struct{ TraceID, SpanID string }
			Attributes  []struct{ Key string }
		}
		if err := dec.Decode(&s); err != nil {
			t.Fatal(err)
		}
		attempt := slices.ContainsFunc(s.Attributes, func(a struct{ Key string }) bool { return a.Key == "retry.attempt" })
		if attempt && s.SpanContext.TraceID == parts[1] && s.SpanContext.SpanID == parts[2] {
			found = true
		}
	}
	if !found {
		t.Errorf("no attempt span %s of trace %s in spans.json:\n%s", parts[2], parts[1], spans)
	}
}
