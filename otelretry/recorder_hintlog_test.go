// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A malformed retry hint is on the attempt span as its retry_after_invalid
// event; a log record has no events, so the attempt's records (slog and
// OpenTelemetry logs) carry the event's two fields, with every client
// span mode: a user who reads only logs sees the hint was ignored. A
// well-formed hint adds neither.
func TestAMalformedHintIsInTheAttemptsLogRecords(t *testing.T) {
	for name, extra := range map[string][]otelretry.Option{
		"client span":         nil,
		"without client span": {otelretry.WithoutClientSpans()},
	} {
		t.Run(name, func(t *testing.T) {
			var slogs bytes.Buffer
			opts := append([]otelretry.Option{
				otelretry.WithLogger(slog.New(slog.NewJSONHandler(&slogs, nil))),
				otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget(),
			}, extra...)
			h, logs := newLogHarness(t, []scripted.Step{
				{Status: 503, Header: http.Header{"Retry-After": {"SECRET-HINT"}}},
				{Status: 503, Header: http.Header{"Retry-After": {"0"}}},
				{Status: 200},
			}, opts...)
			resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/v1"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()

			var fromEvents []string
			for _, rec := range logs.named(attrs.LogEventAttempt) {
				a := recordAttrs(rec)
				fromEvents = append(fromEvents, a[attrs.RetryHintHeaderKey].Emit()+" "+a[attrs.RetryHintProblemKey].Emit())
			}
			var fromSlog []string
			for line := range strings.Lines(slogs.String()) {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				if rec["msg"] != "retry attempt" {
					continue
				}
				header, _ := rec[string(attrs.RetryHintHeaderKey)].(string)
				problem, _ := rec[string(attrs.RetryHintProblemKey)].(string)
				fromSlog = append(fromSlog, header+" "+problem)
			}
			want := []string{"Retry-After not_a_date", " ", " "}
			if !slices.Equal(fromEvents, want) {
				t.Errorf("log events' hint fields = %q, want %q", fromEvents, want)
			}
			if !slices.Equal(fromSlog, want) {
				t.Errorf("slog records' hint fields = %q, want %q", fromSlog, want)
			}
			if strings.Contains(slogs.String(), "SECRET-HINT") {
				t.Errorf("a slog record carries the hint's value: %s", slogs.String())
			}
		})
	}
}
