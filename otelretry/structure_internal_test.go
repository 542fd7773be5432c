// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The package's rooms have walls that these tests hold: read from the
// type-checked syntax tree of its files (not from their text), so that a
// word in a comment is no use.

// source is the package's non-test files, type-checked.
type source struct {
	fset  *token.FileSet
	files []*ast.File
	info  *types.Info
	pkg   *types.Package
}

var (
	loadOnce   sync.Once
	loaded     *source
	loadFailed error
)

// loadSource parses and type-checks the package's non-test files, with the
// export data of its dependencies from the go command.
func loadSource(t *testing.T) *source {
	t.Helper()
	loadOnce.Do(func() { loaded, loadFailed = load() })
	if loadFailed != nil {
		t.Fatal(loadFailed)
	}
	return loaded
}

func load() (*source, error) {
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", ".").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	exports := map[string]string{}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		path, file, _ := strings.Cut(sc.Text(), "=")
		exports[path] = file
	}
	s := &source{fset: token.NewFileSet(), info: &types.Info{
		Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}}
	names, err := filepath.Glob("*.go")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(s.fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, f)
	}
	imp := importer.ForCompiler(s.fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	s.pkg, err = (&types.Config{Importer: imp}).Check("otelretry", s.fset, s.files, s.info)
	return s, err
}

func (s *source) fileOf(p token.Pos) string { return filepath.Base(s.fset.Position(p).Filename) }

// uses returns, for each pair of files (from, to), how many times from
// names something to defines: a package-level name, a method or a field.
func (s *source) uses() map[[2]string]int {
	uses := map[[2]string]int{}
	for id, obj := range s.info.Uses {
		if obj.Pkg() != s.pkg {
			continue
		}
		fn, isFunc := obj.(*types.Func)
		v, isVar := obj.(*types.Var)
		if obj.Parent() != s.pkg.Scope() && !(isFunc && fn.Signature().Recv() != nil) && !(isVar && v.IsField()) {
			continue // a local name
		}
		if from, to := s.fileOf(id.Pos()), s.fileOf(obj.Pos()); from != to {
			uses[[2]string{from, to}]++
		}
	}
	return uses
}

// floors stacks the files so that each stands above every file whose
// names it uses, and returns each file's floor (1 is the ground) and the
// uses that cannot be stacked so, because they close a loop.
func floors(files []string, uses map[[2]string]int) (map[string]int, [][2]string) {
	floor := map[string]int{}
	var loops [][2]string
	state := map[string]int{} // 0 new, 1 on the path, 2 done
	var visit func(string) int
	visit = func(f string) int {
		switch state[f] {
		case 1:
			return 0
		case 2:
			return floor[f]
		}
		state[f] = 1
		level := 1
		for _, to := range files {
			if uses[[2]string{f, to}] == 0 {
				continue
			}
			if state[to] == 1 {
				loops = append(loops, [2]string{f, to})
				continue
			}
			level = max(level, visit(to)+1)
		}
		state[f], floor[f] = 2, level
		return level
	}
	for _, f := range files {
		visit(f)
	}
	return floor, loops
}

// The files of the package stack in floors: each stands above every file
// whose names (types, functions, methods, fields, constants) it uses, and
// no use runs back up. (A token-based reading, which also takes the words
// of comments and local names for the types they spell, finds more.)
func TestFilesStackInFloors(t *testing.T) {
	s := loadSource(t)
	var files []string
	for _, f := range s.files {
		files = append(files, s.fileOf(f.Pos()))
	}
	uses := s.uses()
	floor, loops := floors(files, uses)
	for _, l := range loops {
		t.Errorf("%s uses %s (%d times), which uses it back: a loop between rooms", l[0], l[1], uses[l])
	}
	sort.Slice(files, func(i, j int) bool {
		return floor[files[i]] > floor[files[j]] || floor[files[i]] == floor[files[j]] && files[i] < files[j]
	})
	for _, f := range files {
		t.Logf("floor %2d  %s", floor[f], f)
	}
}

// Each type's methods live in the file that declares the type, so that a
// file is a room: the operation's in operation.go, the attempt's in
// attempt.go, the recorder's in recorder.go.
func TestMethodsLiveWithTheirType(t *testing.T) {
	s := loadSource(t)
	for _, f := range s.files {
		file := s.fileOf(f.Pos())
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			recv := s.info.Defs[fd.Name].(*types.Func).Signature().Recv().Type()
			if p, ok := recv.(*types.Pointer); ok {
				recv = p.Elem()
			}
			named, ok := recv.(*types.Named)
			if !ok {
				continue
			}
			if home := s.fileOf(named.Obj().Pos()); home != file {
				t.Errorf("%s declares method %s.%s of a type of %s", file, named.Obj().Name(), fd.Name.Name, home)
			}
		}
	}
}

// fieldWrites returns every assignment to a field of one of the package's
// struct types: the field, its file, and where it is written.
func (s *source) fieldWrites() []fieldWrite {
	var writes []fieldWrite
	for _, f := range s.files {
		file := s.fileOf(f.Pos())
		ast.Inspect(f, func(n ast.Node) bool {
			var lhs []ast.Expr
			switch st := n.(type) {
			case *ast.AssignStmt:
				lhs = st.Lhs
			case *ast.IncDecStmt:
				lhs = []ast.Expr{st.X}
			}
			for _, e := range lhs {
				sel, ok := e.(*ast.SelectorExpr)
				if !ok {
					continue
				}
				if se := s.info.Selections[sel]; se != nil && se.Kind() == types.FieldVal && se.Obj().Pkg() == s.pkg {
					writes = append(writes, fieldWrite{field: se.Obj().(*types.Var), recv: se.Recv(), home: s.fileOf(se.Obj().Pos()),
						file: file, at: s.fset.Position(sel.Sel.Pos())})
				}
			}
			return true
		})
	}
	return writes
}

type fieldWrite struct {
	field *types.Var
	recv  types.Type
	home  string // the file that declares the field
	file  string // the file that writes it
	at    token.Position
}

// A field is written only in the file that declares its type: a file that
// needs another room's state changed asks that room's own function, which
// says what the change means. Values built by one function and handed on
// are built with composite literals, which this allows.
func TestFieldsAreWrittenInTheirOwnRoom(t *testing.T) {
	for _, w := range loadSource(t).fieldWrites() {
		if w.file != w.home {
			t.Errorf("%s: %s writes %s.%s, a field of a type of %s", w.at, w.file, types.TypeString(w.recv, nil), w.field.Name(), w.home)
		}
	}
}

// The operation's fields are facts: each is written at one place, when it
// becomes known (its judgment, its identity, its clock, its record), and
// never again. Where the operation stands between attempts is a value its
// loop owns (progress), not a field.
func TestOperationFieldsAreWrittenOnce(t *testing.T) {
	s := loadSource(t)
	opType := s.pkg.Scope().Lookup("operation").Type().Underlying().(*types.Struct)
	written := map[string][]string{}
	for _, w := range s.fieldWrites() {
		for i := range opType.NumFields() {
			if opType.Field(i) == w.field {
				written[w.field.Name()] = append(written[w.field.Name()], w.at.String())
			}
		}
	}
	for name, at := range written {
		if len(at) > 1 {
			t.Errorf("operation.%s is written at %d places: %s", name, len(at), strings.Join(at, ", "))
		}
	}
	if _, ok := written["plan"]; !ok {
		t.Fatal("operation.plan is never written: the test does not see the operation's fields")
	}
}

// packageWide are the test files that serve the whole package, not one
// unit: shared helpers, TestMain, the race scale, the leak check, and
// these structure tests.
var packageWide = map[string]bool{"helpers_test.go": true, "main_test.go": true, "race_test.go": true,
	"norace_test.go": true, "zz_leak_test.go": true, "structure_internal_test.go": true}

// Tests live by unit: every file but doc.go has a test file of its own,
// NAME_test.go or NAME_internal_test.go, and every test file is named for
// the unit it tests (also NAME_CONCERN_test.go, for a concern of the unit
// with a file of its own), is an example, or serves the whole package.
func TestTestFilesAreNamedForTheirUnit(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	units, tests := map[string]bool{}, map[string]bool{}
	for _, name := range names {
		if stem, ok := strings.CutSuffix(name, "_test.go"); ok {
			tests[stem] = true
		} else {
			units[strings.TrimSuffix(name, ".go")] = true
		}
	}
	for unit := range units {
		if unit != "doc" && !tests[unit] && !tests[unit+"_internal"] {
			t.Errorf("%s.go has no test file of its own (%s_test.go or %s_internal_test.go)", unit, unit, unit)
		}
	}
	for name := range tests {
		if packageWide[name+"_test.go"] || strings.HasPrefix(name, "example") {
			continue
		}
		stem := strings.TrimSuffix(name, "_internal")
		unit, _, _ := strings.Cut(stem, "_")
		if !units[stem] && !units[unit] {
			t.Errorf("%s_test.go is named for no file of the package", name)
		}
	}
}
