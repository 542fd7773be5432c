// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/htmlreport"
)

// inspectSpans reads the recorded spans back as `retryinspect traces.json`
// would, whatever exporter they went to: the stdouttrace JSON of the spans,
// checked against the retry attempt contract.
func inspectSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) (*htmlreport.Report, error) {
	var buf bytes.Buffer
	exp, err := stdouttrace.New(stdouttrace.WithWriter(&buf))
	if err != nil {
		return nil, err
	}
	if err := exp.ExportSpans(ctx, spans); err != nil {
		return nil, err
	}
	if err := exp.Shutdown(ctx); err != nil {
		return nil, err
	}
	return htmlreport.ReadStdout(&buf, "the demo's spans")
}

// writeHTMLReport writes retryinspect's HTML report of rep to path, or to
// a new file in the temporary directory when path is empty, and says
// where. It returns the temporary file's name ("" for path), which the
// demo removes at exit.
func writeHTMLReport(w io.Writer, path string, rep *htmlreport.Report) (temporary string, err error) {
	var f *os.File
	if path == "" {
		f, err = os.CreateTemp("", "otelretry-demo-report-*.html")
		if err == nil {
			temporary = f.Name()
		}
	} else {
		f, err = os.Create(path)
	}
	if err != nil {
		return "", fmt.Errorf("HTML report: %w", err)
	}
	if err = errors.Join(rep.WriteHTML(f), f.Close()); err != nil {
		return temporary, fmt.Errorf("HTML report %s: %w", f.Name(), err)
	}
	res := rep.Result()
	if temporary != "" {
		fmt.Fprintf(w, "  report:  retryinspect's HTML report (%d operations, %d attempts, %d findings) in a temporary file, removed at exit (-html FILE keeps it)\n",
			res.Operations, res.Attempts, res.Findings)
	} else {
		fmt.Fprintf(w, "  report:  retryinspect's HTML report in %s (%d operations, %d attempts, %d findings): open it in a browser\n",
			path, res.Operations, res.Attempts, res.Findings)
	}
	return temporary, nil
}
