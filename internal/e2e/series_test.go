// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// series is one Prometheus series as the Collector's prometheus exporter
// writes an SDK data point: name and labels translated, value cumulative.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

// seriesSet holds series by name and label set.
type seriesSet map[string]series

func (s seriesSet) add(name string, labels map[string]string, v float64) {
	s[name+labelKey(labels)] = series{name: name, labels: labels, value: v}
}

var nonLabelChar = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// promName is the Collector's default translation of an instrument name
// (translation_strategy UnderscoreEscapingWithSuffixes): dots to
// underscores, the unit as a suffix (annotations in braces dropped), and
// _total for a monotonic sum.
func promName(name, unit string, monotonic bool) string {
	n := nonLabelChar.ReplaceAllString(name, "_")
	switch unit {
	case "s":
		n += "_seconds"
	case "ms":
		n += "_milliseconds"
	case "By":
		n += "_bytes"
	}
	if monotonic {
		n += "_total"
	}
	return n
}

func promLabels(set attribute.Set) map[string]string {
	out := map[string]string{}
	for _, kv := range set.ToSlice() {
		out[nonLabelChar.ReplaceAllString(string(kv.Key), "_")] = kv.Value.Emit()
	}
	return out
}

// seriesOf converts the data of one instrumentation scope to Prometheus
// series: int64 sums, and explicit-bucket histograms as their _bucket (with
// le, cumulative), _sum and _count series.
func seriesOf(rm metricdata.ResourceMetrics, scope string) (seriesSet, error) {
	out := seriesSet{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != scope {
			continue
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if d.Temporality != metricdata.CumulativeTemporality {
					return nil, fmt.Errorf("%s: temporality %v, want cumulative", m.Name, d.Temporality)
				}
				name := promName(m.Name, m.Unit, d.IsMonotonic)
				for _, dp := range d.DataPoints {
					out.add(name, promLabels(dp.Attributes), float64(dp.Value))
				}
			case metricdata.Histogram[int64]:
				addHistogram(out, promName(m.Name, m.Unit, false), d.DataPoints, func(v int64) float64 { return float64(v) })
			case metricdata.Histogram[float64]:
				addHistogram(out, promName(m.Name, m.Unit, false), d.DataPoints, func(v float64) float64 { return v })
			default:
				return nil, fmt.Errorf("%s: data type %T not handled", m.Name, m.Data)
			}
		}
	}
	return out, nil
}

func addHistogram[N int64 | float64](out seriesSet, name string, dps []metricdata.HistogramDataPoint[N], f func(N) float64) {
	for _, dp := range dps {
		labels := promLabels(dp.Attributes)
		var cum uint64
		for i, c := range dp.BucketCounts {
			cum += c
			le := math.Inf(1)
			if i < len(dp.Bounds) {
				le = dp.Bounds[i]
			}
			l := cloneLabels(labels)
			l["le"] = formatLe(le)
			out.add(name+"_bucket", l, float64(cum))
		}
		out.add(name+"_sum", labels, f(dp.Sum))
		out.add(name+"_count", labels, float64(dp.Count))
	}
}

func cloneLabels(l map[string]string) map[string]string {
	out := make(map[string]string, len(l)+1)
	for k, v := range l {
		out[k] = v
	}
	return out
}

// minus returns what each series gained since before: the value an exact
// increase() over the interval would show. Series absent before are
// listed in fresh: Prometheus 2.42 sees no increase in a series' first
// sample, so the warm-up must have created every series.
func (s seriesSet) minus(before seriesSet) (delta seriesSet, fresh []string) {
	delta = seriesSet{}
	for k, v := range s {
		b, ok := before[k]
		if !ok {
			fresh = append(fresh, k)
		}
		delta[k] = series{name: v.name, labels: v.labels, value: v.value - b.value}
	}
	sort.Strings(fresh)
	return delta, fresh
}

// matcher selects series by their labels, as a PromQL selector does.
type matcher func(labels map[string]string) bool

// eq and ne match a label's value; an absent label has the value "".
func eq(label, value string) matcher {
	return func(l map[string]string) bool { return l[label] == value }
}

func ne(label, value string) matcher {
	return func(l map[string]string) bool { return l[label] != value }
}

func (s seriesSet) each(name string, ms []matcher, f func(series)) {
	for _, v := range s {
		if v.name != name {
			continue
		}
		ok := true
		for _, m := range ms {
			ok = ok && m(v.labels)
		}
		if ok {
			f(v)
		}
	}
}

// sum is sum(name{ms}); ok is false when no series matches (an empty result).
func (s seriesSet) sum(name string, ms ...matcher) (total float64, ok bool) {
	s.each(name, ms, func(v series) { total += v.value; ok = true })
	return total, ok
}

// sumBy is sum by (labels) (name{ms}); an absent label groups as "" and is
// left out of the result's labels, as in PromQL.
func (s seriesSet) sumBy(name string, by []string, ms ...matcher) map[string]sample {
	out := map[string]sample{}
	s.each(name, ms, func(v series) {
		l := map[string]string{}
		for _, b := range by {
			if x := v.labels[b]; x != "" {
				l[b] = x
			}
		}
		k := labelKey(l)
		out[k] = sample{Labels: l, Value: out[k].Value + v.value}
	})
	return out
}

func values(m map[string]sample) []sample {
	out := make([]sample, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// bucketQuantile is Prometheus' histogram_quantile over one set of
// cumulative buckets (by le), with its linear interpolation.
func bucketQuantile(q float64, buckets map[string]sample) float64 {
	type bucket struct{ upper, count float64 }
	var bs []bucket
	for _, s := range buckets {
		u, err := strconv.ParseFloat(s.Labels["le"], 64)
		if err != nil {
			return math.NaN()
		}
		bs = append(bs, bucket{u, s.Value})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].upper < bs[j].upper })
	if len(bs) < 2 || !math.IsInf(bs[len(bs)-1].upper, 1) || bs[len(bs)-1].count == 0 {
		return math.NaN()
	}
	rank := q * bs[len(bs)-1].count
	b := sort.Search(len(bs)-1, func(i int) bool { return bs[i].count >= rank })
	if b == len(bs)-1 {
		return bs[len(bs)-2].upper
	}
	if b == 0 && bs[0].upper <= 0 {
		return bs[0].upper
	}
	start, end, count := 0.0, bs[b].upper, bs[b].count
	if b > 0 {
		start = bs[b-1].upper
		count -= bs[b-1].count
		rank -= bs[b-1].count
	}
	return start + (end-start)*(rank/count)
}

// Series names of the retry metrics in Prometheus, as the dashboard uses them.
const (
	promOperations        = "retry_operations_total"
	promAttempts          = "retry_attempts_total"
	promOperationAttempts = "retry_operation_attempts"
	promOperationDuration = "retry_operation_duration_seconds"
	promAttemptDuration   = "retry_attempt_duration_seconds"
	promBackoffDuration   = "retry_backoff_duration_seconds"
	promThrottled         = "retry_throttled_total"
)

// Label names of the retry metrics in Prometheus.
const (
	lMethod   = "http_request_method"
	lOutcome  = "retry_outcome"
	lDecision = "retry_decision"
	lClass    = "retry_error_class"
	lStatus   = "http_response_status_code"
)

// dashboardExpectations maps each dashboard expression (panel title /
// refId) to its value for delta, the increase of every series over the
// window: totals and ratios from increase() over $__range, per-second
// rates (delta / window) from rate() over $__rate_interval. A dashboard
// expression without an entry fails the test, and so does an entry
// without an expression: a new panel needs a new expectation.
func dashboardExpectations(d seriesSet, window time.Duration, tolerance float64) map[string]expectation {
	secs := window.Seconds()
	one := func(v float64) []sample { return []sample{{Labels: map[string]string{}, Value: v}} }
	// ratio is (sum(num) or vector(0)) / sum(den): no sample when den has no series.
	ratio := func(name string, num ...matcher) []sample {
		den, ok := d.sum(name)
		if !ok {
			return nil
		}
		n, _ := d.sum(name, num...)
		return one(n / den)
	}
	total := func(name string) []sample {
		v, ok := d.sum(name)
		if !ok {
			return nil
		}
		return one(v)
	}
	mean := func(h string) []sample {
		s, ok1 := d.sum(h + "_sum")
		c, ok2 := d.sum(h + "_count")
		if !ok1 || !ok2 {
			return nil
		}
		return one(s / c)
	}
	perSecond := func(m map[string]sample) []sample {
		out := values(m)
		for i := range out {
			out[i].Value /= secs
		}
		return out
	}
	quantile := func(q float64) []sample {
		b := d.sumBy(promOperationDuration+"_bucket", []string{"le"})
		if len(b) == 0 {
			return nil
		}
		return one(bucketQuantile(q, b))
	}
	// perMethod is (sum by (method) (num) or 0 * sum by (method) (den)) / sum by (method) (den).
	perMethod := func(name string, num matcher) []sample {
		nums := d.sumBy(name, []string{lMethod}, num)
		var out []sample
		for k, den := range d.sumBy(name, []string{lMethod}) {
			out = append(out, sample{Labels: den.Labels, Value: nums[k].Value / den.Value})
		}
		return out
	}
	// throttleShare is (sum(throttled) or vector(0)) / (sum(attempts) +
	// (sum(throttled) or vector(0))).
	throttleShare := func() []sample {
		attempts, ok := d.sum(promAttempts)
		if !ok {
			return nil
		}
		refused, _ := d.sum(promThrottled)
		return one(refused / (attempts + refused))
	}
	exp := func(s []sample, what string) expectation {
		return expectation{samples: s, tolerance: tolerance, what: what}
	}
	return map[string]expectation{
		"Retry ratio/A": exp(ratio(promAttempts, eq(lDecision, "retry")),
			"attempts with decision retry / attempts"),
		"Timeout share among attempts/A": exp(ratio(promAttempts, eq(lClass, "timeout")),
			"attempts with error class timeout / attempts"),
		"Deadline ratio/A": exp(ratio(promOperations, eq(lOutcome, "deadline_exceeded")),
			"operations deadline_exceeded / operations"),
		"Retry budget/A": exp(ratio(promAttempts, eq(lDecision, "budget_exhausted")),
			"attempts with decision budget_exhausted / attempts"),
		"Retry budget/B": exp(ratio(promOperations, eq(lOutcome, "budget_exhausted")),
			"operations budget_exhausted / operations"),
		"Superseded share (hedging)/A": exp(ratio(promAttempts, eq(lDecision, "superseded"), ne(lClass, "canceled"), ne(lClass, "timeout")),
			"attempts with decision superseded, not cut by the operation's end / attempts"),
		"Throttle rejection rate/A": exp(throttleShare(), "requests the throttle refused / (attempts + those refused)"),
		"Operations/A":              exp(total(promOperations), "operations"),
		"Attempts/A":                exp(total(promAttempts), "attempts"),
		"Attempts per operation (mean)/A": exp(mean(promOperationAttempts),
			"attempts / operations (histogram sum / count)"),
		"Attempts-per-operation distribution/A": exp(values(d.sumBy(promOperationAttempts+"_bucket", []string{"le"})),
			"operations with at most le attempts"),
		"Attempt results/A": exp(values(d.sumBy(promAttempts, []string{lDecision, lClass, lStatus})),
			"attempts by decision, error class, status"),
		"Retry and deadline ratios over time/A": exp(ratio(promAttempts, eq(lDecision, "retry")),
			"retry ratio from rates"),
		"Retry and deadline ratios over time/B": exp(ratio(promOperations, eq(lOutcome, "deadline_exceeded")),
			"deadline ratio from rates"),
		"Operation latency/A": exp(quantile(0.5), "p50 of the operation duration buckets"),
		"Operation latency/B": exp(quantile(0.95), "p95 of the operation duration buckets"),
		"Operation latency/C": exp(quantile(0.99), "p99 of the operation duration buckets"),
		"Terminal reasons over time/A": exp(perSecond(d.sumBy(promOperations, []string{lOutcome})),
			"operations per second by outcome"),
		"Attempt decisions over time/A": exp(perSecond(d.sumBy(promAttempts, []string{lDecision})),
			"attempts per second by decision"),
		"Attempt failure classes over time/A": exp(perSecond(d.sumBy(promAttempts, []string{lClass}, ne(lClass, ""))),
			"attempts per second by error class"),
		"Mean durations/A": exp(mean(promOperationDuration), "mean operation duration"),
		"Mean durations/B": exp(mean(promAttemptDuration), "mean attempt duration"),
		"Mean durations/C": exp(mean(promBackoffDuration), "mean backoff"),
		"Per-method breakdown/A": exp(values(d.sumBy(promOperations, []string{lMethod})),
			"operations by method"),
		"Per-method breakdown/B": exp(values(d.sumBy(promAttempts, []string{lMethod})),
			"attempts by method"),
		"Per-method breakdown/C": exp(perMethod(promAttempts, eq(lDecision, "retry")), "retry ratio by method"),
		"Per-method breakdown/D": exp(perMethod(promAttempts, eq(lClass, "timeout")), "timeout share by method"),
		"Per-method breakdown/E": exp(perMethod(promOperations, eq(lOutcome, "deadline_exceeded")),
			"deadline ratio by method"),
		"Terminal reasons per method over time/A": exp(perSecond(d.sumBy(promOperations, []string{lMethod, lOutcome})),
			"operations per second by method and outcome"),
	}
}

// describeDelta summarizes a delta for the log.
func describeDelta(d seriesSet) string {
	ops, _ := d.sum(promOperations)
	attempts, _ := d.sum(promAttempts)
	var parts []string
	for _, s := range values(d.sumBy(promOperations, []string{lOutcome})) {
		parts = append(parts, fmt.Sprintf("%s %g", s.Labels[lOutcome], s.Value))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%g operations (%s), %g attempts", ops, strings.Join(parts, ", "), attempts)
}
