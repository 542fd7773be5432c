// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package readfuzz

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
)

// fuzzLimit keeps every fuzz input small.
const fuzzLimit = 1 << 20

// The committed inputs the targets start from, relative to this package:
// the crafted span sets (TestFuzzSeeds in cmd/retryinspect writes them),
// the end-to-end stack's captures (internal/read/testdata) and the log
// capture (cmd/retryinspect/testdata/logs).
const (
	seedDir    = "testdata/seeds"
	captureDir = "../read/testdata"
	logsDir    = "../../testdata/logs"
)

func FuzzStdout(f *testing.F) {
	addFiles(f, seedDir, "stdout", "*")
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, err := read.Stdout(bytes.NewReader(data), "in", fuzzLimit)
		checkPipeline(t, spans, err)
	})
}

func FuzzOTLP(f *testing.F) {
	addFiles(f, seedDir, "otlp", "*")
	addFiles(f, captureDir, "collector-*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, err := read.OTLP(bytes.NewReader(data), "in", fuzzLimit)
		checkPipeline(t, spans, err)
	})
}

// FuzzJaeger feeds the reader of Jaeger's saved answers, whose /api/v3
// branch is the one -jaeger reads with: the captures of both APIs, the
// crafted /api/v3 sets and hostile /api/traces variants.
func FuzzJaeger(f *testing.F) {
	addFiles(f, seedDir, "jaeger", "*")
	addFiles(f, captureDir, "jaeger-*.json")
	f.Add([]byte(`{"data":[{"traceID":"1","spans":[{"traceID":"1","spanID":"2","references":[{"refType":"CHILD_OF","traceID":"1","spanID":"2"}],"startTime":9223372036854775807,"duration":1,"tags":[{"key":"span.kind","type":"string","value":"client"},{"key":"retry.attempt","type":"int64","value":"9223372036854775807"}],"logs":[{"timestamp":-1,"fields":[]}],"processID":"p"}],"processes":{}}],"errors":[{"code":500}]}`))
	f.Add([]byte(`{"traceID":"ff","spans":[{"traceID":"ff","spanID":"1","startTime":0,"duration":0,"tags":[{"key":"otel.status_code","value":"ERROR"},{"key":"error","type":"bool","value":true},{"key":"b","type":"binary","value":"AA=="}],"logs":[{"timestamp":1,"fields":[{"key":"event","value":"retry.attempt"},{"key":"event","value":"x"}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, err := read.JaegerSaved(bytes.NewReader(data), "in", fuzzLimit)
		checkPipeline(t, spans, err)
	})
}

// FuzzOTLPLogs feeds the OTLP reader its logs documents: the capture's
// log events and hostile variants.
func FuzzOTLPLogs(f *testing.F) {
	addFiles(f, logsDir, "capture-logs.jsonl")
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
	addFiles(f, logsDir, "capture-victorialogs.jsonl")
	f.Add([]byte(`{"_time":"9999-12-31T23:59:59.999999999Z","event_name":"retry.attempt","retry.elapsed_ms":"9223372036854775807","_stream":"{a=\"\\\"\",b"}` + "\n"))
	f.Add([]byte(`{"_time":"","event.name":"retry.operation","retry.operation.duration_ms":1e400,"trace_id":"0","span_id":"","retry.attempts":"x"}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, err := read.VictoriaLogs(bytes.NewReader(data), "in", fuzzLimit)
		checkPipeline(t, spans, err)
	})
}

// addFiles adds every committed file that the path elements (the last a
// pattern) match as a seed; none matching is an error, so that a moved
// capture cannot leave a target without its seeds.
func addFiles(f *testing.F, elem ...string) {
	pattern := filepath.Join(elem...)
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed matches %s (%v)", pattern, err)
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
