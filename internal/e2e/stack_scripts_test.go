// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

// scripts/stack.sh and scripts/test.sh run without the real stack: the
// seven programs are replaced by one stub HTTP server
// (every health, readiness and query URL answers 200), on free ports of
// 127.0.0.1 passed through the script's documented OTELRETRY_* overrides,
// with HOME (hence the default OTELRETRY_CACHE) a temporary directory.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const stackStubMain = `package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "validate" || os.Args[1] == "components") {
		return
	}
	var addrs []string
	for _, k := range []string{"OTELCOL_HEALTH_ENDPOINT", "JAEGER_HEALTH_ENDPOINT", "JAEGER_QUERY_HTTP_ENDPOINT"} {
		if v := os.Getenv(k); v != "" {
			addrs = append(addrs, v)
		}
	}
	for _, a := range os.Args[1:] {
		for _, p := range []string{"-httpListenAddr=", "--web.listen-address="} {
			if strings.HasPrefix(a, p) {
				addrs = append(addrs, strings.TrimPrefix(a, p))
			}
		}
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(` + "`" + `{"status":"success","data":{"resultType":"vector","result":[{"value":[0,"1"]}]}}` + "`" + `))
	})
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		go http.Serve(l, h)
	}
	select {}
}
`

var stackAddrs = []string{
	"COLLECTOR_OTLP_GRPC", "COLLECTOR_OTLP_HTTP", "COLLECTOR_PROM", "COLLECTOR_HEALTH",
	"JAEGER_OTLP_GRPC", "JAEGER_OTLP_HTTP", "JAEGER_QUERY_HTTP", "JAEGER_QUERY_GRPC", "JAEGER_HEALTH",
	"PROMETHEUS_HTTP", "VICTORIALOGS_HTTP",
	"AGENT_OTLP_GRPC", "AGENT_OTLP_HTTP", "AGENT_HEALTH",
	"SAMPLER1_OTLP_GRPC", "SAMPLER1_HEALTH", "SAMPLER2_OTLP_GRPC", "SAMPLER2_HEALTH",
}

var stackPorts = []string{
	"COLLECTOR_TELEMETRY_PORT", "JAEGER_TELEMETRY_PORT", "AGENT_TELEMETRY_PORT",
	"SAMPLER1_TELEMETRY_PORT", "SAMPLER2_TELEMETRY_PORT",
}

var stackPrograms = []string{"victorialogs", "jaeger", "collector", "sampler-1", "sampler-2", "agent", "prometheus"}

type fakeStack struct {
	home string
	env  []string
}

// run is the default OTELRETRY_RUN_DIR of checkout: one per checkout, under
// $HOME/.cache/otelretry/run.
func (s *fakeStack) run(checkout string) string {
	sum := sha256.Sum256([]byte(checkout))
	return filepath.Join(s.home, ".cache", "otelretry", "run", hex.EncodeToString(sum[:])[:16])
}

// newFakeStack: a HOME whose cache holds stub binaries, and the
// environment that gives every listening address a free port.
func newFakeStack(t *testing.T, extraEnv ...string) *fakeStack {
	t.Helper()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(stackStubMain), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module stub\n\ngo 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	bin := filepath.Join(home, ".cache", "otelretry", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	stub := filepath.Join(bin, "stub")
	build := exec.Command("go", "build", "-o", stub, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the stub: %v\n%s", err, out)
	}
	for _, name := range []string{"otelcol-otelretry", "jaeger", "victoria-logs", "prometheus"} {
		if err := os.Symlink(stub, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	// Free ports, all held until every one is chosen.
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	free := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		return l.Addr().(*net.TCPAddr).Port
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTELRETRY_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home,
		"OTELRETRY_PROMETHEUS_BIN="+filepath.Join(bin, "prometheus"),
		"OTELRETRY_UP_TIMEOUT=20")
	for _, k := range stackAddrs {
		env = append(env, fmt.Sprintf("OTELRETRY_%s=127.0.0.1:%d", k, free()))
	}
	for _, k := range stackPorts {
		env = append(env, fmt.Sprintf("OTELRETRY_%s=%d", k, free()))
	}
	env = append(env, extraEnv...)
	return &fakeStack{home: home, env: env}
}

// stackCheckout: a copy of what `scripts/stack.sh up` reads from its checkout.
func stackCheckout(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	dir := filepath.Join(t.TempDir(), "otelretry-go")
	for _, f := range []string{"scripts/stack.sh", "deploy/prometheus/prometheus.yml"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func (s *fakeStack) stack(t *testing.T, checkout string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(checkout, "scripts", "stack.sh")}, args...)...)
	cmd.Env = s.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// pids: the recorded pid of each program of checkout's stack and of its
// watchdog; each is stopped when the test ends (TERM: the watchdog's trap
// also ends its sleep).
func (s *fakeStack) pids(t *testing.T, checkout string) map[string]int {
	t.Helper()
	return pidsIn(t, s.run(checkout))
}

// pidsIn: the pids recorded in run, stopped when the test ends (see pids).
func pidsIn(t *testing.T, run string) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, name := range append(append([]string{}, stackPrograms...), "watchdog") {
		b, err := os.ReadFile(filepath.Join(run, name+".pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			continue
		}
		m[name] = pid
		t.Cleanup(func() {
			if processAlive(pid) {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
		})
	}
	return m
}

// alive: the process exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

func aliveOnes(m map[string]int) []string {
	var alive []string
	for _, name := range stackPrograms {
		if pid, ok := m[name]; ok && processAlive(pid) {
			alive = append(alive, fmt.Sprintf("%s(%d)", name, pid))
		}
	}
	return alive
}

// The script's header: "OTELRETRY_STACK_TTL seconds after which a watchdog
// stops the stack". Control: with the checkout in place, it does.
func TestStackWatchdogStopsTheStack(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=1")
	checkout := stackCheckout(t)
	pids := s.up(t, checkout)
	if alive := stoppedWithin(pids, 6*time.Second); len(alive) > 0 {
		t.Fatalf("the watchdog did not stop %v", alive)
	}
}

// The run whose stack the watchdog is for is one that nobody stopped: its
// scripts/e2e.sh was killed (no EXIT trap runs on SIGKILL), and CI then
// removes the clean clone it ran in. The watchdog runs the copy of
// stack.sh the run directory keeps (before, the checkout's, which was
// gone: the stack ran on after the TTL, holding its fixed ports).
func TestStackWatchdogStopsTheStackOfARemovedCheckout(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=1")
	checkout := stackCheckout(t)
	pids := s.up(t, checkout)
	// CI removes the run's clean clone.
	if err := os.RemoveAll(filepath.Dir(checkout)); err != nil {
		t.Fatal(err)
	}
	if alive := stoppedWithin(pids, 6*time.Second); len(alive) > 0 {
		log, _ := os.ReadFile(filepath.Join(s.run(checkout), "logs", "watchdog.log"))
		t.Fatalf("OTELRETRY_STACK_TTL=1, 6 s later the watchdog has not stopped the stack (the checkout it ran from is gone): still running %v\nwatchdog.log:\n%s", alive, log)
	}
}

// Two runs on one machine under one HOME (two clones, say a CI job and a
// developer's run): each checkout has its own run directory, so the
// second `up` leaves the first's live stack alone and fails clearly on the
// ports it holds, and the first's `down` touches nothing of the second's.
// Before, the second `up` stopped the first's stack without a word, and
// the first's `down` then stopped the second's. A stack whose checkout is
// gone is stopped by the next `up`.
func TestStackUpLeavesAnotherCheckoutsStackAlone(t *testing.T) {
	s := newFakeStack(t)
	a, b := stackCheckout(t), stackCheckout(t)
	if out, err := s.stack(t, a, "up"); err != nil {
		t.Fatalf("clone A up: %v\n%s", err, out)
	}
	pidsA := s.pids(t, a)
	outB, errB := s.stack(t, b, "up")
	if errB == nil || !strings.Contains(outB, "already in use") {
		t.Errorf("clone B's up beside clone A's stack on the same ports: %v, want a port in use\n%s", errB, outB)
	}
	if alive := aliveOnes(pidsA); len(alive) != len(stackPrograms) {
		t.Fatalf("clone B's up stopped clone A's stack (left running: %v):\n%s", alive, outB)
	}
	// Clone A is removed without its down: clone B's up stops its stack.
	if err := os.RemoveAll(filepath.Dir(a)); err != nil {
		t.Fatal(err)
	}
	if out, err := s.stack(t, b, "up"); err != nil {
		t.Fatalf("clone B's up once clone A is gone: %v\n%s", err, out)
	}
	s.pids(t, b)
	if alive := aliveOnes(pidsA); len(alive) > 0 {
		t.Errorf("clone A's stack runs on after its checkout is gone: %v", alive)
	}
	if out, err := s.stack(t, b, "down"); err != nil {
		t.Errorf("clone B down: %v\n%s", err, out)
	}
}

// scripts/test.sh removes the temporary file of the stack's background
// build log on every exit: a run that fails in a step before the
// end-to-end stage left it in $TMPDIR.
func TestTestShRemovesItsTemporaryFiles(t *testing.T) {
	root := repoRoot(t)
	repo := t.TempDir()
	tmp := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	copyTestCommand(t, root, repo)
	// The stack's packages and build: stubs that succeed at once.
	must(os.WriteFile(filepath.Join(repo, "scripts", "stack.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	must(os.WriteFile(filepath.Join(repo, "a.go"), []byte("// Copyright The otelretry Authors\n// SPDX-License-Identifier: Apache-2.0\n\npackage a\n"), 0o644))
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "scripts/test.sh")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "GOWORK=off", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("scripts/test.sh passed in the scratch repository; want its library go.mod step to fail:\n%s", out)
	}
	if !bytes.Contains(out, []byte("== library go.mod")) {
		t.Fatalf("scripts/test.sh failed before its library go.mod step:\n%s", out)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "otelretry-stack-install.*"))
	if len(left) > 0 {
		t.Errorf("scripts/test.sh failed (%v) and left %v behind in TMPDIR; its output:\n%s", err, left, out)
	}
}

// A relative OTELRETRY_RUN_DIR is the checkout's (the script cds there
// first), for the watchdog's copy of the script too, which runs from the
// run directory: the watchdog stops the stack (it found no pid there when
// it was handed the relative path as it was).
func TestStackWatchdogWithARelativeRunDir(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=1", "OTELRETRY_RUN_DIR=stack-run")
	checkout := stackCheckout(t)
	run := filepath.Join(checkout, "stack-run")
	t.Cleanup(func() { s.stack(t, checkout, "down") })
	if out, err := s.stack(t, checkout, "up"); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	pids := pidsIn(t, run)
	if len(pids) != len(stackPrograms)+1 {
		t.Fatalf("pids %v", pids)
	}
	if alive := stoppedWithin(pids, 6*time.Second); len(alive) > 0 {
		log, _ := os.ReadFile(filepath.Join(run, "logs", "watchdog.log"))
		t.Fatalf("OTELRETRY_RUN_DIR=stack-run (relative), OTELRETRY_STACK_TTL=1: 6 s later the watchdog has not stopped the stack: still running %v\nwatchdog.log:\n%s", alive, log)
	}
}

// stoppedWithin waits up to d for every program of pids to stop, and
// returns those still running.
func stoppedWithin(pids map[string]int, d time.Duration) []string {
	deadline := time.Now().Add(d)
	for len(aliveOnes(pids)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	return aliveOnes(pids)
}

// up starts checkout's stack and returns its pids (see pids), every
// program's and the watchdog's.
func (s *fakeStack) up(t *testing.T, checkout string) map[string]int {
	t.Helper()
	if out, err := s.stack(t, checkout, "up"); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	pids := s.pids(t, checkout)
	if len(pids) != len(stackPrograms)+1 {
		t.Fatalf("pids %v", pids)
	}
	return pids
}

// scripts/apt-install.sh PACKAGE...: with packages it updates and installs
// them, through PATH (apt-get, and sudo when not root, are stubs here);
// with none it is a usage error that runs nothing (it ran apt-get update
// and an install of nothing, and said it succeeded: a reviewer's find).
func TestAptInstallInstallsWhatItIsGivenAndNothingElse(t *testing.T) {
	root := repoRoot(t)
	run := func(args ...string) (calls string, err error) {
		bin := t.TempDir()
		record := filepath.Join(bin, "calls")
		stub := "#!/bin/sh\necho \"apt-get $*\" >>" + record + "\n"
		if err := os.WriteFile(filepath.Join(bin, "apt-get"), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "sudo"), []byte("#!/bin/sh\nexec \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(root, "scripts", "apt-install.sh")}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		ran, _ := os.ReadFile(record)
		if err != nil {
			err = fmt.Errorf("%w: %s", err, out)
		}
		return string(ran), err
	}
	if calls, err := run("curl", "ca-certificates"); err != nil ||
		calls != "apt-get update -qq\napt-get install -y -qq --no-install-recommends curl ca-certificates\n" {
		t.Errorf("apt-install.sh curl ca-certificates: %v, apt-get calls:\n%s", err, calls)
	}
	if calls, err := run(); err == nil || calls != "" || !strings.Contains(err.Error(), "usage") {
		t.Errorf("apt-install.sh with no package: %v, apt-get calls:\n%s", err, calls)
	}
}
