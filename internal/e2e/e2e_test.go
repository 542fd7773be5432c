package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// Bounded waits: export is asynchronous (batch span processor, periodic
// metric reader, the Collector's batch processor, Prometheus' 2 s scrape).
const (
	jaegerDeadline     = 60 * time.Second
	prometheusDeadline = 90 * time.Second
	pollEvery          = time.Second
)

// TestStackEndToEnd sends the demo's traffic through the Collector and checks
// what arrives in Jaeger (span trees and attributes) and Prometheus (every
// expression of the Grafana dashboard) against the demo's summary.
func TestStackEndToEnd(t *testing.T) {
	s := requireStack(t)
	root := repoRoot(t)
	queries, err := loadDashboardQueries(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) == 0 {
		t.Fatalf("%s has no PromQL expressions", dashboardPath)
	}
	if err := waitReady(s); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	run := runDemo(t, s.otlp, uniqueName("otelretry-e2e"))

	// Both poll with their own deadline; run them side by side.
	t.Run("backends", func(t *testing.T) {
		t.Run("jaeger", func(t *testing.T) {
			t.Parallel()
			checkJaeger(t, s, run)
			if !t.Failed() { // every trace has arrived: read them back
				checkRetryinspect(t, s, run)
			}
		})
		t.Run("prometheus", func(t *testing.T) {
			t.Parallel()
			checkPrometheus(t, s, run, queries, start)
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

func checkJaeger(t *testing.T, s stack, run demoRun) {
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
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(pollEvery)
	}
	const max = 40
	if len(problems) > max {
		problems = append(problems[:max], fmt.Sprintf("... and %d more", len(problems)-max))
	}
	t.Errorf("jaeger: after %v, %d traces for %s do not match the summary:\n  %s",
		jaegerDeadline, len(traces), run.service, strings.Join(problems, "\n  "))
}

func checkPrometheus(t *testing.T, s stack, run demoRun, queries []dashboardQuery, start time.Time) {
	w := newWorkload(run.summary)
	want := expectations(w)

	// Every dashboard expression needs an expectation, and every expectation
	// an expression (so a renamed panel cannot silently drop its check).
	type check struct {
		name, expr string
		exp        expectation
	}
	var checks []check
	seen := map[string]bool{}
	for _, q := range queries {
		exp, ok := want[q.key()]
		if !ok {
			t.Errorf("dashboard expression %q has no expectation in the test: %s", q.key(), q.Expr)
			continue
		}
		seen[q.key()] = true
		checks = append(checks, check{name: "dashboard " + q.key(), expr: q.Expr, exp: exp})
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("expectation %q matches no expression of %s", k, dashboardPath)
		}
	}
	for expr, exp := range extraChecks(run.service, run.instanceID, w) {
		checks = append(checks, check{name: "own query", expr: expr, exp: exp})
	}
	sort.Slice(checks, func(i, j int) bool { return checks[i].name < checks[j].name })

	deadline := time.Now().Add(prometheusDeadline)
	var failures []string
	for polls := 1; ; polls++ {
		// One window covering the whole run, from before the demo started to now.
		window := time.Since(start) + 30*time.Second
		failures = failures[:0]
		for _, c := range checks {
			expr, err := substitute(c.expr, run.service, window)
			if err != nil {
				failures = append(failures, fmt.Sprintf("%s: %v", c.name, err))
				continue
			}
			got, err := promQuery(s.prometheus, expr)
			if err == nil {
				err = c.exp.verify(got)
			}
			if err != nil {
				failures = append(failures, fmt.Sprintf("%s (%s): %v\n    %s", c.name, c.exp.what, err,
					strings.ReplaceAll(expr, "\n", " ")))
			}
		}
		if len(failures) == 0 {
			t.Logf("prometheus: %d expressions (%d from the dashboard) match the summary (%d polls, window %v)",
				len(checks), len(queries), polls, window.Round(time.Second))
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("prometheus: after %v, %d of %d expressions do not match the summary:\n  %s",
				prometheusDeadline, len(failures), len(checks), strings.Join(failures, "\n  "))
			return
		}
		time.Sleep(pollEvery)
	}

	// Bounded cardinality: no label value of this run carries an operation or
	// request id.
	series, err := promQuery(s.prometheus, fmt.Sprintf(`{job=%q}`, run.service))
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
		for k, v := range smp.Labels {
			if ids[v] {
				t.Errorf("series %s: label %s carries the id %q", smp.key(), k, v)
			}
		}
	}
	t.Logf("prometheus: %d series for job %s", len(series), run.service)
}
