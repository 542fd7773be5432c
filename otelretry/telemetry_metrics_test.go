// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package otelretry_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/scripted"
	"github.com/otelretry/otelretry-go/otelretry"
)

func (h *harness) collect(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func sumBy(t *testing.T, rm metricdata.ResourceMetrics, name string, key attribute.Key) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				v, _ := dp.Attributes.Value(key)
				out[v.Emit()] += dp.Value
			}
		}
	}
	return out
}

func TestTelemetryUsesTheLibraryScope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)))
		resp, err := h.client.Do(get(t, t.Context(), "http://api.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := instrumentation.Scope{Name: otelretry.ScopeName, Version: otelretry.Version}
		if got := h.operation(t).InstrumentationScope(); got != want {
			t.Errorf("span scope = %+v, want %+v", got, want)
		}
		var found bool
		for _, sm := range h.collect(t).ScopeMetrics {
			if sm.Scope == want {
				found = len(sm.Metrics) == 6
			}
		}
		if !found {
			t.Error("no scope with the six retry instruments under the library scope")
		}
	})
}

// Ten operations, three of which end deadline_exceeded: the dashboard's
// deadline ratio is exactly 0.3, and the retry share computed from the
// metrics equals the one computed from the spans of the same run.
func TestDashboardRatiosAreExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Per operation: 503 then 200 (7 ops), or 503 with Retry-After past
		// the budget (3 ops).
		var steps []scripted.Step
		for i := range 10 {
			if i%3 == 0 && i < 9 {
				steps = append(steps, scripted.Step{Status: 503, Header: http.Header{"Retry-After": {"60"}}})
				continue
			}
			steps = append(steps, scripted.Step{Status: 503}, scripted.Step{Status: 200})
		}
		// No budget: ten failed first attempts in a row would throttle the
		// retries (and the Retry-After would hold them); this test is about
		// metrics matching spans.
		h := newHarness(t, steps, otelretry.WithDeadline(time.Second), otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithoutBudget())
		for i := range 10 {
			resp, err := h.client.Do(get(t, otelretry.WithOperationID(t.Context(), fmt.Sprint("op-", i)), "http://api.test/"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		rm := h.collect(t)
		outcomes := sumBy(t, rm, "retry.operations", attrs.OutcomeKey)
		var ops int64
		for _, n := range outcomes {
			ops += n
		}
		if ops != 10 || outcomes["deadline_exceeded"] != 3 {
			t.Fatalf("outcomes = %v", outcomes)
		}
		if ratio := float64(outcomes["deadline_exceeded"]) / float64(ops); ratio != 0.3 {
			t.Fatalf("deadline ratio = %v, want 0.3", ratio)
		}

		decisions := sumBy(t, rm, "retry.attempts", attrs.DecisionKey)
		var attempts int64
		for _, n := range decisions {
			attempts += n
		}
		spanDecisions := map[string]int64{}
		for _, e := range h.events(t) {
			spanDecisions[e.Decision]++
		}
		if attempts != int64(len(h.attempts())) || decisions["retry"] != spanDecisions["retry"] || decisions["retry"] != 7 {
			t.Fatalf("metrics decisions %v (total %d), span decisions %v (total %d)", decisions, attempts, spanDecisions, len(h.attempts()))
		}
	})
}

// Thousands of operations with distinct ids and URLs make a fixed, small
// number of series, and no label value carries an id or a path.
func TestMetricCardinalityIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}, {Status: 404}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(0)), otelretry.WithoutBudget())
		for i := range 3000 {
			url := fmt.Sprintf("http://api.test/users/%d/orders?id=%d", i, i)
			resp, err := h.client.Do(get(t, otelretry.WithOperationID(t.Context(), fmt.Sprintf("op-%d", i)), url))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		series := 0
		retrySets(t, h, func(metric string, s attribute.Set) {
			series++
			for _, kv := range s.ToSlice() {
				v := kv.Value.Emit()
				if strings.Contains(v, "op-") || strings.Contains(v, "/") || strings.Contains(v, "users") {
					t.Errorf("%s label %s=%q carries an id or a path", metric, kv.Key, v)
				}
				if kv.Key == attrs.OperationIDKey || kv.Key == attrs.RequestIDKey || kv.Key == attrs.URLFullKey {
					t.Errorf("%s has the label %s", metric, kv.Key)
				}
			}
		})
		// Operations: first 503→200 (return, 2 attempts); the scripted base
		// then answers 404 for ever (stop). Series: operations 2, attempts 3
		// (retry/503, return/200, stop/404), operation.attempts 2,
		// operation.duration 2, attempt.duration 3, backoff 1.
		if series != 13 {
			t.Fatalf("series = %d, want 13 for 3000 distinct operations", series)
		}
	})
}

// WithMetricAttributes adds the user's labels to every retry instrument and
// drops ids, URLs and the recorder's own keys.
func TestMetricAttributesEnrichEveryInstrument(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}},
			otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond)),
			otelretry.WithMetricAttributes(func(r *http.Request) []attribute.KeyValue {
				return []attribute.KeyValue{
					attribute.String("dependency", "orders"),
					attrs.OperationIDKey.String("op-must-not-be-a-label"),
					attrs.URLFullKey.String(r.URL.String()),
					attrs.DecisionKey.String("forged"),
				}
			}))
		resp, err := h.client.Do(get(t, otelretry.WithOperationID(t.Context(), "op-1"), "http://api.test/x?id=7"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		seen := 0
		retrySets(t, h, func(metric string, s attribute.Set) {
			seen++
			if v, ok := s.Value("dependency"); !ok || v.AsString() != "orders" {
				t.Errorf("%s: no dependency=orders label in %v", metric, s.ToSlice())
			}
			for _, k := range []attribute.Key{attrs.OperationIDKey, attrs.URLFullKey} {
				if s.HasValue(k) {
					t.Errorf("%s carries %s", metric, k)
				}
			}
			if v, ok := s.Value(attrs.DecisionKey); ok && v.AsString() == "forged" {
				t.Errorf("%s: the enricher overwrote retry.decision", metric)
			}
		})
		if seen != 8 { // operations, operation.attempts, operation.duration: 1; attempts, attempt.duration: 2; backoff: 1
			t.Fatalf("label sets = %d, want 8", seen)
		}
	})
}

// retrySets calls f for every label set of every retry instrument.
func retrySets(t *testing.T, h *harness, f func(metric string, s attribute.Set)) {
	t.Helper()
	for _, sm := range h.collect(t).ScopeMetrics {
		if sm.Scope.Name != otelretry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			for _, s := range attributeSets(m) {
				f(m.Name, s)
			}
		}
	}
}

func attributeSets(m metricdata.Metrics) []attribute.Set {
	var sets []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, dp := range d.DataPoints {
			sets = append(sets, dp.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, dp := range d.DataPoints {
			sets = append(sets, dp.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, dp := range d.DataPoints {
			sets = append(sets, dp.Attributes)
		}
	}
	return sets
}

// retryDataPointAttributes returns the attribute sets of every data point
// of the retry instruments (the library's scope), by instrument name.
func retryDataPointAttributes(rm metricdata.ResourceMetrics) map[string][]attribute.Set {
	out := map[string][]attribute.Set{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelretry.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range data.DataPoints {
					out[m.Name] = append(out[m.Name], dp.Attributes)
				}
			case metricdata.Histogram[int64]:
				for _, dp := range data.DataPoints {
					out[m.Name] = append(out[m.Name], dp.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, dp := range data.DataPoints {
					out[m.Name] = append(out[m.Name], dp.Attributes)
				}
			}
		}
	}
	return out
}

// server.address is a label of every retry instrument with
// WithMetricsServerAddress (the host, without the port), and of none
// without it.
func TestMetricsServerAddressOnlyByOption(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []otelretry.Option
		want string // "" = no server.address label
	}{
		{"default", nil, ""},
		{"WithMetricsServerAddress", []otelretry.Option{otelretry.WithMetricsServerAddress()}, "api.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := append([]otelretry.Option{otelretry.WithBackoff(otelretry.ConstantBackoff(time.Millisecond))}, tc.opts...)
				h := newHarness(t, []scripted.Step{{Status: 503}, {Status: 200}}, opts...)
				resp, err := h.client.Do(get(t, t.Context(), "http://api.test:8443/items?id=1"))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				sets := retryDataPointAttributes(h.collect(t))
				if len(sets) != 6 {
					t.Fatalf("data points for %d retry instruments, want 6: %v", len(sets), sets)
				}
				for name, ss := range sets {
					for _, s := range ss {
						v, ok := s.Value(attrs.ServerAddressKey)
						if got := v.AsString(); ok != (tc.want != "") || got != tc.want {
							t.Errorf("%s: server.address = %q (present %v), want %q", name, got, ok, tc.want)
						}
					}
				}
			})
		})
	}
}
