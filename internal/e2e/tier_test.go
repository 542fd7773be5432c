// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// samplerTag is the resource attribute each sampling Collector puts on the
// spans it keeps (deploy/tiered/sampler.yaml, resource/sampler).
const samplerTag = "tail_sampling.collector"

// TestTieredPipeline drives a long-lived client (the traffic generator)
// through the tiered deployment: agent -> two tail-sampling Collectors ->
// Jaeger for traces, agent -> Collector -> Prometheus for metrics and
// agent -> Collector -> VictoriaLogs for log events. One
// warmed-up workload with a known mix serves three checks:
//   - dashboard: every expression of the Grafana dashboard, evaluated over
//     exactly the measured window, equals what the SDK sent;
//   - exemplars: exemplar trace ids lead to Jaeger, and the operation span
//     of a deadline_exceeded exemplar says deadline_exceeded;
//   - sampling: every interesting operation is kept whole in one trace,
//     plain successes are kept at the configured share, and no trace is
//     split across samplers.
//   - logs: every attempt and operation log event reaches VictoriaLogs
//     (logs are not sampled), with the client's trace and span ids, and
//     every trace Jaeger kept resolves from them (logs_test.go).
func TestTieredPipeline(t *testing.T) {
	s := requireStack(t)
	// In parallel with the other stack tests, after the latency comparison
	// of TestExportFailureDoesNotBreakRequests, which runs alone.
	t.Parallel()
	queries, err := loadDashboardQueries(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := waitReady(s); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	service, instance := uniqueName("otelretry-e2e-tier"), randomHex(8)
	g := newGenerator(t, s.agent, service, instance)
	runStart := time.Now()

	// Warm-up: one operation of each kind creates every series, so that
	// the measured window starts from a sample of each (Prometheus 2.42
	// shows no increase in a series' first sample).
	warm := g.plan(true)
	g.run(ctx, warm, 0, 1, 8)
	checkResults(t, warm)
	if err := g.flush(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := g.collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t0, err := waitScraped(s, service, instance, before)
	if err != nil {
		t.Fatalf("warm-up: %v", err)
	}

	// The measured workload, spread over at least four scrape intervals.
	spread := max(5*s.scrapeInterval, 10*time.Second)
	ops := g.plan(false)
	start := time.Now()
	g.run(ctx, ops, spread, 10, 8)
	sent := time.Since(start)
	checkResults(t, ops)
	if err := g.flush(ctx); err != nil {
		t.Fatal(err)
	}
	lastSent := time.Now()
	after, err := g.collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tEnd, err := waitScraped(s, service, instance, after)
	if err != nil {
		t.Fatalf("workload: %v", err)
	}
	delta, fresh := after.minus(before)
	if len(fresh) > 0 {
		t.Fatalf("series first seen in the measured workload (the warm-up must create every series): %v", fresh)
	}
	checkDeltaAgainstPlan(t, delta, ops)
	scrapes, err := scrapeTimes(s.prometheus, time.Since(t0)+time.Second)
	if err != nil {
		t.Fatal(err)
	}
	within := 0
	for _, ts := range scrapes {
		if ts.After(t0) && !ts.After(tEnd) {
			within++
		}
	}
	if sent < 4*s.scrapeInterval || within < 5 {
		t.Fatalf("the workload took %v and the window (%v, %v] holds %d scrapes: want traffic across at least 4 scrape intervals (%v)",
			sent, t0.Format(time.StampMilli), tEnd.Format(time.StampMilli), within, s.scrapeInterval)
	}
	window := tEnd.Sub(t0) + time.Millisecond
	t.Logf("workload: %d operations in %v over %d scrapes; measured window %v (%s)",
		len(ops), sent.Round(time.Millisecond), within, window, describeDelta(delta))

	all := append(append([]genResult{}, warm...), ops...)
	traceOf := g.traceOf()
	t.Run("dashboard", func(t *testing.T) {
		t.Parallel()
		checkDashboard(t, s, queries, dashboardVars{job: service, instance: instance, window: window}, tEnd, delta, after)
	})
	t.Run("exemplars", func(t *testing.T) {
		t.Parallel()
		byTrace := map[string]*genResult{}
		for i := range all {
			byTrace[traceOf[all[i].id]] = &all[i]
		}
		checkExemplars(t, s, exemplarRules{
			job: service, from: runStart.Add(-time.Minute), to: time.Now().Add(time.Minute),
			// Tail sampling keeps every interesting operation; an exemplar
			// of a plain success may point at a trace sampled out.
			mustBeKept: func(e promExemplar) bool { r := byTrace[e.traceID]; return r != nil && r.scenario.interesting },
			belongs:    func(traceID string) bool { return byTrace[traceID] != nil },
		}, lastSent.Add(s.decisionWait+jaegerDeadline))
	})
	t.Run("sampling", func(t *testing.T) {
		t.Parallel()
		checkSampling(t, s, service, all, traceOf, lastSent)
	})
	spanIDs := g.spanIDs()
	t.Run("logs", func(t *testing.T) {
		t.Parallel()
		checkLogs(t, s, service, all, traceOf, spanIDs, lastSent)
	})
}

// waitScraped waits until Prometheus shows the totals of want for the run,
// then for the next scrape, and returns that scrape's time: a sample of
// every series with want's values (the data stopped changing before it).
func waitScraped(s stack, job, instance string, want seriesSet) (time.Time, error) {
	sel := fmt.Sprintf(`{job=%q,instance=%q}`, job, instance)
	checks := map[string]float64{}
	for _, name := range []string{promOperations, promAttempts, promOperationDuration + "_count", promBackoffDuration + "_count"} {
		v, _ := want.sum(name)
		checks[fmt.Sprintf("sum(%s%s)", name, sel)] = v
	}
	deadline := time.Now().Add(prometheusDeadline)
	var last string
	for {
		ok := true
		for q, v := range checks {
			got, err := promQuery(s.prometheus, q, time.Time{})
			switch {
			case err != nil:
				ok, last = false, err.Error()
			case (len(got) == 0 && v != 0) || (len(got) == 1 && got[0].Value != v) || len(got) > 1:
				ok, last = false, fmt.Sprintf("%s = %v, want %g", q, got, v)
			}
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("after %v: %s", prometheusDeadline, last)
		}
		time.Sleep(pollEvery / 2)
	}
	seen := time.Now()
	for {
		ts, err := scrapeTimes(s.prometheus, time.Minute)
		if err != nil {
			return time.Time{}, err
		}
		for _, t := range ts {
			if t.After(seen) {
				return t, nil
			}
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("no scrape after %v", seen)
		}
		time.Sleep(pollEvery / 2)
	}
}

// checkDeltaAgainstPlan pins the metrics to what was sent: the operations
// by outcome and the attempts are those of the plan.
func checkDeltaAgainstPlan(t *testing.T, delta seriesSet, ops []genResult) {
	t.Helper()
	wantByOutcome := map[string]float64{}
	var wantAttempts float64
	for _, r := range ops {
		wantByOutcome[string(r.scenario.want)]++
		wantAttempts += float64(r.scenario.attempts)
	}
	for _, s := range delta.sumBy(promOperations, []string{lOutcome}) {
		if o := s.Labels[lOutcome]; s.Value != wantByOutcome[o] {
			t.Errorf("the SDK counted %g operations ending %s, the plan sent %g", s.Value, o, wantByOutcome[o])
		}
	}
	if got, _ := delta.sum(promAttempts); got != wantAttempts {
		t.Errorf("the SDK counted %g attempts, the plan made %g", got, wantAttempts)
	}
}

// dashboardTolerance is the relative tolerance of the dashboard checks. The
// window starts 1 ms before its first sample and ends on its last, so
// increase() extrapolates by at most 1 ms over a window of 8 s or more: a
// relative error below 2e-4.
const dashboardTolerance = 1e-3

// checkDashboard evaluates every expression of the dashboard at tEnd over
// the measured window and compares it with the SDK's increase (delta).
func checkDashboard(t *testing.T, s stack, queries []dashboardQuery, vars dashboardVars, tEnd time.Time, delta, after seriesSet) {
	want := dashboardExpectations(delta, vars.window, dashboardTolerance)
	seen := map[string]bool{}
	var failures []string
	maxDev := 0.0
	for _, q := range queries {
		exp, ok := want[q.key()]
		if !ok {
			t.Errorf("dashboard expression %q has no expectation in the test: %s", q.key(), q.Expr)
			continue
		}
		seen[q.key()] = true
		if len(exp.samples) == 0 {
			t.Errorf("%s: the workload gives it no value; the mix must exercise every panel", q.key())
		}
		expr, err := substitute(q.Expr, vars)
		if err != nil {
			t.Errorf("%s: %v", q.key(), err)
			continue
		}
		got, err := promQuery(s.prometheus, expr, tEnd)
		if err == nil {
			maxDev = max(maxDev, exp.deviation(got))
			err = exp.verify(got)
		}
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s (%s): %v\n    %s", q.key(), exp.what, err, strings.ReplaceAll(expr, "\n", " ")))
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("expectation %q matches no expression of %s", k, dashboardPath)
		}
	}
	// The series themselves: each retry metric has as many series in
	// Prometheus as the SDK has, under the translated names.
	counts := map[string]int{}
	for _, v := range after {
		counts[v.name]++
	}
	for name, n := range counts {
		q := fmt.Sprintf(`count(%s{job=%q,instance=%q})`, name, vars.job, vars.instance)
		got, err := promQuery(s.prometheus, q, tEnd)
		if err == nil && (len(got) != 1 || got[0].Value != float64(n)) {
			err = fmt.Errorf("%v, want %d series", got, n)
		}
		if err != nil {
			failures = append(failures, fmt.Sprintf("own query %s: %v", q, err))
		}
	}
	sort.Strings(failures)
	if len(failures) > 0 {
		t.Errorf("prometheus at %s over %v: %d expressions disagree with the SDK:\n  %s",
			tEnd.Format(time.StampMilli), vars.window, len(failures), strings.Join(failures, "\n  "))
		return
	}
	t.Logf("prometheus: %d dashboard expressions and %d series counts match the SDK within %g (largest relative deviation %.2g; window %v)",
		len(queries), len(counts), dashboardTolerance, maxDev, vars.window)
}

// checkSampling reads the run's traces back from Jaeger after the samplers
// decided, and checks what tail sampling kept.
func checkSampling(t *testing.T, s stack, service string, ops []genResult, traceOf map[string]string, lastSent time.Time) {
	// Every trace is decided decision_wait after its first span reached a
	// sampler; the batches add well under a second.
	time.Sleep(time.Until(lastSent.Add(s.decisionWait + 2*time.Second)))
	deadline := time.Now().Add(jaegerDeadline)
	var problems []string
	var rep samplingReport
	for {
		traces, err := fetchTraces(s.jaeger, service, 20000)
		if err != nil {
			problems = []string{err.Error()}
		} else {
			rep, problems = samplingProblems(s, traces, ops, traceOf)
		}
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(pollEvery)
	}
	if len(problems) > 0 {
		t.Fatalf("sampling: %d problems:\n  %s", len(problems), joinMax(problems, 40))
	}
	// Plain successes of the measured workload: binomial at the configured share.
	p := s.plainPercent / 100
	lo, hi := binomialBounds(rep.plain, p, samplingAlpha)
	t.Logf("sampling: kept all %d interesting operations whole; %d of %d plain successes (%.1f%%, configured %g%%, bounds [%d, %d] at alpha %g); traces per sampler %v",
		rep.interesting, rep.plainKept, rep.plain, 100*float64(rep.plainKept)/float64(rep.plain),
		s.plainPercent, lo, hi, samplingAlpha, rep.perSampler)
	if rep.plainKept < lo || rep.plainKept > hi {
		t.Errorf("kept %d of %d plain successes: outside [%d, %d], the two-sided %g bounds of Binomial(%d, %g)",
			rep.plainKept, rep.plain, lo, hi, samplingAlpha, rep.plain, p)
	}
	total := 0
	for _, n := range rep.perSampler {
		total += n
	}
	for _, name := range s.samplers {
		if n := rep.perSampler[name]; float64(n) < 0.1*float64(total) {
			t.Errorf("sampler %s kept %d of %d traces: the agent does not balance over the samplers", name, n, total)
		}
	}
}

// samplingAlpha is the chance that a correct sampler fails the share
// check: a false alarm once in a million runs.
const samplingAlpha = 1e-6

type samplingReport struct {
	interesting, plain, plainKept int
	perSampler                    map[string]int
}

func samplingProblems(s stack, traces []jaegerTrace, ops []genResult, traceOf map[string]string) (samplingReport, []string) {
	rep := samplingReport{perSampler: map[string]int{}}
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// No trace split across samplers: every span of a trace was forwarded
	// by the same one.
	known := map[string]bool{}
	for _, name := range s.samplers {
		known[name] = true
	}
	for i := range traces {
		tr := &traces[i]
		names := map[string]bool{}
		for j := range tr.Spans {
			names[tr.Processes[tr.Spans[j].ProcessID].tag(samplerTag)] = true
		}
		if len(names) != 1 {
			fail("trace %s: spans from samplers %v: split across the sampling tier", tr.TraceID, keys(names))
			continue
		}
		for name := range names {
			if !known[name] {
				fail("trace %s: %s=%q is none of the samplers %v", tr.TraceID, samplerTag, name, s.samplers)
			}
			rep.perSampler[name]++
		}
	}

	index := indexOperations(traces)
	for _, r := range ops {
		sc := r.scenario
		o := index[r.id]
		if !sc.interesting {
			if !r.warmup {
				rep.plain++
			}
			if o == nil {
				continue
			}
			if !r.warmup {
				rep.plainKept++
			}
		} else {
			rep.interesting++
			if o == nil {
				fail("%s (%s): not in Jaeger", r.id, sc.name)
				continue
			}
		}
		// What is kept is kept whole, in one trace.
		if len(o.traces) != 1 {
			fail("%s (%s): spans in %d traces", r.id, sc.name, len(o.traces))
			continue
		}
		for id := range o.traces {
			if id != traceOf[r.id] {
				fail("%s (%s): in trace %s, the client recorded %s", r.id, sc.name, id, traceOf[r.id])
			}
		}
		if len(o.ops) != 1 {
			fail("%s (%s): %d operation spans, want 1", r.id, sc.name, len(o.ops))
			continue
		}
		op := o.ops[0]
		if got := op.str(attrs.OutcomeKey); got != string(sc.want) {
			fail("%s (%s): %s = %q, want %q", r.id, sc.name, attrs.OutcomeKey, got, sc.want)
		}
		if got, _ := op.int(attrs.AttemptsKey); got != int64(r.attempts) {
			fail("%s (%s): %s = %d, the server saw %d", r.id, sc.name, attrs.AttemptsKey, got, r.attempts)
		}
		numbers := map[int64]bool{}
		for _, a := range o.attempts {
			n, _ := a.int(attrs.AttemptKey)
			numbers[n] = true
		}
		if len(o.attempts) != r.attempts || len(numbers) != r.attempts {
			fail("%s (%s): %d attempt spans (numbers %v), the server saw %d attempts", r.id, sc.name, len(o.attempts), numbers, r.attempts)
		}
		if want := map[bool]int{true: 1}[sc.stateCheck]; len(o.checks) != want {
			fail("%s (%s): %d state_check spans, want %d", r.id, sc.name, len(o.checks), want)
		}
	}
	return rep, problems
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// binomialBounds returns the smallest lo and the largest hi with
// P(X < lo) <= alpha/2 and P(X > hi) <= alpha/2 for X ~ Binomial(n, p).
func binomialBounds(n int, p, alpha float64) (lo, hi int) {
	pmf := func(k int) float64 {
		if p <= 0 {
			return map[bool]float64{true: 1}[k == 0]
		}
		if p >= 1 {
			return map[bool]float64{true: 1}[k == n]
		}
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return math.Exp(a - b - c + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	lo, hi = 0, n
	for cdf, k := 0.0, 0; k <= n; k++ {
		if cdf += pmf(k); cdf > alpha/2 {
			lo = k
			break
		}
	}
	for sf, k := 0.0, n; k >= 0; k-- {
		if sf += pmf(k); sf > alpha/2 {
			hi = k
			break
		}
	}
	return lo, hi
}

// TestBinomialBounds checks the bounds against the normal approximation
// and the degenerate shares.
func TestBinomialBounds(t *testing.T) {
	lo, hi := binomialBounds(1000, 0.1, 1e-6)
	// mean 100, sd 9.49; z(5e-7) = 4.89: about [54, 146] by the normal
	// approximation, the exact tails are a little wider on the right.
	if lo < 50 || lo > 60 || hi < 140 || hi > 155 {
		t.Errorf("Binomial(1000, 0.1) at 1e-6: [%d, %d], want about [54, 146]", lo, hi)
	}
	if lo, hi := binomialBounds(100, 0, 1e-6); lo != 0 || hi != 0 {
		t.Errorf("p=0: [%d, %d], want [0, 0]", lo, hi)
	}
	if lo, hi := binomialBounds(100, 1, 1e-6); lo != 100 || hi != 100 {
		t.Errorf("p=1: [%d, %d], want [100, 100]", lo, hi)
	}
}
