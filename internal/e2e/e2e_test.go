// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Bounded waits: export is asynchronous (batch span processor, periodic
// metric reader, the Collectors' batch processors and tail sampling,
// Prometheus' 2 s scrape).
const (
	jaegerDeadline     = 60 * time.Second
	prometheusDeadline = 90 * time.Second
	pollEvery          = time.Second
)

// TestStackEndToEnd sends the demo's traffic through the Collector (no
// sampling) and checks what arrives in Jaeger (span trees and attributes,
// read back by retryinspect too), the exemplars Prometheus stored (each
// leads to its trace), the demo's totals in Prometheus, and its log events
// in VictoriaLogs (read back by retryinspect --victorialogs too).
func TestStackEndToEnd(t *testing.T) {
	s := requireStack(t)
	// In parallel with the other stack tests, after the latency comparison
	// of TestExportFailureDoesNotBreakRequests, which runs alone.
	t.Parallel()
	if err := waitReady(s); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	run := runDemo(t, s.otlp, uniqueName("otelretry-e2e"), nil)

	// Both poll with their own deadline; run them side by side.
	t.Run("backends", func(t *testing.T) {
		t.Run("jaeger", func(t *testing.T) {
			t.Parallel()
			traces := checkJaeger(t, s, run)
			if t.Failed() {
				return
			}
			// Every trace has arrived: read them back, and follow the exemplars.
			checkRetryinspect(t, s, run)
			ids := map[string]bool{}
			for _, tr := range traces {
				ids[tr.TraceID] = true
			}
			checkExemplars(t, s, exemplarRules{
				job: run.service, from: start.Add(-time.Minute), to: time.Now().Add(time.Minute),
				// No sampling on this path: every exemplar's trace is in Jaeger.
				mustBeKept: func(promExemplar) bool { return true },
				belongs:    func(traceID string) bool { return ids[traceID] },
			}, time.Now().Add(prometheusDeadline))
		})
		t.Run("prometheus", func(t *testing.T) {
			t.Parallel()
			checkDemoMetrics(t, s, run)
		})
		t.Run("victorialogs", func(t *testing.T) {
			t.Parallel()
			counts, records := checkDemoLogs(t, s, run)
			if t.Failed() {
				return
			}
			// Every record has arrived: read them back.
			checkRetryinspectLogs(t, s, run, counts, records)
		})
	})
}

// waitReady checks that Jaeger and Prometheus answer before the run.
func waitReady(s stack) error {
	for _, u := range []string{s.jaeger + "/api/services", s.prometheus + "/-/ready"} {
		if _, err := httpGet(u); err != nil {
			return fmt.Errorf("stack not ready (scripts/stack.sh up): %v", err)
		}
	}
	return nil
}

func checkJaeger(t *testing.T, s stack, run demoRun) []jaegerTrace {
	limit := 2*len(run.summary.Operations) + 100
	deadline := time.Now().Add(jaegerDeadline)
	var problems []string
	var traces []jaegerTrace
	for polls := 1; ; polls++ {
		var err error
		traces, err = fetchTraces(s.jaeger, run.service, limit)
		if err != nil {
			problems = []string{err.Error()}
		} else {
			problems = checkTraces(traces, run)
		}
		if len(problems) == 0 {
			spans := 0
			for _, tr := range traces {
				spans += len(tr.Spans)
			}
			t.Logf("jaeger: %d traces, %d spans match the summary (%d polls)", len(traces), spans, polls)
			return traces
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(pollEvery)
	}
	t.Errorf("jaeger: after %v, %d traces for %s do not match the summary:\n  %s",
		jaegerDeadline, len(traces), run.service, joinMax(problems, 40))
	return nil
}

// checkDemoMetrics checks the demo's totals in Prometheus with queries of
// the test's own: a short-lived process's counters end at its totals (the
// dashboard, for long-lived services, is checked by TestTieredPipeline).
// Histogram counts agree with the counters, every series carries the run's
// service.instance.id, and no label carries an id.
func checkDemoMetrics(t *testing.T, s stack, run demoRun) {
	sel := fmt.Sprintf(`{job=%q}`, run.service)
	ops, attempts, retries := float64(len(run.summary.Operations)), float64(run.summary.attemptCount()), 0.0
	for _, op := range run.summary.Operations {
		for _, a := range op.Attempts {
			if a.Decision == "retry" {
				retries++
			}
		}
	}
	checks := map[string]float64{
		"sum(" + promOperations + sel + ")":                         ops,
		"sum(" + promAttempts + sel + ")":                           attempts,
		"sum(" + promOperationDuration + "_count" + sel + ")":       ops,
		"sum(" + promOperationAttempts + "_count" + sel + ")":       ops,
		"sum(" + promOperationAttempts + "_sum" + sel + ")":         attempts,
		"sum(" + promAttemptDuration + "_count" + sel + ")":         attempts,
		"sum(" + promBackoffDuration + "_count" + sel + ")":         retries,
		"count(count by (instance) (" + promOperations + sel + "))": 1,
	}
	deadline := time.Now().Add(prometheusDeadline)
	var failures []string
	for {
		failures = failures[:0]
		for q, want := range checks {
			got, err := promQuery(s.prometheus, q, time.Time{})
			if err == nil && !(len(got) == 1 && got[0].Value == want) && !(want == 0 && len(got) == 0) {
				err = fmt.Errorf("%v, want %g", got, want)
			}
			if err != nil {
				failures = append(failures, fmt.Sprintf("%s: %v", q, err))
			}
		}
		if len(failures) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(pollEvery)
	}
	if len(failures) > 0 {
		t.Fatalf("prometheus: the demo's totals:\n  %s", strings.Join(failures, "\n  "))
	}

	series, err := promQuery(s.prometheus, sel, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, op := range run.summary.Operations {
		ids[op.OperationID] = true
		for _, a := range op.Attempts {
			ids[a.RequestID] = true
		}
	}
	for _, smp := range series {
		if smp.Labels["instance"] != run.instanceID {
			t.Errorf("series %s: instance %q, want the run's service.instance.id %q", smp.key(), smp.Labels["instance"], run.instanceID)
		}
		for k, v := range smp.Labels {
			if ids[v] {
				t.Errorf("series %s: label %s carries the id %q", smp.key(), k, v)
			}
		}
	}
	t.Logf("prometheus: the demo's totals match (%g operations, %g attempts); %d series for job %s", ops, attempts, len(series), run.service)
}
