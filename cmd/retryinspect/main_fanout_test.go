// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

// perPath routes each request to a scripted transport of its own, by path.
type perPath map[string]*scripted.Transport

func (p perPath) RoundTrip(r *http.Request) (*http.Response, error) {
	return p[r.URL.Path].RoundTrip(r)
}

// fanOut runs a job that sends n calls under one WithOperationID at
// once (in flight together), each through its own script.
func fanOut(t *testing.T, e *sceneEnv, method string, scripts map[string][]scripted.Step, opts ...otelretry.Option) {
	t.Helper()
	p := perPath{}
	for path, steps := range scripts {
		p[path] = scripted.New(steps...)
	}
	rt := e.transport(p, append([]otelretry.Option{otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(20 * time.Millisecond))}, opts...)...)
	ctx := otelretry.WithOperationID(e.ctx, "job-1")
	var wg sync.WaitGroup
	for path := range scripts {
		wg.Go(func() { send(t, rt, ctx, method, "http://orders.test"+path) })
	}
	wg.Wait()
}

// fanOutRuns runs, for each kind of call, a job that sends 3 calls at
// once under one WithOperationID (a fan-out), each retried once after a
// 503 and answered, without budget or hedging: 3 operations, 6 attempts.
func fanOutRuns(t *testing.T, each func(t *testing.T, r sceneRun)) {
	three := func(last int) map[string][]scripted.Step {
		return map[string][]scripted.Step{
			"/a": {step(10, 503), step(10, last)},
			"/b": {step(15, 503), step(10, last)},
			"/c": {step(20, 503), step(10, last)},
		}
	}
	cases := []struct {
		name   string
		method string
		opts   []otelretry.Option
		last   int
	}{
		{"GETs", http.MethodGet, nil, 200},
		{"keyed POSTs", http.MethodPost, []otelretry.Option{otelretry.WithIdempotencyKeys(otelretry.DraftIdempotencyKey())}, 201},
		{"repeatable POSTs", http.MethodPost, nil, 201},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			each(t, runScene(t, func(t *testing.T, e *sceneEnv) {
				if c.name == "repeatable POSTs" {
					e.ctx = otelretry.WithIntent(e.ctx, otelretry.Intent{Repeatable: true})
				}
				fanOut(t, e, c.method, three(c.last), c.opts...)
			}))
		})
	}
}

// The transport numbers attempts on across the operations made under one
// WithOperationID, so a job's calls in flight together take interleaved
// numbers (/a 1 and 4, /b 2 and 5): nothing was lost, and retryinspect
// reads them as one run of numbers, with no attempt-numbering finding.
func TestAFanOutUnderOneIDHasNoNumberingFindingFromSpans(t *testing.T) {
	fanOutRuns(t, func(t *testing.T, r sceneRun) {
		code, rep, _ := reportJSON(t, r.spans)
		logAttempts(t, "spans", rep)
		compareWithMetrics(t, "spans", r, rep)
		if got := findingCodes(rep); len(got) != 0 {
			t.Errorf("spans: exit %d, findings %s on a fan-out of 3 calls each retried once and answered\n%s", code, mapText(got), textOf(t, r.spans))
		}
	})
}

// From the log records of the same fan-out (docs/retryinspect.md: "the
// same per-operation table and the same findings as the spans"), each
// attempt is joined to the operation of its time, method and URL, though
// the 3 share the trace and the operation id: 2 attempts each, no hedge
// read into two calls sent at once, no finding.
func TestAFanOutUnderOneIDReadsFromLogsAsFromSpans(t *testing.T) {
	fanOutRuns(t, func(t *testing.T, r sceneRun) {
		code, rep, _ := reportJSON(t, r.logs)
		logAttempts(t, "logs", rep)
		if got := findingCodes(rep); len(got) != 0 {
			t.Errorf("logs: exit %d, findings %s on a fan-out of 3 calls each retried once and answered\n%s", code, mapText(got), textOf(t, r.logs))
		}
		for _, d := range rep.Dependencies {
			if d.Hedging != nil && d.Hedging.HedgeRate.Count != 0 {
				t.Errorf("logs: %s: hedge rate %s on a run that sent no hedge", d.Name, ratioText(d.Hedging.HedgeRate))
			}
		}
		for _, op := range rep.Operations {
			if len(op.Attempts) != 2 {
				t.Errorf("logs: operation %s %s has %d attempts; each sent 2", op.Method, op.URL, len(op.Attempts))
			}
		}
	})
}

// Calls in flight together under one id with the same method and URL:
// their spans tell their attempts apart (no finding), their log records
// do not, which is a needs-spans note, never a false finding.
func TestAFanOutToOneURLIsANeedsSpansNoteFromLogs(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		fanOutToOne(t, e, []scripted.Step{step(10, 503), step(15, 503), step(20, 503), step(10, 200), step(10, 200), step(10, 200)})
	})
	if code, rep, _ := reportJSON(t, r.spans); len(rep.Findings) != 0 || len(rep.Notes) != 0 {
		t.Errorf("spans: exit %d, findings %+v, notes %+v", code, rep.Findings, rep.Notes)
	}
	code, rep, _ := reportJSON(t, r.logs)
	if len(rep.Findings) != 0 {
		t.Errorf("logs: exit %d, findings %s\n%s", code, mapText(findingCodes(rep)), textOf(t, r.logs))
	}
	if len(rep.Notes) != 1 || rep.Notes[0].Code != "needs-spans" || rep.Notes[0].Count != 3 || !strings.Contains(rep.Notes[0].Seen, "ran at once") {
		t.Errorf("logs: notes %+v; want one needs-spans note for the 3 operations in flight together", rep.Notes)
	}
}

// A lost attempt span of a fan-out is still a gap in the run of numbers
// the operations in flight together took.
func TestAFanOutWithALostAttemptSpanIsANumberingFinding(t *testing.T) {
	r := runScene(t, func(t *testing.T, e *sceneEnv) {
		fanOutToOne(t, e, []scripted.Step{step(10, 503), step(15, 503), step(20, 503), step(10, 200), step(10, 200), step(10, 200)})
	})
	lost := dropNth(t, r.spans, 0, `"Name":"GET"`, `"Key":"retry.attempt","Value":{"Type":"INT64","Value":4}`)
	if _, rep, _ := reportJSON(t, lost); findingCodes(rep)["attempt-numbering"] != 1 {
		t.Errorf("spans without attempt 4: findings %s; want one attempt-numbering", mapText(findingCodes(rep)))
	}
}

// fanOutToOne sends 3 GETs to one URL at once under one WithOperationID.
func fanOutToOne(t *testing.T, e *sceneEnv, steps []scripted.Step) {
	t.Helper()
	rt := e.transport(scripted.New(steps...), otelretry.WithoutBudget(), otelretry.WithBackoff(otelretry.ConstantBackoff(20*time.Millisecond)))
	ctx := otelretry.WithOperationID(e.ctx, "job-1")
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { send(t, rt, ctx, http.MethodGet, "http://orders.test/a") })
	}
	wg.Wait()
}
