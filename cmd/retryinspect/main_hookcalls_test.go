// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// A Backoff and a Classifier that each make a call of their own with
// Answer.Request's context through another otelretry Transport (a lookup
// of the dependency's status): the calling operation's GET gets 503, a
// timeout (the attempt timeout cuts it), then 200; the lookups answer 200,
// or hang until the calling operation's deadline. retryinspect on the
// spans and on the log records: no finding.
func TestHookCallsReadClean(t *testing.T) {
	for _, lookup := range []string{"answers", "hangs"} {
		t.Run(lookup, func(t *testing.T) {
			r := runScene(t, func(t *testing.T, e *sceneEnv) {
				step := scripted.Step{Status: 200}
				if lookup == "hangs" {
					step = scripted.Step{Hang: true}
				}
				side := e.transport(scripted.New(step), otelretry.WithoutBudget())
				call := func(a otelretry.Answer) {
					req, _ := http.NewRequestWithContext(a.Request.Context(), http.MethodGet, "http://status.test/health", nil)
					if resp, err := side.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
				}
				base := scripted.New(scripted.Step{Status: 503}, scripted.Step{Hang: true}, scripted.Step{Status: 200})
				rt := e.transport(base, otelretry.WithoutBudget(), otelretry.WithDeadline(time.Second),
					otelretry.WithAttemptTimeout(100*time.Millisecond),
					otelretry.WithBackoff(func(n int, a otelretry.Answer) time.Duration { call(a); return 10 * time.Millisecond }),
					otelretry.WithClassifier(func(a otelretry.Answer) otelretry.Classification { call(a); return otelretry.Classification{} }))
				status, err := send(t, rt, e.ctx, http.MethodGet, "http://inventory.test/items")
				t.Logf("status %d err %v calls %d", status, err, len(base.Calls()))
			})
			for name, data := range map[string][]byte{"spans": r.spans, "logs": r.logs} {
				code, out, errOut := runOnFile(t, data, "-strict")
				t.Logf("%s:\n%s", name, out)
				if code != exitClean || errOut != "" {
					t.Errorf("%s: exit %d, stderr %q:\n%s", name, code, errOut, grepLines(out, "["))
				}
			}
		})
	}
}
