// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

func stateSays(s attrs.StateCheckResult) func(context.Context, otelretry.StateCheck) (otelretry.StateResult, error) {
	return func(_ context.Context, check otelretry.StateCheck) (otelretry.StateResult, error) {
		r := otelretry.StateResult{State: s}
		if s == attrs.StateApplied {
			r.Response = &http.Response{StatusCode: http.StatusCreated, Body: http.NoBody, Header: http.Header{}, Request: check.Request}
		}
		return r, nil
	}
}

// sendKeyed sends one POST under the caller's idempotency key.
func sendKeyed(t *testing.T, rt http.RoundTripper, ctx context.Context, key string) (int, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":"A1"}`))
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func reviewDump(t *testing.T, name string, data []byte) (code int, out string) {
	t.Helper()
	code, out, errOut := runOnFile(t, data)
	if errOut != "" {
		t.Fatalf("%s: stderr %q", name, errOut)
	}
	return code, out
}

// Keyed writes whose answer was lost and whose resend under the key a
// limit stopped (the new rule: check_state, decisions.md footnote ²): the
// state check's three answers, each stopped by the attempt limit, by the
// budget and by a body that cannot be sent again. retryinspect, on the
// spans and on the log records of each run, gives no finding.
func TestAKeyedWriteLookedUpAfterItsResendWasStoppedIsClean(t *testing.T) {
	for _, limit := range []string{"max_attempts", "budget", "not_replayable"} {
		for _, state := range []attrs.StateCheckResult{attrs.StateApplied, attrs.StateNotApplied, attrs.StateUnknown} {
			t.Run(limit+"/"+string(state), func(t *testing.T) {
				r := runScene(t, func(t *testing.T, e *sceneEnv) {
					opts := []otelretry.Option{otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey()),
						otelretry.WithStateCheck(stateSays(state)), otelretry.WithAttemptTimeout(100 * time.Millisecond),
						otelretry.WithBackoff(otelretry.ConstantBackoff(10 * time.Millisecond))}
					switch limit {
					case "max_attempts":
						opts = append(opts, otelretry.WithMaxAttempts(2), otelretry.WithoutBudget())
					case "budget":
						opts = append(opts, otelretry.WithBudget(&otelretry.Budget{Tokens: 4}))
					}
					base := scripted.New(scripted.Step{Hang: true})
					rt := e.transport(base, opts...)
					req, _ := http.NewRequestWithContext(otelretry.WithOperationID(e.ctx, "order-7"), http.MethodPost, "http://orders.test/orders", strings.NewReader(`{"sku":"A1"}`))
					if limit == "not_replayable" {
						req.GetBody = nil
						req.Body = io.NopCloser(struct{ io.Reader }{strings.NewReader(`{"sku":"A1"}`)})
					}
					resp, err := rt.RoundTrip(req)
					if err == nil {
						resp.Body.Close()
					}
					t.Logf("err %v, calls %d", err, len(base.Calls()))
				})
				for name, data := range map[string][]byte{"spans": r.spans, "logs": r.logs} {
					code, out := reviewDump(t, name, data)
					t.Logf("%s:\n%s", name, out)
					if code != exitClean {
						t.Errorf("%s: exit %d:\n%s", name, code, grepLines(out, "["))
					}
				}
			})
		}
	}
}

// A write without a key whose answer was lost is looked up (check_state),
// and the state check finds it not applied: the resend that not_applied
// asks for is refused by the budget, and the operation ends
// budget_exhausted, the write known not applied. The application then
// sends the order again under the same operation id, answered 201. From
// the spans: no finding (an operation whose state check found its write
// not applied "failed with its outcome known, so a layer above that sends
// it again repeats nothing"). The log records of the same run must give
// the same findings (docs/retryinspect.md; what only the spans tell is a
// needs-spans note, never a false finding).
func TestLogsOfAWriteFoundNotAppliedAfterARefusalGiveNoResend(t *testing.T) {
	for _, limit := range []string{"budget"} {
		t.Run(limit, func(t *testing.T) {
			r := runScene(t, func(t *testing.T, e *sceneEnv) {
				opts := []otelretry.Option{
					otelretry.WithStateCheck(stateSays(attrs.StateNotApplied)), otelretry.WithAttemptTimeout(100 * time.Millisecond),
					otelretry.WithBackoff(otelretry.ConstantBackoff(10 * time.Millisecond))}
				base := scripted.New(scripted.Step{Hang: true}, scripted.Step{Status: http.StatusCreated})
				// Two tokens: the first failure leaves one, not more than
				// half, so the resend not_applied asks for is refused.
				opts = append(opts, otelretry.WithBudget(&otelretry.Budget{Tokens: 2}))
				rt := e.transport(base, opts...)
				ctx := otelretry.WithOperationID(e.ctx, "order-7")
				_, err := sendKeyed(t, rt, ctx, "")
				t.Logf("first: %v", err)
				time.Sleep(10 * time.Millisecond)
				status, err := sendKeyed(t, rt, ctx, "")
				t.Logf("second: %d %v; calls %d", status, err, len(base.Calls()))
			})
			spansAndLogsClean(t, r)
		})
	}
}

// grepLinesAfter is the line holding sub and the two lines after it.
func grepLinesAfter(s, sub string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.Contains(l, sub) {
			return strings.Join(lines[i:min(i+3, len(lines))], "\n")
		}
	}
	return ""
}

// spansAndLogsClean checks a scene's spans and its log records both give
// no finding: the spans as the setup's check, the records against them.
func spansAndLogsClean(t *testing.T, r sceneRun) {
	t.Helper()
	code, out := reviewDump(t, "spans", r.spans)
	t.Logf("spans:\n%s", out)
	if code != exitClean {
		t.Fatalf("setup: spans exit %d:\n%s", code, grepLines(out, "["))
	}
	code, out = reviewDump(t, "logs", r.logs)
	if code != exitClean {
		t.Errorf("logs: exit %d (the spans of the same run: clean):\n%s", code, grepLinesAfter(out, "[outer-layer-resend]"))
	}
}
