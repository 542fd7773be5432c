// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// InChildProcess runs t again in a child process with key=1 in its
// environment, and reports whether this is that child: a test that sets
// the global providers, which take effect once per process, runs its body
// there. Exported for the package's external tests only (a _test file).
func InChildProcess(t *testing.T, key string) bool {
	t.Helper()
	if os.Getenv(key) == "1" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), key+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("PASS")) {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	return false
}
