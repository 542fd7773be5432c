package main

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/model"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/render"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// FuzzPipeline feeds arbitrary bytes to every reader and whatever they
// accept to the inspector and both renderers: malformed input must end in
// an error or in findings, never in a panic.
func FuzzPipeline(f *testing.F) {
	for _, name := range []string{"clean-read", "unsafe-resend", "contract-attributes"} {
		tc := caseNamed(f, name)
		var stdout, otlp, jaeger bytes.Buffer
		_ = tracefixture.WriteStdout(&stdout, false, tc.roots...)
		_ = tracefixture.WriteOTLP(&otlp, tc.roots...)
		_ = tracefixture.WriteJaeger(&jaeger, tc.roots...)
		f.Add(stdout.Bytes())
		f.Add(otlp.Bytes())
		f.Add(jaeger.Bytes())
	}
	for _, name := range []string{"collector.jsonl", "jaeger-search.json"} {
		if data, err := os.ReadFile("internal/read/testdata/" + name); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		readers := []func() ([]model.Span, error){
			func() ([]model.Span, error) { return read.Stdout(bytes.NewReader(data), "in") },
			func() ([]model.Span, error) { return read.OTLP(bytes.NewReader(data), "in") },
			func() ([]model.Span, error) {
				spans, _, err := read.Jaeger(bytes.NewReader(data), "in")
				return spans, err
			},
		}
		for _, readSpans := range readers {
			spans, err := readSpans()
			if err != nil {
				continue
			}
			report := inspect.Analyze(spans)
			if err := render.Text(io.Discard, report); err != nil {
				t.Fatal(err)
			}
			if err := render.JSON(io.Discard, report); err != nil {
				t.Fatal(err)
			}
		}
	})
}
