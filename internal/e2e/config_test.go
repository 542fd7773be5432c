// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/otelretry/otelretry-go/attrs"
)

// The tests in this file read the committed configuration only: they run
// without the stack (go test ./... in internal/e2e).

func readYAML(t *testing.T, rel string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

// TestSamplerPolicies ties the tail sampling policies of the sampling tier
// to the vocabulary: the attribute keys, the outcome `return` and the
// state_check span name are those of package attrs, and each policy of the
// issue is there, with the configurable share of plain successes.
func TestSamplerPolicies(t *testing.T) {
	var cfg struct {
		Processors map[string]map[string]any `yaml:"processors"`
		Service    struct {
			Pipelines map[string]struct {
				Processors []string `yaml:"processors"`
			} `yaml:"pipelines"`
		} `yaml:"service"`
	}
	readYAML(t, "deploy/tiered/sampler.yaml", &cfg)
	ts := cfg.Processors["tail_sampling"]
	if ts == nil {
		t.Fatal("no tail_sampling processor")
	}
	b, _ := json.Marshal(ts["policies"])
	var policies []struct {
		Name             string `json:"name"`
		Type             string `json:"type"`
		NumericAttribute struct {
			Key      string `json:"key"`
			MinValue int    `json:"min_value"`
		} `json:"numeric_attribute"`
		OTTL struct {
			Span []string `json:"span"`
		} `json:"ottl_condition"`
		Probabilistic struct {
			SamplingPercentage any `json:"sampling_percentage"`
		} `json:"probabilistic"`
	}
	if err := json.Unmarshal(b, &policies); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"retry.attempts > 1":      false,
		"retry.outcome != return": false,
		"state_check span":        false,
		"share of the rest":       false,
	}
	notReturned := `attributes["` + string(attrs.OutcomeKey) + `"] != nil and attributes["` + string(attrs.OutcomeKey) +
		`"] != "` + string(attrs.OutcomeReturn) + `"`
	stateCheck := `name == "` + attrs.StateCheckSpanName + `"`
	for _, p := range policies {
		switch {
		case p.Type == "numeric_attribute" && p.NumericAttribute.Key == string(attrs.AttemptsKey) && p.NumericAttribute.MinValue == 2:
			want["retry.attempts > 1"] = true
		case p.Type == "ottl_condition" && slices.Equal(p.OTTL.Span, []string{notReturned}):
			want["retry.outcome != return"] = true
		case p.Type == "ottl_condition" && slices.Equal(p.OTTL.Span, []string{stateCheck}):
			want["state_check span"] = true
		case p.Type == "probabilistic" && p.Probabilistic.SamplingPercentage == "${env:OTELCOL_PLAIN_SUCCESS_PERCENT:-5}":
			want["share of the rest"] = true
		default:
			t.Errorf("policy %q (%s) is none of the expected ones: update this test with it", p.Name, p.Type)
		}
	}
	for what, ok := range want {
		if !ok {
			t.Errorf("no policy for %s", what)
		}
	}
	if got := cfg.Service.Pipelines["traces"].Processors; !slices.Equal(got, []string{"memory_limiter", "tail_sampling", "resource/sampler", "batch"}) {
		t.Errorf("traces pipeline processors %v", got)
	}
	res, _ := json.Marshal(cfg.Processors["resource/sampler"])
	if !strings.Contains(string(res), `"key":"`+samplerTag+`"`) {
		t.Errorf("resource/sampler does not set %s: %s", samplerTag, res)
	}

	var agent struct {
		Exporters map[string]map[string]any `yaml:"exporters"`
		Service   struct {
			Pipelines map[string]struct {
				Exporters []string `yaml:"exporters"`
			} `yaml:"pipelines"`
		} `yaml:"service"`
	}
	readYAML(t, "deploy/tiered/agent.yaml", &agent)
	if lb := agent.Exporters["load_balancing"]; lb == nil || lb["routing_key"] != "traceID" {
		t.Errorf("agent: load_balancing exporter routed by %v, want traceID", lb["routing_key"])
	}
	if got := agent.Service.Pipelines["traces"].Exporters; !slices.Equal(got, []string{"load_balancing"}) {
		t.Errorf("agent: traces exported to %v, want [load_balancing]", got)
	}
}

// TestLogsNotSampled checks the logs pipelines of the committed configs:
// the agent passes logs to the Collector of collector-config.yaml and never
// to the samplers, no logs pipeline has a sampling processor, and that
// Collector exports them to VictoriaLogs' OTLP ingestion. The e2e test
// (TestTieredPipeline, "logs") shows that every record arrives.
func TestLogsNotSampled(t *testing.T) {
	type pipeline struct {
		Receivers  []string `yaml:"receivers"`
		Processors []string `yaml:"processors"`
		Exporters  []string `yaml:"exporters"`
	}
	type config struct {
		Exporters map[string]map[string]any `yaml:"exporters"`
		Service   struct {
			Pipelines map[string]pipeline `yaml:"pipelines"`
		} `yaml:"service"`
	}
	want := []string{"memory_limiter", "batch"}
	var agent, sampler, collector config
	readYAML(t, "deploy/tiered/agent.yaml", &agent)
	readYAML(t, "deploy/tiered/sampler.yaml", &sampler)
	readYAML(t, "collector-config.yaml", &collector)

	logs, ok := agent.Service.Pipelines["logs"]
	if !ok {
		t.Fatal("agent: no logs pipeline")
	}
	if !slices.Equal(logs.Processors, want) || !slices.Equal(logs.Exporters, []string{"otlp_grpc/logs"}) {
		t.Errorf("agent: logs pipeline %+v, want processors %v and exporters [otlp_grpc/logs]", logs, want)
	}
	// The logs go where the metrics go: the Collector of collector-config.yaml.
	endpoint := func(name string) string { s, _ := agent.Exporters[name]["endpoint"].(string); return s }
	if l, m := endpoint("otlp_grpc/logs"), endpoint("otlp_grpc/metrics"); !strings.HasSuffix(l, ":-127.0.0.1:14317}") || !strings.HasSuffix(m, ":-127.0.0.1:14317}") {
		t.Errorf("agent: logs to %q, metrics to %q: both default to the Collector (127.0.0.1:14317)", l, m)
	}
	for name, p := range sampler.Service.Pipelines {
		if name != "traces" {
			t.Errorf("sampler: pipeline %s %+v: the samplers take traces only", name, p)
		}
	}

	logs, ok = collector.Service.Pipelines["logs"]
	if !ok {
		t.Fatal("collector-config.yaml: no logs pipeline")
	}
	if !slices.Equal(logs.Receivers, []string{"otlp"}) || !slices.Equal(logs.Processors, want) ||
		!slices.Equal(logs.Exporters, []string{"otlp_http/victorialogs"}) {
		t.Errorf("collector-config.yaml: logs pipeline %+v, want otlp -> %v -> otlp_http/victorialogs", logs, want)
	}
	vl := collector.Exporters["otlp_http/victorialogs"]
	if u, _ := vl["logs_endpoint"].(string); !strings.HasSuffix(u, "/insert/opentelemetry/v1/logs") {
		t.Errorf("collector-config.yaml: otlp_http/victorialogs logs_endpoint %q, want VictoriaLogs' /insert/opentelemetry/v1/logs", u)
	}
	if e := vl["encoding"]; e != "proto" {
		t.Errorf("collector-config.yaml: otlp_http/victorialogs encoding %v: VictoriaLogs takes protobuf only", e)
	}
}

// Dashboard linter conventions (Grafana's dashboard-linter rules): an
// uneditable provisioned dashboard, datasource/job/instance variables,
// every panel with a description, the templated data source and a unit,
// every selector filtered by job and instance, counters only under rate
// or increase, rate over $__rate_interval.
func TestDashboardConventions(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), dashboardPath))
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		RefID    string `json:"refId"`
		Expr     string `json:"expr"`
		Exemplar bool   `json:"exemplar"`
	}
	type panel struct {
		Type        string `json:"type"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Datasource  struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		FieldConfig struct {
			Defaults struct {
				Unit string `json:"unit"`
			} `json:"defaults"`
		} `json:"fieldConfig"`
		Targets []target `json:"targets"`
	}
	var d struct {
		Editable   *bool `json:"editable"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Label      string `json:"label"`
				Type       string `json:"type"`
				Query      any    `json:"query"`
				Datasource struct {
					UID string `json:"uid"`
				} `json:"datasource"`
				Multi      bool   `json:"multi"`
				IncludeAll bool   `json:"includeAll"`
				AllValue   string `json:"allValue"`
				Refresh    int    `json:"refresh"`
			} `json:"list"`
		} `json:"templating"`
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Editable == nil || *d.Editable {
		t.Error("dashboard: editable must be false, like its provisioning (allowUiUpdates: false)")
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		switch v.Name {
		case "datasource":
			if v.Type != "datasource" || v.Query != "prometheus" || v.Label != "Data source" {
				t.Errorf("variable datasource: type %q query %v label %q", v.Type, v.Query, v.Label)
			}
		case "job", "instance":
			label := strings.ToUpper(v.Name[:1]) + v.Name[1:]
			if v.Type != "query" || v.Label != label || v.Datasource.UID != "${datasource}" || !v.Multi ||
				!v.IncludeAll || v.AllValue != ".+" || v.Refresh != 2 {
				t.Errorf("variable %s: want a multi-value query on ${datasource} labelled %q, All = .+, refreshed on time range change", v.Name, label)
			}
		}
	}
	for _, name := range []string{"datasource", "job", "instance"} {
		if !vars[name] {
			t.Errorf("dashboard has no %s variable", name)
		}
	}

	units := []string{"short", "percentunit", "s", "ops", "reqps", "none"}
	selector := regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}`)
	rangeFn := regexp.MustCompile(`\b(rate|irate|increase)\(\s*[a-zA-Z_:][a-zA-Z0-9_:]*\{[^}]*\}\[([^\]]*)\]\)`)
	counterUse := regexp.MustCompile(`\b(\w+)\(\s*[a-zA-Z_:][a-zA-Z0-9_:]*_total\{`)
	exemplarPanels := map[string]bool{}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Description == "" || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: needs a description and the ${datasource} data source", p.Title)
		}
		if !slices.Contains(units, p.FieldConfig.Defaults.Unit) {
			t.Errorf("panel %q: unit %q, want one of %v", p.Title, p.FieldConfig.Defaults.Unit, units)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no targets", p.Title)
		}
		all := len(p.Targets) > 0
		for _, tg := range p.Targets {
			where := p.Title + "/" + tg.RefID
			for _, m := range selector.FindAllStringSubmatch(tg.Expr, -1) {
				if !strings.Contains(m[2], `job=~"$job"`) || !strings.Contains(m[2], `instance=~"$instance"`) {
					t.Errorf("%s: selector %s lacks job=~\"$job\" or instance=~\"$instance\"", where, m[0])
				}
			}
			for _, m := range rangeFn.FindAllStringSubmatch(tg.Expr, -1) {
				switch {
				case (m[1] == "rate" || m[1] == "irate") && m[2] != "$__rate_interval":
					t.Errorf("%s: %s over [%s], want [$__rate_interval]", where, m[1], m[2])
				case m[1] == "increase" && m[2] != "$__range":
					t.Errorf("%s: increase over [%s], want [$__range]", where, m[2])
				}
			}
			uses := counterUse.FindAllStringSubmatch(tg.Expr, -1)
			if n := strings.Count(tg.Expr, "_total{"); n != len(uses) {
				t.Errorf("%s: %d counter selectors, %d directly under a function", where, n, len(uses))
			}
			for _, m := range uses {
				if m[1] != "rate" && m[1] != "increase" && m[1] != "irate" {
					t.Errorf("%s: counter under %s(), want rate or increase", where, m[1])
				}
			}
			if strings.Contains(tg.Expr, "last_over_time") {
				t.Errorf("%s: last_over_time reads totals since the process started, not over the range", where)
			}
			all = all && tg.Exemplar
		}
		if all {
			exemplarPanels[p.Title] = true
		}
	}
	// Exemplars on the latency and the ratio panels, which Grafana links to Jaeger.
	for _, title := range []string{"Operation latency", "Retry and deadline ratios over time"} {
		if !exemplarPanels[title] {
			t.Errorf("panel %q: every target needs exemplar: true", title)
		}
	}
}

// TestGrafanaProvisioning: the provisioned Prometheus data source links
// exemplar trace ids to the provisioned Jaeger data source.
func TestGrafanaProvisioning(t *testing.T) {
	type datasource struct {
		Name     string `yaml:"name"`
		UID      string `yaml:"uid"`
		Type     string `yaml:"type"`
		URL      string `yaml:"url"`
		Editable bool   `yaml:"editable"`
		JSONData struct {
			Destinations []struct {
				Name          string `yaml:"name"`
				DatasourceUID string `yaml:"datasourceUid"`
			} `yaml:"exemplarTraceIdDestinations"`
		} `yaml:"jsonData"`
	}
	byUID := map[string]datasource{}
	dir := "deploy/grafana/provisioning/datasources"
	entries, err := os.ReadDir(filepath.Join(repoRoot(t), dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		var f struct {
			Datasources []datasource `yaml:"datasources"`
		}
		readYAML(t, filepath.Join(dir, e.Name()), &f)
		for _, ds := range f.Datasources {
			byUID[ds.UID] = ds
		}
	}
	prom, jaeger := byUID["prometheus"], byUID["jaeger"]
	if prom.Type != "prometheus" || jaeger.Type != "jaeger" || jaeger.URL == "" || jaeger.Editable {
		t.Fatalf("want provisioned data sources prometheus and jaeger (read-only): %+v", byUID)
	}
	ok := false
	for _, d := range prom.JSONData.Destinations {
		ok = ok || (d.Name == "trace_id" && d.DatasourceUID == jaeger.UID)
	}
	if !ok {
		t.Errorf("prometheus: exemplarTraceIdDestinations %+v, want trace_id -> %s", prom.JSONData.Destinations, jaeger.UID)
	}
}
