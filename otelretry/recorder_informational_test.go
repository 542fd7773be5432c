// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/internal/spantest"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A base that hands back an informational answer other than 101 as the
// final one: it is no success, so the attempt span carries error.type (the
// status), as its log record does ("exactly the attributes of the attempt
// span"), in both span modes. otelhttp types only statuses below 100 and
// from 400 on on its CLIENT span: the span had none where the record had
// "103" (a reviewer's find).
func TestAFinalInformationalAnswerHasItsErrorTypeOnTheSpan(t *testing.T) {
	for _, status := range []int{100, 103, 199} {
		for _, own := range []bool{false, true} {
			spans := tracetest.NewSpanRecorder()
			logs := &logRecorder{}
			opts := []otelretry.Option{otelretry.WithMaxAttempts(1),
				otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))),
				otelretry.WithLoggerProvider(sdklog.NewLoggerProvider(sdklog.WithProcessor(logs)))}
			if own {
				opts = append(opts, otelretry.WithoutClientSpans())
			}
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
			})
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/a", nil)
			if resp, err := otelretry.NewTransport(base, opts...).RoundTrip(req); err == nil {
				resp.Body.Close()
			}
			attempts, records := spantest.Attempts(spans.Ended()), logs.named("retry.attempt")
			if len(attempts) != 1 || len(records) != 1 {
				t.Fatalf("%d: %d attempt spans, %d records", status, len(attempts), len(records))
			}
			onSpan, _ := spantest.Attr(attempts[0], "error.type")
			onRecord := recordAttrs(records[0])["error.type"]
			if want := strconv.Itoa(status); onSpan.AsString() != want || onRecord.AsString() != want {
				t.Errorf("%d (WithoutClientSpans %v): error.type %q on the span, %q on the record; want %q on both", status, own, onSpan.AsString(), onRecord.AsString(), want)
			}
		}
	}
}
