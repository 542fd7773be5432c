// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
	"net/http"
)

// Review: a write without a key whose answer was lost is looked up, and
// the state check finds it not applied; the caller cancels while the
// check runs, so the operation ends canceled (callerGone: "known not
// applied: nothing unknown"). The application sends the order again
// under the same operation id. The spans give no finding (foundNotApplied:
// the last state check said not_applied, no attempt after it); the log
// records of the same run must agree (the [Unreleased] Fixed entry:
// "from log records, an operation that ended budget_exhausted or
// throttled after its state check found the write not applied gave a
// false outer-layer-resend ... (spans gave none)").
func TestLogsOfAWriteFoundNotAppliedThenCanceledGiveNoResend(t *testing.T) {
	var firstErr error
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		ctx := otelretry.WithOperationID(e.ctx, "order-7")
		ctx1, cancel1 := context.WithCancel(ctx)
		defer cancel1()
		check := func(_ context.Context, _ otelretry.StateCheck) (otelretry.StateResult, error) {
			cancel1() // the caller gives up while the lookup runs
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		}
		base := scripted.New(scripted.Step{Hang: true}, scripted.Step{Status: http.StatusCreated})
		rt := e.transport(base, otelretry.WithStateCheck(check), otelretry.WithAttemptTimeout(100*time.Millisecond),
			otelretry.WithBackoff(otelretry.ConstantBackoff(10*time.Millisecond)))
		_, firstErr = sendKeyed(t, rt, ctx1, "")
		t.Logf("first: %v", firstErr)
		time.Sleep(10 * time.Millisecond)
		status, err := sendKeyed(t, rt, ctx, "")
		t.Logf("second: %d %v; calls %d", status, err, len(base.Calls()))
	})
	spansAndLogsClean(t, r)
}
