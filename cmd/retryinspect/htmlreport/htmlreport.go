// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package htmlreport

import (
	"errors"
	"io"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/inspect"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/render"
)

// Result counts what a report holds.
type Result struct {
	Operations, Attempts, Findings, Notes int
}

// Report is a set of spans read and checked against the retry attempt
// contract, ready to be written as retryinspect writes it. It does not
// change once read: its methods may be called from several goroutines at
// once, and each writes the same bytes every time for the same input.
type Report struct {
	r      *inspect.Report
	source string
}

// ReadStdout reads spans as the stdouttrace exporter writes them (at most
// 64 MiB, as the command's default) from r and inspects them. source names
// the input on the page and in errors.
func ReadStdout(r io.Reader, source string) (*Report, error) {
	spans, err := read.Stdout(r, source, read.DefaultMaxBytes)
	if err != nil {
		return nil, err
	}
	if len(spans) == 0 {
		return nil, errors.New("no spans in " + source)
	}
	return &Report{r: inspect.Analyze(spans), source: source}, nil
}

// Result counts the report's operations, attempts, findings and notes.
func (r *Report) Result() Result {
	return Result{Operations: r.r.Summary.Operations, Attempts: r.r.Summary.Attempts,
		Findings: len(r.r.Findings), Notes: len(r.r.Notes)}
}

// WriteHTML writes the HTML report, as `retryinspect -html FILE` does.
func (r *Report) WriteHTML(w io.Writer) error {
	return render.HTML(w, r.r, render.HTMLOptions{Source: r.source})
}

// WriteText writes the text report, as `retryinspect FILE` prints it.
func (r *Report) WriteText(w io.Writer) error { return render.Text(w, r.r) }

// WriteAttempts writes the attempt table of the operation whose span id
// (hex) is spanID, as the text report prints it, each line after indent.
// It reports false, writing nothing, when no operation has that span.
func (r *Report) WriteAttempts(w io.Writer, spanID, indent string) (bool, error) {
	for i := range r.r.Operations {
		if op := &r.r.Operations[i]; op.SpanID == spanID {
			return true, render.Attempts(w, op, indent)
		}
	}
	return false, nil
}
