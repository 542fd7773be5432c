// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package realclients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The codes of cmd/retryinspect (cmd/retryinspect/internal/inspect/codes.go)
// these tests expect; that package is internal to its module.
const (
	codeOuterLayerResend = "outer-layer-resend"
)

// inspector is cmd/retryinspect, built once from this repository the way
// its users build it (its own module, GOWORK=off) and run as a program.
var inspector retryinspect

type retryinspect struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func (r *retryinspect) build() (string, error) {
	r.once.Do(func() {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			r.err = err
			return
		}
		if r.dir, r.err = os.MkdirTemp("", "realclients-retryinspect-"); r.err != nil {
			return
		}
		r.bin = filepath.Join(r.dir, "retryinspect")
		cmd := exec.Command("go", "build", "-C", filepath.Join(root, "cmd", "retryinspect"), "-o", r.bin, ".")
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			r.err = errors.New("building cmd/retryinspect: " + err.Error() + "\n" + string(out))
		}
	})
	return r.bin, r.err
}

func (r *retryinspect) remove() {
	if r.dir != "" {
		os.RemoveAll(r.dir)
	}
}

// report is the part of retryinspect's --json report these tests read.
type report struct {
	Spans struct {
		Operation int `json:"operation"`
		Attempt   int `json:"attempt"`
	} `json:"spans"`
	Findings []struct {
		Code        string `json:"code"`
		OperationID string `json:"operation_id"`
		SpanID      string `json:"span_id"`
		Seen        string `json:"seen"`
	} `json:"findings"`
}

// codes returns how many findings of each code the report holds.
func (r report) codes() map[string]int {
	m := map[string]int{}
	for _, f := range r.Findings {
		m[f.Code]++
	}
	return m
}

// without returns r's finding counts less the codes given.
func (r report) without(codes ...string) map[string]int {
	m := r.codes()
	for _, c := range codes {
		delete(m, c)
	}
	return m
}

// tolerated returns the codes retryinspect may report beside the ones a
// test is about: none. (Under WithOperationID an outer layer's repeats
// keep counting attempts, so request ids never repeat.)
func tolerated(callContext) []string { return nil }

// writeStdouttrace writes spans as go.opentelemetry.io's stdouttrace
// exporter does, to path.
func writeStdouttrace(t *testing.T, path string, spans []sdktrace.ReadOnlySpan) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := stdouttrace.New(stdouttrace.WithWriter(f), stdouttrace.WithPrettyPrint())
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// inspect runs `retryinspect -json path` and returns its report
// and exit status (0 clean, 1 findings; 2, an input error, fails the test).
func inspect(t *testing.T, path string) (report, int) {
	t.Helper()
	bin, err := inspector.build()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "-json", path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatal(err)
		}
		code = exit.ExitCode()
	}
	if code != 0 && code != 1 {
		t.Fatalf("retryinspect %s: exit %d: %s", path, code, stderr.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("retryinspect -json: %v\n%s", err, stdout.String())
	}
	return rep, code
}
