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

// writeHTMLReport writes retryinspect's HTML report of the recorded spans
// to path (a new file in the temporary directory when path is empty), as
// `retryinspect -html FILE traces.json` would, whatever
// exporter the spans went to, and says where it is.
func writeHTMLReport(ctx context.Context, w io.Writer, path string, spans []sdktrace.ReadOnlySpan) error {
	var buf bytes.Buffer
	exp, err := stdouttrace.New(stdouttrace.WithWriter(&buf))
	if err != nil {
		return err
	}
	if err := exp.ExportSpans(ctx, spans); err != nil {
		return err
	}
	if err := exp.Shutdown(ctx); err != nil {
		return err
	}
	var f *os.File
	if path == "" {
		f, err = os.CreateTemp("", "otelretry-demo-report-*.html")
	} else {
		f, err = os.Create(path)
	}
	if err != nil {
		return fmt.Errorf("HTML report: %w", err)
	}
	res, err := htmlreport.FromStdout(f, &buf, "the demo's spans")
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("HTML report %s: %w", f.Name(), err)
	}
	fmt.Fprintf(w, "  report:  retryinspect's HTML report in %s (%d operations, %d attempts, %d findings): open it in a browser\n",
		f.Name(), res.Operations, res.Attempts, res.Findings)
	return nil
}
