// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command getpath reads a Delve trace of the otelretry package's functions
// (dlv trace, on standard input) and says which of the package's files
// the request traced passes through, and how often it switches between
// them: from the first call of (*Transport).RoundTrip to the end of the
// trace, per goroutine, each call and each return an event in the file of
// its function. scripts/getpath.sh runs it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// event is one line of a trace: a call (> goroutine(N): pkg.Func(args))
// or a return (>> goroutine(N): pkg.Func => (results)).
var event = regexp.MustCompile(`^>>? goroutine\((\d+)\): github\.com/otelretry/otelretry-go/otelretry\.([^( ]+|\([^)]*\)\.[^( ]+)`)

func main() {
	dir := flag.String("dir", "otelretry", "the package's directory")
	flag.Parse()
	files, err := fileOf(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	seen := map[string]int{}
	last := map[string]string{} // per goroutine, the file of its last event
	switches, events, started := 0, 0, false
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := event.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		g, name := m[1], funcKey(m[2])
		if !started {
			if name != "Transport.RoundTrip" {
				continue
			}
			started = true
		}
		file, ok := files[name]
		if !ok {
			continue // a function of the package's tests
		}
		events++
		seen[file]++
		if prev, ok := last[g]; ok && prev != file {
			switches++
		}
		last[g] = file
	}
	if !started {
		fmt.Fprintln(os.Stderr, "getpath: no call of (*Transport).RoundTrip in the trace")
		os.Exit(1)
	}
	names := make([]string, 0, len(seen))
	for f := range seen {
		names = append(names, f)
	}
	sort.Slice(names, func(i, j int) bool {
		return seen[names[i]] > seen[names[j]] || seen[names[i]] == seen[names[j]] && names[i] < names[j]
	})
	fmt.Printf("%d files, %d switches between them, %d events\n", len(names), switches, events)
	for _, f := range names {
		fmt.Printf("  %-16s %d\n", f, seen[f])
	}
}

// funcKey is the name a trace gives a function, as fileOf keys it:
// "Type.Method" or "func", without the pointer and the literals' suffixes.
func funcKey(s string) string {
	s = strings.NewReplacer("(*", "", "(", "", ")", "").Replace(s)
	parts := strings.Split(s, ".")
	keep := parts[:0]
	for _, p := range parts {
		if strings.HasPrefix(p, "func") && strings.TrimLeft(p[4:], "0123456789") == "" && len(p) > 4 {
			break // a function literal of the name before it
		}
		if i := strings.IndexByte(p, '['); i >= 0 {
			p = p[:i] // a generic instance
		}
		keep = append(keep, p)
	}
	return strings.Join(keep, ".")
}

// fileOf maps each function and method of the package's non-test files
// to its file.
func fileOf(dir string) (map[string]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			key := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				key = recvName(fd.Recv.List[0].Type) + "." + key
			}
			out[key] = filepath.Base(name)
		}
	}
	return out, nil
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}
