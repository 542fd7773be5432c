// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// docs/telemetry.md: a record has no events, so the retry.operation record
// carries what the operation span's body_not_buffered event tells: why the
// body was not buffered (here too large), which is why the PUT's 503 was
// not retried.
func TestTheOperationRecordSaysWhyTheBodyWasNotBuffered(t *testing.T) {
	h, logs := newLogHarness(t, []scripted.Step{{Status: http.StatusServiceUnavailable}},
		otelretry.WithBodyBuffer(4, 1<<20), otelretry.WithIdempotentMethods(http.MethodPut), otelretry.WithoutBudget())
	req, _ := putWithoutGetBody(t, context.Background(), "http://api.test/x", strings.NewReader("payload"), 7)
	resp, err := h.transprt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ops := logs.named(attrs.LogEventOperation)
	if len(ops) != 1 {
		t.Fatalf("%d operation records, want 1", len(ops))
	}
	if got := recordAttrs(ops[0])[attrs.BodyBufferReasonKey].AsString(); got != "too_large" {
		t.Errorf("the operation record's %s = %q, want too_large", attrs.BodyBufferReasonKey, got)
	}
	if n := len(h.base.Calls()); n != 1 {
		t.Errorf("%d calls, want 1: the body could not be sent again", n)
	}
}

// attrs.HedgesRefusedKey: the retry.operation record of an operation that
// refused a hedge carries the reasons of its span's hedge_refused events
// (here a repeatable POST whose body cannot be replayed: not_replayable).
func TestTheOperationRecordSaysWhyItsHedgesWereRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logs := newLogHarness(t, []scripted.Step{{Delay: 100 * time.Millisecond, Status: 200}},
			otelretry.WithHedging(otelretry.Hedging{Delay: 10 * time.Millisecond, MaxShare: 1}), otelretry.WithBodyBuffer(0, 0))
		req := post(t, otelretry.WithIntent(t.Context(), otelretry.Intent{Repeatable: true}), "http://api.test/search", "q")
		req.GetBody = nil
		req.Body = io.NopCloser(strings.NewReader("q"))
		resp, err := h.transprt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		recs := logs.named(attrs.LogEventOperation)
		if len(recs) != 1 {
			t.Fatalf("%d operation records, want 1", len(recs))
		}
		got := recordAttrs(recs[0])[attrs.HedgesRefusedKey].AsStringSlice()
		if want := []string{"not_replayable"}; !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", attrs.HedgesRefusedKey, got, want)
		}
	})
}
