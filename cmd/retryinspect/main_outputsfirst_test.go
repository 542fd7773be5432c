// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// An -o or -html file that cannot be written (its directory missing, or
// the name a directory) is refused before any backend is asked, as the
// demo refuses one before it plays; it was found after the query (a
// reviewer's find).
func TestAnUnwritableOutputIsRefusedBeforeTheQuery(t *testing.T) {
	raw, err := os.ReadFile("internal/read/testdata/jaeger-trace.json")
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Write(raw)
	}))
	defer srv.Close()
	d := t.TempDir()
	if err := os.Mkdir(filepath.Join(d, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string][]string{
		"-o missing dir":    {"-o", filepath.Join(d, "missing", "r.txt")},
		"-o a directory":    {"-o", filepath.Join(d, "dir")},
		"-html missing dir": {"-html", filepath.Join(d, "missing", "r.html")},
		"-html a directory": {"-html", filepath.Join(d, "dir")},
	} {
		t.Run(name, func(t *testing.T) {
			asked.Store(0)
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"-jaeger", srv.URL, "-service", "demo"}, out...), &stdout, &stderr)
			if code != exitError {
				t.Fatalf("exit %d, want %d", code, exitError)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("jaeger asked %d times before the output %s was refused: %q", n, out[1], stderr.String())
			}
		})
	}
}

// -service "" with -victorialogs is an empty name, as -o "" and an empty
// FILE are: refused, not read as "every service" (a shell's unset
// variable searched every service's records silently; a reviewer's find).
func TestVictoriaLogsEmptyServiceIsRefused(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run([]string{"-victorialogs", srv.URL, "-service", ""}, &stdout, &stderr)
	if code != exitError || asked.Load() != 0 || !strings.Contains(stderr.String(), "-service") {
		t.Errorf("-victorialogs -service \"\": exit %d, %d queries, stderr %q; want exit 2, no query, a line naming -service", code, asked.Load(), stderr.String())
	}
}

// With -victorialogs a -service beside -trace narrows the query to that
// service's records of the trace, and the command names it where it says
// what it read: it named the trace alone (a reviewer's find).
func TestVictoriaLogsTraceWithServiceIsNamed(t *testing.T) {
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.Query().Get("query")
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := run([]string{"-victorialogs", srv.URL, "-trace", "4b000000000000000000000000000001", "-service", "checkout"}, &stdout, &stderr)
	if code != exitError || !strings.Contains(query, "checkout") || !strings.Contains(stderr.String(), `of service "checkout"`) {
		t.Errorf("exit %d, query %q, stderr %q; want exit 2 (no records), the service in the query and in the message", code, query, stderr.String())
	}
}
