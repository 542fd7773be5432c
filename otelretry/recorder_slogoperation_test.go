// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/telemetry.md: WithLogger writes a record per attempt, and the
// operation's record for an operation that made none (refused or stopped
// before its first call), so that every operation leaves a record in the
// application's own logs. A throttle that refuses every request: the
// first operation's attempt is a record, and each refused one is an
// operation record, outcome throttled; the operations that made an
// attempt get no operation record there.
func TestEveryOperationLeavesASlogRecord(t *testing.T) {
	var logs bytes.Buffer
	h := newHarness(t, []scripted.Step{{Status: http.StatusServiceUnavailable}},
		otelretry.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
		otelretry.WithThrottle(&otelretry.Throttle{MaxRejection: 1}), otelretry.WithMaxAttempts(1), otelretry.WithoutBudget())
	var throttled int
	for range 6 {
		resp, err := h.transprt.RoundTrip(get(t, t.Context(), "http://api.test/v1"))
		switch {
		case errors.Is(err, otelretry.ErrThrottled):
			throttled++
		case err == nil:
			resp.Body.Close()
		}
	}
	if throttled == 0 {
		t.Fatal("no operation was throttled")
	}
	var attempts, operations int
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		switch rec["msg"] {
		case "retry attempt":
			attempts++
		case "retry operation":
			operations++
			if rec[string(attrs.OutcomeKey)] != string(attrs.OutcomeThrottled) || rec[string(attrs.AttemptsKey)] != float64(0) {
				t.Errorf("operation record %v, want outcome throttled after 0 attempts", rec)
			}
			if rec["level"] != "ERROR" {
				t.Errorf("operation record at %v, want ERROR", rec["level"])
			}
		}
	}
	if attempts != len(h.base.Calls()) || operations != throttled {
		t.Errorf("%d attempt records for %d calls, %d operation records for %d throttled operations", attempts, len(h.base.Calls()), operations, throttled)
	}
}
