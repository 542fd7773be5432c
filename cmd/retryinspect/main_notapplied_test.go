// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// TestAResendAfterNotAppliedIsNoOuterLayerResend's run (a write whose
// state checks found it not_applied twice, ended max_attempts with its
// outcome known, sent again by docs/layers.md's otelretryDecides loop),
// read from the log records the same run wrote. From its spans
// retryinspect reports no outer-layer-resend (foundNotApplied);
// from its log records, which carry no state check's answer, it reports
// one, a finding (exit 1). docs/retryinspect.md: "What only the span tree
// tells is a needs-spans note, never a false finding: ... a write sent
// again after check_state (the state check answers on its span)"; and
// TestScenariosAgreeWithMetrics holds a run's findings from logs to those
// from its spans.
func TestAResendAfterNotAppliedIsNoFindingFromLogsEither(t *testing.T) {
	var errs []error
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		hook := func(ctx context.Context, c otelretry.StateCheck) (otelretry.StateResult, error) {
			return otelretry.StateResult{State: attrs.StateNotApplied}, nil
		}
		timeout := scripted.Step{Delay: 50 * time.Millisecond, Err: errNoAnswer}
		rt := e.transport(scripted.New(timeout, timeout, step(10, 201)),
			otelretry.WithStateCheck(hook), otelretry.WithMaxAttempts(2), otelretry.WithoutBudget())
		ctx := otelretry.WithOperationID(e.ctx, "sdk-op")
		for {
			_, err := send(t, rt, ctx, http.MethodPost, "http://orders.test/orders")
			var oe *otelretry.Error
			if err == nil || !errors.As(err, &oe) || oe.Outcome != attrs.OutcomeMaxAttempts || errors.Is(err, otelretry.ErrOutcomeUnknown) {
				break // docs/layers.md's otelretryDecides: stop
			}
			errs = append(errs, err)
			time.Sleep(50 * time.Millisecond)
		}
	})
	if len(errs) != 1 {
		t.Fatalf("setup: %d tries ended max_attempts with a known outcome, want 1: %v", len(errs), errs)
	}
	_, srep, _ := reportJSON(t, r.spans)
	if n := findingCodes(srep)["outer-layer-resend"]; n != 0 {
		t.Fatalf("setup: from spans %d outer-layer-resend, want 0", n)
	}
	code, lrep, _ := reportJSON(t, r.logs)
	if got, want := mapText(findingCodes(lrep)), mapText(findingCodes(srep)); got != want {
		t.Errorf("findings from the run's log records: %q (exit %d); from its spans: %q\n%s", got, code, want, textOf(t, r.logs))
	}
}
