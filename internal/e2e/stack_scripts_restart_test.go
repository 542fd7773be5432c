// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The script's header: OTELRETRY_RUN_DIR defaults to "one per checkout",
// and `down` stops "whatever `up` started". The same checkout reached
// through a symlink (a symlinked home or workspace) is still one checkout:
// its `down` stops the stack its `up` started (a reviewer's find: the run
// directory was named after the path as typed; the two tests below are
// the reviewer's runs, held).
func TestStackDownThroughASymlinkStopsTheStack(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=120")
	checkout := stackCheckout(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(checkout, link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stack(t, checkout, "down") })
	pids := s.up(t, checkout)
	out, err := s.stack(t, link, "down")
	if err != nil {
		t.Fatalf("down through the symlink: %v\n%s", err, out)
	}
	if alive := aliveOnes(pids); len(alive) > 0 {
		t.Errorf("`scripts/stack.sh down` of the same checkout through a symlink left its stack running: %v\noutput:\n%s", alive, out)
	}
}

// Up, up again (a restart), down, down again; then up after a crash: a
// component killed with SIGKILL, its pid file left behind.
func TestStackUpTwiceDownTwiceAndAfterACrash(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=120")
	checkout := stackCheckout(t)
	t.Cleanup(func() { s.stack(t, checkout, "down") })
	first := s.up(t, checkout)
	second := s.up(t, checkout)
	if alive := aliveOnes(first); len(alive) > 0 {
		t.Errorf("second up left the first stack running: %v", alive)
	}
	if processAlive(first["watchdog"]) {
		t.Errorf("second up left the first watchdog running")
	}
	for i := 0; i < 2; i++ {
		if out, err := s.stack(t, checkout, "down"); err != nil {
			t.Fatalf("down #%d: %v\n%s", i+1, err, out)
		}
	}
	if alive := aliveOnes(second); len(alive) > 0 || processAlive(second["watchdog"]) {
		t.Errorf("down left running: %v (watchdog alive %v)", alive, processAlive(second["watchdog"]))
	}
	third := s.up(t, checkout)
	if err := syscall.Kill(third["collector"], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if len(stoppedWithin(map[string]int{"collector": third["collector"]}, 5e9)) > 0 {
		t.Fatal("collector survived SIGKILL")
	}
	st, _ := s.stack(t, checkout, "status")
	if !strings.Contains(st, "collector  stopped") {
		t.Errorf("status after the collector's crash:\n%s", st)
	}
	fourth := s.up(t, checkout)
	if alive := aliveOnes(third); len(alive) > 0 {
		t.Errorf("up after the crash left the old stack running: %v", alive)
	}
	if alive := aliveOnes(fourth); len(alive) != len(stackPrograms) {
		t.Errorf("up after the crash: running %v", alive)
	}
	if out, err := s.stack(t, checkout, "down"); err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
	if alive := aliveOnes(fourth); len(alive) > 0 {
		t.Errorf("down left running: %v", alive)
	}
}

// A port of the stack held by another process: up fails, names it, starts
// nothing and leaves that process alone.
func TestStackUpWithAPortTakenByAnotherProcess(t *testing.T) {
	s := newFakeStack(t, "OTELRETRY_STACK_TTL=120")
	checkout := stackCheckout(t)
	t.Cleanup(func() { s.stack(t, checkout, "down") })
	var addr string
	for _, kv := range s.env {
		if strings.HasPrefix(kv, "OTELRETRY_COLLECTOR_PROM=") {
			addr = strings.TrimPrefix(kv, "OTELRETRY_COLLECTOR_PROM=")
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out, err := s.stack(t, checkout, "up")
	if err == nil || !strings.Contains(out, addr+" is already in use") {
		t.Errorf("up with %s taken: %v\n%s", addr, err, out)
	}
	if alive := aliveOnes(s.pids(t, checkout)); len(alive) > 0 {
		t.Errorf("a failed up left running: %v", alive)
	}
	if _, err := os.Stat(filepath.Join(s.run(checkout), "stack.env")); err == nil {
		t.Errorf("a failed up left an env file")
	}
}
