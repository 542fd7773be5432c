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

// FromStdout reads spans as the stdouttrace exporter writes them (at most
// 64 MiB, as the command's default) from r, inspects them and writes the
// HTML report to w. source names the input on the page and in errors.
func FromStdout(w io.Writer, r io.Reader, source string) (Result, error) {
	spans, err := read.Stdout(r, source, read.DefaultMaxBytes)
	if err != nil {
		return Result{}, err
	}
	if len(spans) == 0 {
		return Result{}, errors.New("no spans in " + source)
	}
	report := inspect.Analyze(spans)
	res := Result{Operations: report.Summary.Operations, Attempts: report.Summary.Attempts,
		Findings: len(report.Findings), Notes: len(report.Notes)}
	return res, render.HTML(w, report, render.HTMLOptions{Source: source})
}
