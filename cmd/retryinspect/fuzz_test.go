// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/render"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// The fuzz targets, one per reader, feed arbitrary bytes to the reader and
// whatever it accepts to the inspector and both renderers: malformed input
// must end in an error or in findings, never in a panic, and the text,
// JSON and HTML reports must all be written (the modes agree on what was
// read).

// fuzzLimit keeps every fuzz input small.
const fuzzLimit = 1 << 20

func FuzzStdout(f *testing.F) {
	seedFuzz(f, func(w io.Writer, roots ...tracefixture.Span) error {
		return tracefixture.WriteStdout(w, false, roots...)
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, err := read.Stdout(bytes.NewReader(data), "in", fuzzLimit)
		checkPipeline(t, spans, err)
	})
}

func FuzzOTLP(f *testing.F) {
	seedFuzz(f, tracefixture.WriteOTLP)
	addCaptures(f, "collector-*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, err := read.OTLP(bytes.NewReader(data), "in", fuzzLimit)
		checkPipeline(t, spans, err)
	})
}

func FuzzJaeger(f *testing.F) {
	seedFuzz(f, tracefixture.WriteJaeger)
	addCaptures(f, "jaeger-*.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, err := read.Jaeger(bytes.NewReader(data), "in", fuzzLimit)
		checkPipeline(t, spans, err)
	})
}

// FuzzOTLPLogs feeds the OTLP reader its logs documents: the capture's
// log events and hostile variants.
func FuzzOTLPLogs(f *testing.F) {
	addFile(f, logCaptureFiles.otlp)
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"eventName":"retry.attempt","timeUnixNano":"18446744073709551615","attributes":[{"key":"retry.elapsed_ms","value":{"intValue":"-9223372036854775808"}}]}]}]}]}`))
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"event.name","value":{"stringValue":"retry.operation"}},{"key":"retry.operation.duration_ms","value":{"intValue":"9223372036854775807"}}],"traceId":"zz"}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, err := read.OTLP(bytes.NewReader(data), "in", fuzzLimit)
		checkPipeline(t, spans, err)
	})
}

// FuzzVictoriaLogs feeds the VictoriaLogs reader the capture's records
// and hostile variants.
func FuzzVictoriaLogs(f *testing.F) {
	addFile(f, logCaptureFiles.victoria)
	f.Add([]byte(`{"_time":"9999-12-31T23:59:59.999999999Z","event_name":"retry.attempt","retry.elapsed_ms":"9223372036854775807","_stream":"{a=\"\\\"\",b"}` + "\n"))
	f.Add([]byte(`{"_time":"","event.name":"retry.operation","retry.operation.duration_ms":1e400,"trace_id":"0","span_id":"","retry.attempts":"x"}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, err := read.VictoriaLogs(bytes.NewReader(data), "in", fuzzLimit)
		checkPipeline(t, spans, err)
	})
}

// addFile adds one committed file as a seed.
func addFile(f *testing.F, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
}

// seedFuzz adds a few crafted span sets, written by write, as seeds.
func seedFuzz(f *testing.F, write func(io.Writer, ...tracefixture.Span) error) {
	for _, name := range []string{"clean-read", "unsafe-resend", "contract-attributes", "outer-layer-resend", "minimal-contract"} {
		var buf bytes.Buffer
		if err := write(&buf, caseNamed(f, name).roots...); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
}

// addCaptures adds the real captures of the e2e stack as seeds.
func addCaptures(f *testing.F, pattern string) {
	paths, _ := filepath.Glob(filepath.Join("internal", "read", "testdata", pattern))
	if len(paths) == 0 {
		f.Fatalf("no capture matches %s", pattern)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func checkPipeline(t *testing.T, spans []model.Span, err error) {
	if err != nil {
		return
	}
	report := inspect.Analyze(spans)
	if err := render.Text(io.Discard, report); err != nil {
		t.Fatal(err)
	}
	if err := render.JSON(io.Discard, report); err != nil {
		t.Fatalf("text renders, JSON does not: %v", err)
	}
	if err := render.HTML(io.Discard, report, render.HTMLOptions{}); err != nil {
		t.Fatalf("text renders, HTML does not: %v", err)
	}
}
