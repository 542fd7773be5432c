// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

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
