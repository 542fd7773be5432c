// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/cmd/retryinspect/internal/read"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/retryinspect.md: the retry.attempt and retry.operation records
// "give the same per-operation table and the same findings as the spans
// of the same run". A refused hedge is a hedge_refused event of the
// operation span; a record has no events, so the operation record carries
// their reasons (retry.hedge.refused). Four slow GETs under
// Hedging{MaxShare: 0.001}: the first sends its hedge, the other three are
// refused theirs (hedge_limit). The report from the records, OTLP's and
// VictoriaLogs', says so as the spans' does: it said "none" before.
func TestLogRecordsTellTheRefusedHedges(t *testing.T) {
	spans, logs := recordedRun(t, func(t *testing.T, tp *sdktrace.TracerProvider, lp *sdklog.LoggerProvider, ctx context.Context) {
		rt := otelretry.NewTransport(scripted.New(scripted.Step{Delay: 100 * time.Millisecond, Status: 200}),
			otelretry.WithTracerProvider(tp), otelretry.WithLoggerProvider(lp), otelretry.WithoutClientSpans(),
			otelretry.WithHedging(otelretry.Hedging{Delay: 20 * time.Millisecond, MaxShare: 0.001}))
		c := &http.Client{Transport: rt}
		for range 4 {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/x", nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	headline := regexp.MustCompile(`(?m)^  a\.test: .*$`)
	fromSpans := headline.FindString(textReport(t, spans, read.Stdout))
	if !regexp.MustCompile(`hedges refused: hedge_limit 3$`).MatchString(fromSpans) {
		t.Fatalf("setup: the spans' headline %q", fromSpans)
	}
	for name, text := range map[string]string{
		"spans":        textReport(t, spans, read.Stdout),
		"otlp logs":    textReport(t, logs, read.OTLP),
		"victorialogs": textReport(t, toVictoriaLogs(t, logs), read.VictoriaLogs),
	} {
		if got := headline.FindString(text); got != fromSpans {
			t.Errorf("%s: the headline from the log records says\n  %s\nthe spans of the same run say\n  %s", name, got, fromSpans)
		}
		perOperation := regexp.MustCompile(`hedges refused hedge_limit`)
		if got, want := len(perOperation.FindAllString(text, -1)), 3; got != want {
			t.Errorf("%s: %d operations say they refused a hedge, want %d:\n%s", name, got, want, text)
		}
	}
}
