// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

func TestLoggerWritesOneRecordPerAttemptMatchingTheSpan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		h := newHarness(t, []scripted.Step{{Delay: 80 * time.Millisecond, Status: 503}, {Delay: 50 * time.Millisecond, Status: 200}},
			append(seedOptions, otelretry.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))...)
		resp, err := h.client.Do(get(t, otelretry.WithOperationID(t.Context(), "op-1"), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		dec := json.NewDecoder(&buf)
		var records []map[string]any
		for dec.More() {
			var r map[string]any
			if err := dec.Decode(&r); err != nil {
				t.Fatal(err)
			}
			records = append(records, r)
		}
		spans := h.attempts()
		if len(records) != 2 || len(spans) != 2 {
			t.Fatalf("records=%d attempt spans=%d, want 2 each", len(records), len(spans))
		}
		for i, r := range records {
			e := readEvent(t, spans[i])
			if r["retry.request.id"] != e.RequestID || r["retry.decision"] != e.Decision ||
				r["retry.remaining_ms"] != float64(e.RemainingMs) || r["retry.elapsed_ms"] != float64(e.ElapsedMs) ||
				r["http.response.status_code"] != float64(e.Status) {
				t.Errorf("record %d = %v, span event = %+v", i, r, e)
			}
			if r["span_id"] != spans[i].SpanContext().SpanID().String() || r["trace_id"] != spans[i].SpanContext().TraceID().String() {
				t.Errorf("record %d is not tied to its attempt span", i)
			}
			if _, both := r["retry.error_class"]; both {
				t.Errorf("record %d has an error class next to a status", i)
			}
		}
	})
}
