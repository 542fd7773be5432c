// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/otelretry/otelretry-go/attrs"
)

// promExemplar is one exemplar as /api/v1/query_exemplars returns it.
type promExemplar struct {
	series          map[string]string
	traceID, spanID string
	value           float64
}

// queryExemplars returns the exemplars of the series selector between from
// and to.
func queryExemplars(promURL, selector string, from, to time.Time) ([]promExemplar, error) {
	q := url.Values{"query": {selector}, "start": {promTime(from)}, "end": {promTime(to)}}
	var data []struct {
		SeriesLabels map[string]string `json:"seriesLabels"`
		Exemplars    []struct {
			Labels map[string]string `json:"labels"`
			Value  string            `json:"value"`
		} `json:"exemplars"`
	}
	if err := promAPI(promURL+"/api/v1/query_exemplars?"+q.Encode(), &data); err != nil {
		return nil, err
	}
	var out []promExemplar
	for _, s := range data {
		for _, e := range s.Exemplars {
			v, err := strconv.ParseFloat(e.Value, 64)
			if err != nil {
				return nil, err
			}
			out = append(out, promExemplar{series: s.SeriesLabels, traceID: e.Labels["trace_id"], spanID: e.Labels["span_id"], value: v})
		}
	}
	return out, nil
}

// exemplarRules says, for the exemplars of one run, which traces must be in
// Jaeger.
type exemplarRules struct {
	job        string
	from, to   time.Time
	mustBeKept func(e promExemplar) bool
	// belongs tells whether a trace id is one of the run's operations.
	belongs func(traceID string) bool
}

// checkExemplars follows the exemplars of the run's retry metrics to
// Jaeger: every exemplar carries a trace id of the run; the traces that
// must be kept are in Jaeger; and the operation span of every exemplar on
// a deadline_exceeded series has retry.outcome=deadline_exceeded. It polls
// until deadline, for traces still on their way.
func checkExemplars(t *testing.T, s stack, r exemplarRules, deadline time.Time) {
	t.Helper()
	selector := fmt.Sprintf(`{job=%q,__name__=~"retry_.+"}`, r.job)
	var exemplars []promExemplar
	var problems []string
	traces := map[string]*jaegerTrace{}
	for polls := 1; ; polls++ {
		problems = problems[:0]
		var err error
		exemplars, err = queryExemplars(s.prometheus, selector, r.from, r.to)
		if err != nil {
			problems = append(problems, err.Error())
		}
		problems = append(problems, exemplarProblems(s, r, exemplars, traces)...)
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(pollEvery)
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("exemplars of %s (%d):\n  %s", r.job, len(exemplars), joinMax(problems, 30))
		return
	}
	ids := map[string]bool{}
	kept, mustKeep, onDeadline := 0, 0, 0
	for _, e := range exemplars {
		ids[e.traceID] = true
		if traces[e.traceID] != nil {
			kept++
		}
		if r.mustBeKept(e) {
			mustKeep++
		}
		if e.series[lOutcome] == string(attrs.OutcomeDeadlineExceeded) {
			onDeadline++
		}
	}
	t.Logf("exemplars of %s: %d on %d traces; %d must be in Jaeger and are; %d found in Jaeger in all; %d on deadline_exceeded series",
		r.job, len(exemplars), len(ids), mustKeep, kept, onDeadline)
}

// exemplarProblems checks one read of the exemplars; traces caches what
// Jaeger returned (nil: not found yet).
func exemplarProblems(s stack, r exemplarRules, exemplars []promExemplar, traces map[string]*jaegerTrace) []string {
	var problems []string
	onDeadline := 0
	for _, e := range exemplars {
		if e.traceID == "" || e.spanID == "" {
			problems = append(problems, fmt.Sprintf("exemplar on %v without trace_id and span_id", e.series))
			continue
		}
		if !r.belongs(e.traceID) {
			problems = append(problems, fmt.Sprintf("exemplar on %v: trace %s is none of the run's operations", e.series, e.traceID))
			continue
		}
		deadline := e.series[lOutcome] == string(attrs.OutcomeDeadlineExceeded)
		if deadline {
			onDeadline++
		}
		if !r.mustBeKept(e) && !deadline {
			if _, seen := traces[e.traceID]; !seen {
				tr, found, err := fetchTrace(s.jaeger, e.traceID)
				switch {
				case err != nil:
					problems = append(problems, err.Error())
				case found:
					traces[e.traceID] = &tr
				default:
					traces[e.traceID] = nil // sampled out: allowed, and not asked again
				}
			}
			continue
		}
		tr := traces[e.traceID]
		if tr == nil {
			t, found, err := fetchTrace(s.jaeger, e.traceID)
			switch {
			case err != nil:
				problems = append(problems, err.Error())
				continue
			case !found:
				problems = append(problems, fmt.Sprintf("exemplar on %v: trace %s is not in Jaeger", e.series, e.traceID))
				continue
			}
			tr = &t
			traces[e.traceID] = tr
		}
		if deadline {
			if out := exemplarOutcome(tr, e.spanID); out != string(attrs.OutcomeDeadlineExceeded) {
				problems = append(problems, fmt.Sprintf("exemplar on %v: the operation span of span %s in trace %s has %s=%q",
					e.series, e.spanID, e.traceID, attrs.OutcomeKey, out))
			}
		}
	}
	if onDeadline == 0 {
		problems = append(problems, "no exemplar on a deadline_exceeded series")
	}
	return problems
}

// exemplarOutcome returns retry.outcome of the operation span of the
// exemplar's span: the span itself when it is the operation span, else the
// operation span of the same operation id in the trace.
func exemplarOutcome(tr *jaegerTrace, spanID string) string {
	for i := range tr.Spans {
		s := &tr.Spans[i]
		if s.SpanID != spanID {
			continue
		}
		if s.isOperation() {
			return s.str(attrs.OutcomeKey)
		}
		if o := indexOperations([]jaegerTrace{*tr})[s.str(attrs.OperationIDKey)]; o != nil && len(o.ops) == 1 {
			return o.ops[0].str(attrs.OutcomeKey)
		}
		return "(no operation span for span " + s.String() + ")"
	}
	return "(span not in the trace)"
}

func joinMax(lines []string, max int) string {
	if len(lines) > max {
		lines = append(lines[:max:max], fmt.Sprintf("... and %d more", len(lines)-max))
	}
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "\n  "
		}
		out += l
	}
	return out
}
