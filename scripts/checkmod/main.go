// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command checkmod fails when the library module's go.mod requires a module
// that a user of the library should not have to take: anything beyond
// OpenTelemetry, otelhttp and their own dependencies. The demo, the
// inspector, the end-to-end suites and the benchmarks have modules of their
// own, so their dependencies never reach this list.
//
// Usage, from the repository root: go run ./scripts/checkmod
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// allowed are the modules outside go.opentelemetry.io that the library may
// require, each because an OpenTelemetry module it uses requires it. The
// check also verifies that reason against `go mod graph`, so that this list
// cannot outlive it.
var allowed = map[string]string{
	"github.com/felixge/httpsnoop": "otelhttp",
	"github.com/go-logr/logr":      "otel (its internal logger)",
	"github.com/go-logr/stdr":      "otel (its internal logger)",
	"github.com/cespare/xxhash/v2": "otel (attribute set hashing)",
	"github.com/google/uuid":       "otel/sdk",
	"golang.org/x/sys":             "otel/sdk",
	"go.uber.org/goleak":           "otel/sdk (its tests; ours fail on leaked goroutines with it)",
}

const otelPrefix = "go.opentelemetry.io/"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "checkmod:", err)
		os.Exit(1)
	}
	fmt.Println("checkmod: the library's go.mod requires only OpenTelemetry, otelhttp and their dependencies")
}

func run() error {
	out, err := goCmd("mod", "edit", "-json")
	if err != nil {
		return err
	}
	var mod struct {
		Module  struct{ Path string }
		Require []struct{ Path string }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		return fmt.Errorf("reading go mod edit -json: %w", err)
	}
	if mod.Module.Path != "github.com/otelretry/otelretry-go" {
		return fmt.Errorf("run it from the repository root (module %q)", mod.Module.Path)
	}
	requiredByOTel, err := otelRequirements()
	if err != nil {
		return err
	}
	var bad []string
	for _, r := range mod.Require {
		switch _, listed := allowed[r.Path]; {
		case strings.HasPrefix(r.Path, otelPrefix):
		case !listed:
			bad = append(bad, r.Path+": not an OpenTelemetry module nor one of their dependencies")
		case !requiredByOTel[r.Path]:
			bad = append(bad, r.Path+": listed as required by "+allowed[r.Path]+", but no OpenTelemetry module requires it any more")
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("go.mod requires too much:\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}

// otelRequirements returns the modules that some go.opentelemetry.io
// module in the library's graph requires.
func otelRequirements() (map[string]bool, error) {
	out, err := goCmd("mod", "graph")
	if err != nil {
		return nil, err
	}
	req := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(from, otelPrefix) {
			continue
		}
		path, _, _ := strings.Cut(to, "@")
		req[path] = true
	}
	return req, sc.Err()
}

func goCmd(args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOWORK=off") // the module as its users see it
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}
