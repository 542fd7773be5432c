// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A write without a key whose answer was lost (check_state) waits
// for its state check (WithStateCheckDelay); the caller gives up before
// the check runs, so no check runs and the operation ends canceled with
// its write's outcome unknown (policy.callerGone(in, true)). The
// application then sends the order again under the same operation id: a
// real outer-layer-resend of a write that may have been applied. From the
// spans (which show that no state check ran) this is a finding; from the
// log records, which cannot tell whether a check ran or what it found, a
// needs-spans note (docs/retryinspect.md).
func TestSpansOfAnUnknownWriteCanceledBeforeItsCheckGiveAResend(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		ctx := otelretry.WithOperationID(e.ctx, "order-7")
		ctx1, cancel1 := context.WithCancel(ctx)
		defer cancel1()
		checked := false
		check := func(_ context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
			checked = true
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		}
		base := scripted.New(scripted.Step{Hang: true}, scripted.Step{Status: http.StatusCreated})
		rt := e.transport(base, otelretry.WithStateCheck(check), otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithStateCheckDelay(time.Second), otelretry.WithDeadline(10*time.Second),
			otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
		stop := time.AfterFunc(500*time.Millisecond, cancel1) // virtual time: during the check's delay
		defer stop.Stop()
		_, firstErr := sendKeyed(t, rt, ctx1, "")
		t.Logf("first: %v (unknown: %v), check ran: %v", firstErr, errors.Is(firstErr, otelretry.ErrOutcomeUnknown), checked)
		if checked {
			t.Fatalf("setup: the state check ran")
		}
		time.Sleep(10 * time.Millisecond)
		status, err := sendKeyed(t, rt, ctx, "")
		t.Logf("second: %d %v; calls %d", status, err, len(base.Calls()))
	})
	code, out := reviewDump(t, "spans", r.spans)
	t.Logf("spans:\n%s", out)
	if code != exitFindings || !strings.Contains(out, "[outer-layer-resend]") {
		t.Errorf("spans: exit %d, want %d with an outer-layer-resend finding:\n%s", code, exitFindings, grepLines(out, "["))
	}
	code, out = reviewDump(t, "logs", r.logs)
	t.Logf("logs:\n%s", out)
	if !strings.Contains(out, "[needs-spans]") || strings.Contains(out, "[outer-layer-resend]") {
		t.Errorf("logs: exit %d, want a needs-spans note and no finding:\n%s", code, grepLines(out, "["))
	}
}
