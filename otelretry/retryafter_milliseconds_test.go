// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/otelretry"
)

// Each retry-after-ms value through the transport, read as openai-go reads
// it, under a 10 s deadline with Retry-After: 1 behind it: a hint that
// fits is waited once, one past the deadline ends the operation at once
// (no sleep), a value that is no hint leaves retry_after_invalid with a
// problem from the closed set (never the value) and the next header (1 s)
// is read (a reviewer's table; "-1e400" was recorded as not_a_number).
func TestRetryAfterMsValuesThroughTheTransport(t *testing.T) {
	for _, tc := range []struct {
		value string
		wait  time.Duration // -1: no hint, Retry-After's 1 s; -2: deadline_exceeded at once
		prob  attrs.HintProblem
	}{
		{"0x1p3", 8 * time.Millisecond, ""},
		{"+5e2", 500 * time.Millisecond, ""},
		{" \t2500.\t ", 2500 * time.Millisecond, ""},
		{"-0", 0, ""},
		{"1e-400", 0, ""},
		{"9999", 9999 * time.Millisecond, ""},
		{"10000", -2, ""},
		{"1e400", -2, ""},
		{strings.Repeat("9", 400), -2, ""},
		{"INFINITY", -1, attrs.HintProblemNotANumber},
		{"nan", -1, attrs.HintProblemNotANumber},
		{"-5", -1, attrs.HintProblemNegative},
		{"-1e400", -1, attrs.HintProblemNegative},
		{"100, 200", -1, attrs.HintProblemNotANumber},
	} {
		t.Run(tc.value, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				run := hintedThenOK(t, tc.value)
				r, took := run.result, run.took
				problem := ""
				for _, s := range run.spans {
					for _, a := range s.Attributes() {
						if tc.wait == -1 && len(strings.TrimSpace(tc.value)) > 5 && strings.Contains(a.Value.Emit(), strings.TrimSpace(tc.value)) {
							t.Errorf("span %s attribute %s carries the value", s.Name(), a.Key)
						}
					}
					for _, e := range s.Events() {
						for _, a := range e.Attributes {
							if a.Key == attrs.RetryHintProblemKey {
								problem = a.Value.AsString()
							}
						}
					}
				}
				switch tc.wait {
				case -2:
					if r.Outcome != attrs.OutcomeDeadlineExceeded || r.Attempts != 1 || took != 0 || problem != "" {
						t.Errorf("%s after %d attempts in %v (problem %q); want deadline_exceeded at once after 1", r.Outcome, r.Attempts, took, problem)
					}
				case -1:
					if r.Outcome != attrs.OutcomeReturn || r.Attempts != 2 || took != time.Second || problem != string(tc.prob) {
						t.Errorf("%s after %d attempts in %v, problem %q; want return after 2, 1 s apart, problem %q", r.Outcome, r.Attempts, took, problem, tc.prob)
					}
				default:
					if r.Outcome != attrs.OutcomeReturn || r.Attempts != 2 || took != tc.wait || problem != "" {
						t.Errorf("%s after %d attempts in %v, problem %q; want return after 2, %v apart", r.Outcome, r.Attempts, took, problem, tc.wait)
					}
				}
			})
		})
	}
}

// hintRun is one GET through a Transport whose base answers 503 with a
// retry-after-ms hint (and Retry-After: 1 behind it), then 200.
type hintRun struct {
	result otelretry.OperationResult
	took   time.Duration
	spans  []sdktrace.ReadOnlySpan
}

// hintedThenOK runs one GET, under a 10 s deadline, whose first answer is
// a 503 carrying retry-after-ms: value, read with opts beside the
// defaults. Call it inside a synctest bubble.
func hintedThenOK(t *testing.T, value string, opts ...otelretry.Option) hintRun {
	t.Helper()
	var calls atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) > 1 {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}
		h := http.Header{"Retry-After-Ms": {value}, "Retry-After": {"1"}}
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: h, Body: http.NoBody, Request: r}, nil
	})
	rec := tracetest.NewSpanRecorder()
	tr := otelretry.NewTransport(base, append([]otelretry.Option{otelretry.WithoutBudget(), otelretry.WithDeadline(10 * time.Second),
		otelretry.WithBackoff(otelretry.ConstantBackoff(0)),
		otelretry.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))}, opts...)...)
	var results otelretry.Results
	req, _ := http.NewRequestWithContext(otelretry.WithResults(t.Context(), &results), http.MethodGet, "http://api.test/x", nil)
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	took := time.Since(start)
	r, _ := results.Last()
	return hintRun{result: r, took: took, spans: rec.Ended()}
}
