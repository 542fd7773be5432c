// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/otelretry/otelretry-go/attrs"
)

// The report's per-operation figures are those of the spans and of the
// client: the error classes of the attempts without a response (and no ""
// class for those with one), the state check of the operations that ran
// one and of no other, the error an operation ended with, the writes the
// server saw for a write, and each attempt's backoff as its span gives it.
func TestTheReportsFiguresAreTheSpans(t *testing.T) {
	cleanEnv(t, nil)
	out, s := runDemo(t, options{traces: filepath.Join(t.TempDir(), "t.json"), html: filepath.Join(t.TempDir(), "r.html")})
	classes := map[string]int64{}
	for _, op := range s.Operations {
		for _, a := range op.Attempts {
			if a.ErrorClass != "" {
				classes[a.ErrorClass]++
			}
		}
	}
	if !maps.Equal(s.ErrorClasses, classes) {
		t.Errorf("error_classes %v; the spans give %v", s.ErrorClasses, classes)
	}
	wantCheck := map[string]string{"state check: applied": string(attrs.StateApplied), "state check: not applied, resent": string(attrs.StateNotApplied)}
	for _, op := range s.Operations {
		if op.StateCheck != wantCheck[op.Scenario] {
			t.Errorf("%s: state check %q, want %q", op.Scenario, op.StateCheck, wantCheck[op.Scenario])
		}
		header := fmt.Sprintf("    outcome %s; response %d", op.Outcome, op.Status)
		if op.Status == 0 {
			if op.Error == "" {
				t.Errorf("%s: no response and no error", op.Scenario)
			}
			header = fmt.Sprintf("    outcome %s; error: %s", op.Outcome, op.Error)
		}
		if op.StateCheck != "" {
			header += "; state check: " + op.StateCheck
		}
		if op.Method != "GET" {
			header += fmt.Sprintf("; writes seen by the server: %d", op.WritesSeen)
		}
		if !strings.Contains(out, "\n"+header+"\n") {
			t.Errorf("%s: the output lacks the line %q", op.Scenario, header)
		}
		if op.Scenario != "503, 503, 200" {
			continue
		}
		// Two 503s, each retried after the constant 40 ms pause, without a
		// Retry-After; the 200 is not retried.
		for i, a := range op.Attempts {
			backoff := int64(-1)
			if a.BackoffMs != nil {
				backoff = *a.BackoffMs
			}
			if wantRetry := i < 2; wantRetry != (backoff == 40) || a.RetryAfterMs != nil {
				t.Errorf("%s attempt %d: backoff_ms %d, retry_after_ms %v; want 40 on the two retried attempts, no Retry-After", op.Scenario, a.Attempt, backoff, a.RetryAfterMs)
			}
		}
	}
}

// summarize refuses figures where the metrics and the spans disagree on the
// attempts only, or on the operations only, unless a sampler may have left
// spans out.
func TestSummarizeRefusesMetricsThatDisagreeWithTheSpans(t *testing.T) {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)
	m := mp.Meter("demo-test")
	ops, _ := m.Int64Counter("retry.operations")
	attempts, _ := m.Int64Counter("retry.attempts")
	// The metrics: one operation of two attempts.
	ops.Add(ctx, 1, metricAttrs(attrs.OutcomeKey.String(string(attrs.OutcomeReturn))))
	attempts.Add(ctx, 1, metricAttrs(attrs.DecisionKey.String(string(attrs.DecisionRetry))))
	attempts.Add(ctx, 1, metricAttrs(attrs.DecisionKey.String(string(attrs.DecisionReturn))))
	tel := &telemetry{reader: reader}
	two := []attemptRow{{Attempt: 1}, {Attempt: 2}}
	for _, c := range []struct {
		name    string
		ops     []operationRecord
		sampler string
		refused bool
	}{
		{"agreeing", []operationRecord{{Attempts: two}}, "", false},
		{"one attempt fewer in the spans", []operationRecord{{Attempts: two[:1]}}, "", true},
		{"one operation more in the spans", []operationRecord{{Attempts: two[:1]}, {Attempts: two[1:]}}, "", true},
		{"sampled", []operationRecord{{Attempts: two[:1]}}, "traceidratio", false},
	} {
		tel.sampler = c.sampler
		if _, err := summarize(ctx, tel, c.ops); (err != nil) != c.refused {
			t.Errorf("%s: summarize error %v; want refused %v", c.name, err, c.refused)
		}
	}
}

func metricAttrs(kv ...attribute.KeyValue) metric.AddOption { return metric.WithAttributes(kv...) }
