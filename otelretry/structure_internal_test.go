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

// maxExports bounds the package's top-level exported names (constants,
// variables, functions and types; not methods or fields): a user should
// find in go doc what they need and nothing else (issue 45 counted 111,
// 126 once hedging, hints, idempotency keys and the throttle had landed;
// 80 after it). 81: EnsureOperationID, weighed against the others, which
// no other name could do (a layer's tries in a hook's call share an id
// only through it; OperationIDFromContext there names the hook's own
// operation, for its request ids). 82: WithStateCheckDelay (a lookup's
// not_applied is sound only once the server's bound on the write has
// passed; without it every hook would wait for that on its own, outside
// the deadline's accounting). 83: CallIntent (a layer that marks its
// calls, as the SDK recipes do, otherwise hands a hook's call the
// calling operation's Intent, which IntentFromContext tells hooks).
const maxExports = 83

// The package exports at most maxExports top-level names, so that a new
// one is weighed against the ones a user already has to read.
func TestPackageExportsAtMostMaxExportsNames(t *testing.T) {
	var names []string
	for _, n := range loadSource(t).pkg.Scope().Names() {
		if ast.IsExported(n) {
			names = append(names, n)
		}
	}
	t.Logf("%d top-level exported names", len(names))
	if len(names) > maxExports {
		t.Errorf("%d top-level exported names, want at most %d: %s", len(names), maxExports, strings.Join(names, " "))
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

// lockRule is what TestNoUserCodeRunsUnderALock reads of the package: its
// functions by their object, and every call site of each.
type lockRule struct {
	s     *source
	decls map[*types.Func]*ast.FuncDecl
	calls map[*types.Func][]*ast.CallExpr
	// params maps each function-typed parameter to its function and place.
	params map[*types.Var]paramOf
	// seen memoizes userCode per function or literal, and breaks cycles.
	seen map[ast.Node]string
}

type paramOf struct {
	fn *types.Func
	i  int
}

func newLockRule(s *source) *lockRule {
	r := &lockRule{s: s, decls: map[*types.Func]*ast.FuncDecl{}, calls: map[*types.Func][]*ast.CallExpr{},
		params: map[*types.Var]paramOf{}, seen: map[ast.Node]string{}}
	for _, f := range s.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn := s.info.Defs[fd.Name].(*types.Func)
			r.decls[fn] = fd
			i := 0
			for _, field := range fd.Type.Params.List {
				for _, name := range field.Names {
					if v, ok := s.info.Defs[name].(*types.Var); ok {
						r.params[v] = paramOf{fn, i}
					}
					i++
				}
				if len(field.Names) == 0 {
					i++
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if fn, ok := r.callee(call).(*types.Func); ok && fn.Pkg() == s.pkg {
					r.calls[fn] = append(r.calls[fn], call)
				}
			}
			return true
		})
	}
	return r
}

// callee is what a call calls: a *types.Func (a function, or a method of
// a concrete type or of an interface), a *types.Var (a function value), a
// *types.TypeName or *types.Builtin (a conversion, a builtin), or nil (a
// function literal called in place, or an expression).
func (r *lockRule) callee(call *ast.CallExpr) types.Object {
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return r.s.info.Uses[fun]
	case *ast.SelectorExpr:
		if sel := r.s.info.Selections[fun]; sel != nil {
			return sel.Obj()
		}
		return r.s.info.Uses[fun.Sel]
	case *ast.IndexExpr: // a generic function, instantiated
		if id, ok := fun.X.(*ast.Ident); ok {
			return r.s.info.Uses[id]
		}
	}
	return nil
}

// externalUserCode are functions of other packages that run code the
// package does not own: the global error handler, and the derivations of
// a context, which call its parent's Done and Value (a caller's own
// context type's).
var externalUserCode = map[string]bool{
	"go.opentelemetry.io/otel.Handle": true,
	"context.WithCancel":              true,
	"context.WithCancelCause":         true,
	"context.WithDeadline":            true,
	"context.WithDeadlineCause":       true,
	"context.WithTimeout":             true,
	"context.WithTimeoutCause":        true,
	"context.AfterFunc":               true,
	"context.Cause":                   true,
}

// userCode reports, for the calls under n, one that may run code the
// package does not own (user code: a hook, the telemetry, a body, a base),
// as a description, or "" when none does: a call through an interface, a
// call of a function value that is not a function literal of the package,
// or a call of a package function that makes one, transitively.
func (r *lockRule) userCode(n ast.Node) string {
	if why, ok := r.seen[n]; ok {
		return why
	}
	r.seen[n] = "" // a cycle adds nothing
	why := ""
	ast.Inspect(n, func(m ast.Node) bool {
		if why != "" {
			return false
		}
		if lit, ok := m.(*ast.FuncLit); ok && lit != n {
			return false // runs only when called, and followed then
		}
		call, ok := m.(*ast.CallExpr)
		if !ok {
			return true
		}
		at := r.s.fset.Position(call.Pos())
		switch obj := r.callee(call).(type) {
		case nil:
			if lit, ok := ast.Unparen(call.Fun).(*ast.FuncLit); ok {
				why = r.userCode(lit)
			}
		case *types.Func:
			sig := obj.Signature()
			switch {
			case sig.Recv() != nil && types.IsInterface(sig.Recv().Type()):
				why = fmt.Sprintf("%s: %s, through an interface", at, obj.FullName())
			case obj.Pkg() == r.s.pkg:
				if d := r.decls[obj]; d != nil {
					if inner := r.userCode(d); inner != "" {
						why = fmt.Sprintf("%s: %s, which calls %s", at, obj.Name(), inner)
					}
				}
			case externalUserCode[obj.FullName()]:
				why = fmt.Sprintf("%s: %s", at, obj.FullName())
			}
		case *types.Var:
			why = r.funcValue(obj, call)
		}
		return why == ""
	})
	r.seen[n] = why
	return why
}

// funcValue is userCode for a call of function value v: a parameter is
// followed to what every call site of its function passes, which must be
// a function literal of the package (or a method of a concrete type of
// it); any other function value may be a hook.
func (r *lockRule) funcValue(v *types.Var, call *ast.CallExpr) string {
	at := r.s.fset.Position(call.Pos())
	p, ok := r.params[v]
	if !ok {
		return fmt.Sprintf("%s: %s, a function value", at, v.Name())
	}
	for _, site := range r.calls[p.fn] {
		arg := site.Args[p.i]
		switch a := ast.Unparen(arg).(type) {
		case *ast.FuncLit:
			if inner := r.userCode(a); inner != "" {
				return fmt.Sprintf("%s: %s, given %s", at, v.Name(), inner)
			}
		case *ast.SelectorExpr:
			sel := r.s.info.Selections[a]
			fn, ok := r.s.info.Uses[a.Sel].(*types.Func)
			if sel == nil || sel.Kind() != types.MethodVal || !ok || fn.Pkg() != r.s.pkg || r.decls[fn] == nil {
				return fmt.Sprintf("%s: %s, given %s", at, v.Name(), types.ExprString(arg))
			}
			if inner := r.userCode(r.decls[fn]); inner != "" {
				return fmt.Sprintf("%s: %s, given %s", at, v.Name(), inner)
			}
		default:
			return fmt.Sprintf("%s: %s, given %s", at, v.Name(), types.ExprString(arg))
		}
	}
	return ""
}

// lockCall reports whether st is x.Lock() or x.RLock() (unlock false), or
// x.Unlock() or x.RUnlock() (unlock true), of a sync.Mutex or
// sync.RWMutex, and x's text.
func (r *lockRule) lockCall(st ast.Stmt) (mu string, unlock, ok bool) {
	var call *ast.CallExpr
	switch st := st.(type) {
	case *ast.ExprStmt:
		call, _ = st.X.(*ast.CallExpr)
	case *ast.DeferStmt:
		call = st.Call
	}
	if call == nil {
		return "", false, false
	}
	sel, isSel := call.Fun.(*ast.SelectorExpr)
	if !isSel {
		return "", false, false
	}
	fn, isFunc := r.callee(call).(*types.Func)
	if !isFunc || fn.Pkg() == nil || fn.Pkg().Path() != "sync" {
		return "", false, false
	}
	switch fn.Name() {
	case "Lock", "RLock":
		return types.ExprString(sel.X), false, true
	case "Unlock", "RUnlock":
		return types.ExprString(sel.X), true, true
	}
	return "", false, false
}

// onceAcrossUserCode are the sync.Once.Do calls whose function runs code
// the package does not own, by function and why that is safe: a body's
// Close, once, its later callers waiting for the first one's result, as
// the io.Closer of net/http's bodies does.
var onceAcrossUserCode = map[string]string{
	"rawBody.close": "the base's body Close, once; a later Close returns its error (body.go)",
}

// checkOnce checks a call of sync.Once.Do in fd: its function runs under
// the Once's lock, which a second caller waits on; it reports 1 for such
// a call, 0 for any other.
func (r *lockRule) checkOnce(t *testing.T, fd *ast.FuncDecl, call *ast.CallExpr) int {
	fn, ok := r.callee(call).(*types.Func)
	if !ok || fn.FullName() != "(*sync.Once).Do" || len(call.Args) != 1 {
		return 0
	}
	var why string
	switch f := ast.Unparen(call.Args[0]).(type) {
	case *ast.FuncLit:
		why = r.userCode(f)
	default:
		why = r.userCode(&ast.ExprStmt{X: &ast.CallExpr{Fun: f}})
	}
	name := fd.Name.Name
	if fd.Recv != nil && len(fd.Recv.List) == 1 {
		recv := ast.Unparen(fd.Recv.List[0].Type)
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		name = types.ExprString(recv) + "." + name
	}
	if why != "" && onceAcrossUserCode[name] == "" {
		t.Errorf("%s: %s runs %s under a sync.Once", r.s.fset.Position(call.Pos()), name, why)
	}
	return 1
}

// No user code runs under a lock of the package's: every lock is released
// in the function that takes it (in the same block, or by a defer), and
// while it is held no call can run code the package does not own (see
// userCode): a hook, the telemetry, a body, a base, the global error
// handler. A hook that blocks, panics or calls back in must never find
// one of the package's locks held.
func TestNoUserCodeRunsUnderALock(t *testing.T) {
	s := loadSource(t)
	r := newLockRule(s)
	regions := 0
	for _, fd := range r.decls {
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			var list []ast.Stmt // a block's statements, or a case's or select's clause's
			switch n := n.(type) {
			case *ast.BlockStmt:
				list = n.List
			case *ast.CaseClause:
				list = n.Body
			case *ast.CommClause:
				list = n.Body
			case *ast.CallExpr:
				regions += r.checkOnce(t, fd, n)
				return true
			default:
				return true
			}
			block := &ast.BlockStmt{List: list}
			for i, st := range block.List {
				mu, unlock, ok := r.lockCall(st)
				if !ok || unlock {
					continue
				}
				regions++
				released := false
				var held []ast.Stmt
				for _, next := range block.List[i+1:] {
					if m, unlock, ok := r.lockCall(next); ok && unlock && m == mu {
						released = true
						if _, deferred := next.(*ast.DeferStmt); !deferred {
							break
						}
						continue
					}
					held = append(held, next)
				}
				if !released {
					t.Errorf("%s: %s takes %s and returns with it held", s.fset.Position(st.Pos()), fd.Name.Name, mu)
				}
				for _, h := range held {
					if why := r.userCode(h); why != "" {
						t.Errorf("%s: %s holds %s across %s", s.fset.Position(st.Pos()), fd.Name.Name, mu, why)
					}
				}
			}
			return true
		})
	}
	if regions == 0 {
		t.Fatal("no lock found: the test does not see the package's locks")
	}
}
