// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// dashboardPath is the Grafana dashboard whose expressions the test evaluates.
const dashboardPath = "deploy/grafana/dashboards/otelretry.json"

// dashboardQuery is one PromQL expression of a panel.
type dashboardQuery struct {
	Panel string
	RefID string
	Expr  string
}

func (q dashboardQuery) key() string { return q.Panel + "/" + q.RefID }

// loadDashboardQueries reads every target expression of every panel,
// including panels nested in collapsed rows.
func loadDashboardQueries(root string) ([]dashboardQuery, error) {
	b, err := os.ReadFile(filepath.Join(root, dashboardPath))
	if err != nil {
		return nil, err
	}
	type target struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	}
	type panel struct {
		Title   string   `json:"title"`
		Targets []target `json:"targets"`
		Panels  []panel  `json:"panels"`
	}
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %v", dashboardPath, err)
	}
	var out []dashboardQuery
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				if strings.TrimSpace(t.Expr) != "" {
					out = append(out, dashboardQuery{Panel: p.Title, RefID: t.RefID, Expr: t.Expr})
				}
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out, nil
}

// dashboardVar matches Grafana variables: $name, ${name} and ${name:format}.
var dashboardVar = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(?::[a-z]+)?\}|\$([A-Za-z0-9_]+)`)

// dashboardVars are the values Grafana would substitute: $job and
// $instance select one run (regular expressions without metacharacters),
// and one window stands for $__range, $__rate_interval and $__interval.
type dashboardVars struct {
	job, instance string
	window        time.Duration
}

// substitute replaces the dashboard variables; an unknown variable is an error.
func substitute(expr string, v dashboardVars) (string, error) {
	w := fmt.Sprintf("%dms", v.window.Milliseconds())
	var unknown []string
	out := dashboardVar.ReplaceAllStringFunc(expr, func(m string) string {
		sm := dashboardVar.FindStringSubmatch(m)
		switch name := sm[1] + sm[2]; name {
		case "job":
			return regexp.QuoteMeta(v.job)
		case "instance":
			return regexp.QuoteMeta(v.instance)
		case "__range", "__rate_interval", "__interval":
			return w
		}
		unknown = append(unknown, m)
		return m
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown dashboard variables %v", unknown)
	}
	return out, nil
}

// sample is one element of an instant vector.
type sample struct {
	Labels map[string]string
	Value  float64
}

func (s sample) key() string { return labelKey(s.Labels) }

// labelKey is a canonical form of a label set (le normalized).
func labelKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		v := labels[k]
		if k == "le" {
			v = normalizeLe(v)
		}
		fmt.Fprintf(&b, "%s=%q", k, v)
	}
	b.WriteString("}")
	return b.String()
}

func normalizeLe(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	return formatLe(f)
}

func formatLe(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// promQuery evaluates expr as an instant query at at (now when zero).
func promQuery(promURL, expr string, at time.Time) ([]sample, error) {
	q := url.Values{"query": {expr}}
	if !at.IsZero() {
		q.Set("time", promTime(at))
	}
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := promAPI(promURL+"/api/v1/query?"+q.Encode(), &data); err != nil {
		return nil, err
	}
	parse := func(v [2]any) (float64, error) {
		s, _ := v[1].(string)
		return strconv.ParseFloat(s, 64)
	}
	switch data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(data.Result, &vec); err != nil {
			return nil, err
		}
		out := make([]sample, 0, len(vec))
		for _, e := range vec {
			f, err := parse(e.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, sample{Labels: e.Metric, Value: f})
		}
		return out, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(data.Result, &v); err != nil {
			return nil, err
		}
		f, err := parse(v)
		return []sample{{Labels: map[string]string{}, Value: f}}, err
	}
	return nil, fmt.Errorf("result type %q", data.ResultType)
}

// scrapeTimes returns the timestamps of the Collector's scrapes within the
// last window, oldest first: every series of one scrape has its timestamp.
func scrapeTimes(promURL string, window time.Duration) ([]time.Time, error) {
	q := url.Values{"query": {fmt.Sprintf(`up{job="otel-collector"}[%dms]`, window.Milliseconds())}}
	var data struct {
		Result []struct {
			Values [][2]any `json:"values"`
		} `json:"result"`
	}
	if err := promAPI(promURL+"/api/v1/query?"+q.Encode(), &data); err != nil {
		return nil, err
	}
	if len(data.Result) != 1 {
		return nil, fmt.Errorf("up{job=\"otel-collector\"}: %d series, want 1", len(data.Result))
	}
	var out []time.Time
	for _, v := range data.Result[0].Values {
		ts, ok := v[0].(float64)
		if !ok {
			return nil, fmt.Errorf("scrape timestamp %v", v[0])
		}
		out = append(out, time.UnixMilli(int64(math.Round(ts*1000))))
	}
	return out, nil
}

// promAPI GETs a Prometheus API URL and decodes its data.
func promAPI(u string, data any) error {
	body, err := httpGet(u)
	if err != nil {
		return err
	}
	var r struct {
		Status    string          `json:"status"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return err
	}
	if r.Status != "success" {
		return fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	return json.Unmarshal(r.Data, data)
}

// promTime formats t for the API's time parameters (seconds, ms precision).
func promTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// expectation is what one expression must return.
type expectation struct {
	samples []sample
	// tolerance is the allowed relative difference per sample.
	tolerance float64
	// what explains the value, for the log.
	what string
}

// deviation is the largest relative difference between got and the
// expected samples of the same label set (0 when none is comparable).
func (e expectation) deviation(got []sample) float64 {
	w := map[string]float64{}
	for _, s := range e.samples {
		w[s.key()] = s.Value
	}
	max := 0.0
	for _, s := range got {
		if wv, ok := w[s.key()]; ok && wv != 0 && !math.IsNaN(wv) {
			max = math.Max(max, math.Abs(s.Value-wv)/math.Abs(wv))
		}
	}
	return max
}

// verify compares got with the expected samples: the same label sets, each
// value within the relative tolerance (absolute 1e-9 near zero).
func (e expectation) verify(got []sample) error {
	g := map[string]float64{}
	for _, s := range got {
		g[s.key()] = s.Value
	}
	w := map[string]float64{}
	for _, s := range e.samples {
		w[s.key()] = s.Value
	}
	var diffs []string
	for k, wv := range w {
		gv, ok := g[k]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s missing (want %g)", k, wv))
		case math.IsNaN(gv) != math.IsNaN(wv) || math.Abs(gv-wv) > e.tolerance*math.Abs(wv)+1e-9:
			diffs = append(diffs, fmt.Sprintf("%s = %g, want %g (tolerance %g relative)", k, gv, wv, e.tolerance))
		}
	}
	for k, gv := range g {
		if _, ok := w[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s = %g unexpected", k, gv))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		return fmt.Errorf("%s", strings.Join(diffs, "; "))
	}
	return nil
}
