// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/tracefixture"
)

// TestFuzzSeeds keeps the seeds of the readers' fuzz targets
// (internal/readfuzz) what the fixtures write: a few crafted span sets in
// each span format. The targets read the committed files, so that their
// fuzzing build does not compile the fixtures' SDK and exporters; -update
// rewrites them.
func TestFuzzSeeds(t *testing.T) {
	formats := []struct {
		dir, ext string
		write    func(io.Writer, ...tracefixture.Span) error
	}{
		{"stdout", ".json", func(w io.Writer, roots ...tracefixture.Span) error {
			return tracefixture.WriteStdout(w, false, roots...)
		}},
		{"otlp", ".jsonl", tracefixture.WriteOTLP},
		{"jaeger", ".json", tracefixture.WriteJaeger},
	}
	for _, format := range formats {
		for _, name := range []string{"clean-read", "unsafe-resend", "contract-attributes", "outer-layer-resend", "minimal-contract"} {
			var buf bytes.Buffer
			if err := format.write(&buf, caseNamed(t, name).roots...); err != nil {
				t.Fatal(err)
			}
			compareFile(t, filepath.Join("internal", "readfuzz", "testdata", "seeds", format.dir, name+format.ext), buf.String())
		}
	}
}
