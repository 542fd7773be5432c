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

// substitute replaces the dashboard variables the way Grafana would for a
// dashboard whose time range covers the whole run:
//
//	$job                                      -> the run's service name (a regexp without metacharacters)
//	$__range, $__rate_interval, $__interval   -> window, e.g. "300s"
//
// An unknown variable is an error.
func substitute(expr, job string, window time.Duration) (string, error) {
	w := fmt.Sprintf("%ds", int(math.Ceil(window.Seconds())))
	var unknown []string
	out := dashboardVar.ReplaceAllStringFunc(expr, func(m string) string {
		sm := dashboardVar.FindStringSubmatch(m)
		name := sm[1] + sm[2]
		switch name {
		case "job":
			return regexp.QuoteMeta(job)
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

func (s sample) key() string {
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		v := s.Labels[k]
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
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// promQuery evaluates expr as an instant query at now.
func promQuery(promURL, expr string) ([]sample, error) {
	body, err := httpGet(promURL + "/api/v1/query?" + url.Values{"query": {expr}}.Encode())
	if err != nil {
		return nil, err
	}
	var r struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	parse := func(v [2]any) (float64, error) {
		s, _ := v[1].(string)
		return strconv.ParseFloat(s, 64)
	}
	switch r.Data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(r.Data.Result, &vec); err != nil {
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
		if err := json.Unmarshal(r.Data.Result, &v); err != nil {
			return nil, err
		}
		f, err := parse(v)
		return []sample{{Labels: map[string]string{}, Value: f}}, err
	}
	return nil, fmt.Errorf("result type %q", r.Data.ResultType)
}

// expectation is what one dashboard expression must return for a workload.
type expectation struct {
	// exact samples, compared by label set; nil with check set means "use check".
	samples []sample
	// check, when set, validates the result instead of samples (for values the
	// summary cannot give exactly, such as mean durations).
	check func([]sample) error
	// explanation for the log.
	what string
}

// exactly compares got with want (same label sets, values within 1e-9).
func exactly(got, want []sample) error {
	g := map[string]float64{}
	for _, s := range got {
		g[s.key()] = s.Value
	}
	w := map[string]float64{}
	for _, s := range want {
		w[s.key()] = s.Value
	}
	var diffs []string
	for k, wv := range w {
		gv, ok := g[k]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s missing (want %g)", k, wv))
		case math.Abs(gv-wv) > 1e-9*math.Max(1, math.Abs(wv)):
			diffs = append(diffs, fmt.Sprintf("%s = %g, want %g", k, gv, wv))
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

func (e expectation) verify(got []sample) error {
	if e.check != nil {
		return e.check(got)
	}
	return exactly(got, e.samples)
}

// workload is the summary reduced to the counts the metrics must show.
type workload struct {
	ops, attempts                 float64
	opsByOutcome                  map[string]float64
	opsByMethod                   map[string]float64
	opsByMethodOutcome            map[[2]string]float64
	attemptsByDecision            map[string]float64
	attemptsByClass               map[string]float64
	attemptsByMethod              map[string]float64
	attemptsByMethodDecision      map[[2]string]float64
	attemptsByMethodClass         map[[2]string]float64
	attemptsByResult              map[[3]string]float64 // decision, error class, status
	attemptsPerOp                 []int
	opDurations, attemptDurations []time.Duration
	retries                       float64
}

func newWorkload(s summary) workload {
	w := workload{
		opsByOutcome:             map[string]float64{},
		opsByMethod:              map[string]float64{},
		opsByMethodOutcome:       map[[2]string]float64{},
		attemptsByDecision:       map[string]float64{},
		attemptsByClass:          map[string]float64{},
		attemptsByMethod:         map[string]float64{},
		attemptsByMethodDecision: map[[2]string]float64{},
		attemptsByMethodClass:    map[[2]string]float64{},
		attemptsByResult:         map[[3]string]float64{},
	}
	for _, op := range s.Operations {
		w.ops++
		w.opsByOutcome[op.Outcome]++
		w.opsByMethod[op.Method]++
		w.opsByMethodOutcome[[2]string{op.Method, op.Outcome}]++
		w.attemptsPerOp = append(w.attemptsPerOp, len(op.Attempts))
		if op.DurationMs != nil { // only an explicit duration: attempts do not add up to it
			w.opDurations = append(w.opDurations, time.Duration(*op.DurationMs*float64(time.Millisecond)))
		}
		for _, a := range op.Attempts {
			w.attempts++
			w.attemptsByDecision[a.Decision]++
			w.attemptsByMethod[op.Method]++
			w.attemptsByMethodDecision[[2]string{op.Method, a.Decision}]++
			if a.ErrorClass != "" {
				w.attemptsByClass[a.ErrorClass]++
				w.attemptsByMethodClass[[2]string{op.Method, a.ErrorClass}]++
			}
			status := ""
			if a.Status != 0 {
				status = strconv.Itoa(a.Status)
			}
			w.attemptsByResult[[3]string{a.Decision, a.ErrorClass, status}]++
			if a.Decision == "retry" {
				w.retries++
			}
			if a.ElapsedMs != nil {
				w.attemptDurations = append(w.attemptDurations, time.Duration(*a.ElapsedMs*float64(time.Millisecond)))
			}
		}
	}
	return w
}

// attemptBuckets are the explicit bounds of retry.operation.attempts (issue 3).
var attemptBuckets = []float64{0, 1, 2, 3, 4, 5, 6, 8, 10}

func one(v float64) []sample { return []sample{{Labels: map[string]string{}, Value: v}} }

// ratio is num/den as the dashboard computes it: no sample when den is 0.
func ratio(num, den float64) []sample {
	if den == 0 {
		return nil
	}
	return one(num / den)
}

func byLabel(label string, m map[string]float64) []sample {
	var out []sample
	for k, v := range m {
		out = append(out, sample{Labels: map[string]string{label: k}, Value: v})
	}
	return out
}

// meanWithin checks a single mean against the summary's durations with a
// tolerance, or only that it is a plausible duration when the summary has none.
func meanWithin(ds []time.Duration, n int, what string) func([]sample) error {
	return func(got []sample) error {
		if n == 0 {
			if len(got) != 0 {
				return fmt.Errorf("%s: %d samples for no observations", what, len(got))
			}
			return nil
		}
		if len(got) != 1 || len(got[0].Labels) != 0 {
			return fmt.Errorf("%s: want one unlabelled sample, got %v", what, got)
		}
		v := got[0].Value
		if math.IsNaN(v) || v < 0 || v > 120 {
			return fmt.Errorf("%s: mean %g s is not a plausible duration", what, v)
		}
		if len(ds) == n {
			var sum time.Duration
			for _, d := range ds {
				sum += d
			}
			want := sum.Seconds() / float64(n)
			if tol := math.Max(0.02, 0.2*want); math.Abs(v-want) > tol {
				return fmt.Errorf("%s: mean %.4f s, summary %.4f s (tolerance %.3f s)", what, v, want, tol)
			}
		}
		return nil
	}
}

// expectations maps each dashboard expression (panel title / refId) to its
// expected result for workload w. A dashboard expression without an entry
// here fails the test: a new panel needs a new expectation.
func expectations(w workload) map[string]expectation {
	distribution := func() []sample {
		var out []sample
		for _, b := range append(append([]float64{}, attemptBuckets...), math.Inf(1)) {
			n := 0
			for _, a := range w.attemptsPerOp {
				if float64(a) <= b {
					n++
				}
			}
			le := "+Inf"
			if !math.IsInf(b, 1) {
				le = strconv.FormatFloat(b, 'g', -1, 64)
			}
			out = append(out, sample{Labels: map[string]string{"le": le}, Value: float64(n)})
		}
		return out
	}
	results := func() []sample {
		var out []sample
		for k, v := range w.attemptsByResult {
			l := map[string]string{"retry_decision": k[0]}
			if k[1] != "" {
				l["retry_error_class"] = k[1]
			}
			if k[2] != "" {
				l["http_response_status_code"] = k[2]
			}
			out = append(out, sample{Labels: l, Value: v})
		}
		return out
	}
	perMethod := func(m map[string]float64) []sample { return byLabel("http_request_method", m) }
	perMethodShare := func(num map[[2]string]float64, sel string, den map[string]float64) []sample {
		var out []sample
		for method, d := range den {
			out = append(out, sample{Labels: map[string]string{"http_request_method": method},
				Value: num[[2]string{method, sel}] / d})
		}
		return out
	}
	methodOutcome := func() []sample {
		var out []sample
		for k, v := range w.opsByMethodOutcome {
			out = append(out, sample{Labels: map[string]string{"http_request_method": k[0], "retry_outcome": k[1]}, Value: v})
		}
		return out
	}
	return map[string]expectation{
		"Retry ratio/A": {samples: ratio(w.attemptsByDecision["retry"], w.attempts),
			what: "attempts with decision retry / attempts"},
		"Timeout share among attempts/A": {samples: ratio(w.attemptsByClass["timeout"], w.attempts),
			what: "attempts with error class timeout / attempts"},
		"Deadline ratio/A": {samples: ratio(w.opsByOutcome["deadline_exceeded"], w.ops),
			what: "operations deadline_exceeded / operations"},
		"Retry budget/A": {samples: ratio(w.attemptsByDecision["budget_exhausted"], w.attempts),
			what: "attempts with decision budget_exhausted / attempts"},
		"Retry budget/B": {samples: ratio(w.opsByOutcome["budget_exhausted"], w.ops),
			what: "operations budget_exhausted / operations"},
		"Operations/A": {samples: one(w.ops), what: "operations"},
		"Attempts/A":   {samples: one(w.attempts), what: "attempts"},
		"Attempts per operation (mean)/A": {samples: ratio(w.attempts, w.ops),
			what: "attempts / operations"},
		"Attempts-per-operation distribution/A": {samples: distribution(),
			what: "operations with at most le attempts"},
		"Attempt results/A": {samples: results(),
			what: "attempts by decision, error class, status"},
		"Terminal reasons over time/A": {samples: byLabel("retry_outcome", w.opsByOutcome),
			what: "operations by outcome"},
		"Attempt decisions over time/A": {samples: byLabel("retry_decision", w.attemptsByDecision),
			what: "attempts by decision"},
		"Attempt failure classes over time/A": {samples: byLabel("retry_error_class", w.attemptsByClass),
			what: "attempts by error class"},
		"Mean durations/A": {check: meanWithin(w.opDurations, int(w.ops), "operation duration"),
			what: "mean operation duration (vs summary duration_ms when present)"},
		"Mean durations/B": {check: meanWithin(w.attemptDurations, int(w.attempts), "attempt duration"),
			what: "mean attempt duration (vs summary elapsed_ms when present)"},
		"Mean durations/C": {check: meanWithin(nil, int(w.retries), "backoff duration"),
			what: "mean backoff (one per retry decision)"},
		"Per-method breakdown/A": {samples: perMethod(w.opsByMethod), what: "operations by method"},
		"Per-method breakdown/B": {samples: perMethod(w.attemptsByMethod), what: "attempts by method"},
		"Per-method breakdown/C": {samples: perMethodShare(w.attemptsByMethodDecision, "retry", w.attemptsByMethod),
			what: "retry ratio by method"},
		"Per-method breakdown/D": {samples: perMethodShare(w.attemptsByMethodClass, "timeout", w.attemptsByMethod),
			what: "timeout share by method"},
		"Per-method breakdown/E": {samples: perMethodShare(w.opsByMethodOutcome, "deadline_exceeded", w.opsByMethod),
			what: "deadline ratio by method"},
		"Terminal reasons per method over time/A": {samples: methodOutcome(),
			what: "operations by method and outcome"},
	}
}

// extraChecks are queries of the test's own (not from the dashboard) that
// pin down what the dashboard relies on: histogram counts agree with the
// counters, and every series of the run carries its service.instance.id.
func extraChecks(job, instance string, w workload) map[string]expectation {
	sel := fmt.Sprintf(`{job=%q}`, job)
	return map[string]expectation{
		"sum(retry_operation_duration_seconds_count" + sel + ")": {samples: one(w.ops),
			what: "one operation duration per operation"},
		"sum(retry_operation_attempts_count" + sel + ")": {samples: one(w.ops),
			what: "one attempts observation per operation"},
		"sum(retry_attempt_duration_seconds_count" + sel + ")": {samples: nonEmpty(one(w.attempts), w.attempts),
			what: "one attempt duration per attempt"},
		"sum(retry_backoff_duration_seconds_count" + sel + ")": {samples: nonEmpty(one(w.retries), w.retries),
			what: "one backoff per retry decision"},
		"count by (instance) (retry_operations_total" + sel + ")": {
			check: func(got []sample) error {
				if len(got) != 1 || got[0].Labels["instance"] != instance {
					return fmt.Errorf("want every series on instance %q (service.instance.id), got %v", instance, got)
				}
				return nil
			}, what: "instance label = service.instance.id"},
	}
}

func nonEmpty(s []sample, n float64) []sample {
	if n == 0 {
		return nil
	}
	return s
}
