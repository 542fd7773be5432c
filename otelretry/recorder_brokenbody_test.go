// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/internal/spantest"
)

// docs/telemetry.md: the retry.attempt record is written when the attempt
// ends, at its headers. A 200 whose body then breaks as the caller reads
// it (its deadline cuts a stalled body) has its error.type on otelhttp's
// CLIENT span, which ends with the body, and not on the record, written
// before the body was read.
func TestABodyThatBreaksAfterTheRecordIsOnTheClientSpanAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logs := newLogHarness(t, []scripted.Step{{Status: 200, Body: "abc", Stall: true}})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		resp, err := h.client.Do(get(t, ctx, "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(logs.named(attrs.LogEventAttempt)); n != 1 {
			t.Fatalf("%d attempt records before the body was read, want 1", n)
		}
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Fatal("the stalled body's read did not fail at the deadline")
		}
		resp.Body.Close()
		att := h.attempts()
		if len(att) != 1 {
			t.Fatalf("%d attempt spans, want 1", len(att))
		}
		if v, _ := spantest.Attr(att[0], attrs.ErrorTypeKey); v.AsString() != string(attrs.ErrorClassTimeout) {
			t.Errorf("the CLIENT span's error.type %q, want timeout", v.AsString())
		}
		rec := recordAttrs(logs.named(attrs.LogEventAttempt)[0])
		if v, ok := rec[attrs.ErrorTypeKey]; ok {
			t.Errorf("the record carries error.type %s; it was written at the headers", v.Emit())
		}
		if rec[attrs.DecisionKey].AsString() != string(attrs.DecisionReturn) {
			t.Errorf("the record's decision %s, want return", rec[attrs.DecisionKey].Emit())
		}
	})
}
