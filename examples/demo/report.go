// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/cmd/retryinspect/htmlreport"
	"github.com/otelretry/otelretry-go/internal/spantest"
)

// attemptRow is one attempt event as read back from its span. Absent
// fields stay absent (nil / empty), never zero-filled into a fake value.
type attemptRow struct {
	RequestID    string `json:"request_id"`
	Attempt      int64  `json:"attempt"`
	Status       int64  `json:"status,omitempty"`      // absent without a response
	ErrorClass   string `json:"error_class,omitempty"` // absent with a response
	ElapsedMs    int64  `json:"elapsed_ms"`
	RemainingMs  int64  `json:"remaining_ms"`
	RetryAfterMs *int64 `json:"retry_after_ms,omitempty"`
	BackoffMs    *int64 `json:"backoff_ms,omitempty"`
	Decision     string `json:"decision"`
}

// operationRecord is one operation: what the client got back, and its
// attempts as the spans tell them.
type operationRecord struct {
	OperationID string       `json:"operation_id"`
	Scenario    string       `json:"scenario"`
	Method      string       `json:"method"`
	URL         string       `json:"url"`
	Outcome     string       `json:"outcome"`
	Status      int          `json:"status"` // response handed to the caller; 0 for an error
	DurationMs  int64        `json:"duration_ms"`
	Error       string       `json:"error,omitempty"`
	StateCheck  string       `json:"state_check,omitempty"`
	WritesSeen  int          `json:"writes_seen_by_server,omitempty"`
	Attempts    []attemptRow `json:"attempts"`
	spanID      string       // the operation span's id, in hex
}

// summary is the machine-readable result of a demo run (-summary-json).
type summary struct {
	Service string `json:"service"`
	// Exporter is the span exporter's name (otlp, file, stdout, console,
	// none); Traces, Metrics and Logs say where each signal went.
	Exporter string       `json:"exporter"`
	Traces   exportTarget `json:"traces"`
	Metrics  exportTarget `json:"metrics"`
	Logs     exportTarget `json:"logs"`
	// Propagation lists the propagation headers the server received
	// (OTEL_PROPAGATORS chooses them).
	Propagation  []string          `json:"propagation_headers"`
	Operations   []operationRecord `json:"operations"`
	Decisions    map[string]int64  `json:"decisions"`
	ErrorClasses map[string]int64  `json:"error_classes"`
	// FailedAttempts counts the attempts without a 2xx or 3xx answer by
	// their error class or status code, the error.type of their
	// retry.attempt.duration.
	FailedAttempts map[string]int64 `json:"failed_attempts"`
	Outcomes       map[string]int64 `json:"outcomes"`
	// Sampler is OTEL_TRACES_SAMPLER when it may leave spans unsampled:
	// Operations are the sampled ones.
	Sampler       string  `json:"sampler,omitempty"`
	RetryRatio    float64 `json:"retry_ratio"`
	DeadlineRatio float64 `json:"deadline_ratio"`
	// Sets is how many scenario sets were played, of Repeat (-repeat):
	// fewer when an interrupt ended a run with -every (Interrupted), the
	// set it cut counted.
	Sets        int  `json:"sets"`
	Repeat      int  `json:"repeat"`
	Interrupted bool `json:"interrupted"`
}

// readOperations groups the recorded spans by operation, in start order.
func readOperations(spans []sdktrace.ReadOnlySpan, runs map[string]runResult) []operationRecord {
	ops := spantest.Operations(spans)
	slices.SortFunc(ops, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	attempts := spantest.Attempts(spans)
	checks := spantest.Named(spans, attrs.StateCheckSpanName)
	var out []operationRecord
	for _, op := range ops {
		id := str(op, attrs.OperationIDKey)
		run := runs[id]
		rec := operationRecord{
			OperationID: id, Scenario: run.scenario, Method: str(op, attrs.HTTPRequestMethodKey), URL: str(op, attrs.URLFullKey),
			Outcome: str(op, attrs.OutcomeKey), Status: run.status, Error: run.err, WritesSeen: run.writes,
			DurationMs: op.EndTime().Sub(op.StartTime()).Milliseconds(),
			spanID:     op.SpanContext().SpanID().String(),
		}
		for _, c := range checks {
			if c.Parent().SpanID() == op.SpanContext().SpanID() {
				rec.StateCheck = str(c, attrs.StateCheckResultKey)
			}
		}
		for _, a := range attempts {
			if a.Parent().SpanID() != op.SpanContext().SpanID() {
				continue
			}
			row := attemptRow{
				RequestID: str(a, attrs.RequestIDKey), Attempt: num(a, attrs.AttemptKey), Status: num(a, attrs.HTTPResponseStatusCodeKey),
				ErrorClass: str(a, attrs.ErrorClassKey), ElapsedMs: num(a, attrs.ElapsedMsKey), RemainingMs: num(a, attrs.RemainingMsKey),
				Decision: str(a, attrs.DecisionKey),
			}
			row.RetryAfterMs = optional(a, attrs.RetryAfterMsKey)
			row.BackoffMs = optional(a, attrs.BackoffMsKey)
			rec.Attempts = append(rec.Attempts, row)
		}
		out = append(out, rec)
	}
	return out
}

func str(s sdktrace.ReadOnlySpan, k attribute.Key) string {
	v, _ := spantest.Attr(s, k)
	return v.AsString()
}

func num(s sdktrace.ReadOnlySpan, k attribute.Key) int64 {
	v, _ := spantest.Attr(s, k)
	return v.AsInt64()
}

func optional(s sdktrace.ReadOnlySpan, k attribute.Key) *int64 {
	if v, ok := spantest.Attr(s, k); ok {
		n := v.AsInt64()
		return &n
	}
	return nil
}

// summarize computes the dashboard's figures from the metrics (the same
// instruments Prometheus receives) and checks them against the spans.
func summarize(ctx context.Context, t *telemetry, ops []operationRecord) (summary, error) {
	var rm metricdata.ResourceMetrics
	if err := t.reader.Collect(ctx, &rm); err != nil {
		return summary{}, err
	}
	s := summary{
		Service: t.service, Exporter: t.traces.Exporter, Traces: t.traces, Metrics: t.metrics, Logs: t.logs, Operations: ops, Sampler: t.sampler,
		Decisions:    counterBy(rm, "retry.attempts", attrs.DecisionKey),
		ErrorClasses: counterBy(rm, "retry.attempts", attrs.ErrorClassKey),
		Outcomes:     counterBy(rm, "retry.operations", attrs.OutcomeKey),
		// error.type is set on what failed only: its class, or its status.
		FailedAttempts: histogramCountBy(rm, "retry.attempt.duration", attrs.ErrorTypeKey),
	}
	delete(s.FailedAttempts, "") // attempts that succeeded
	delete(s.ErrorClasses, "")   // attempts that got a response
	attempts, operations := total(s.Decisions), total(s.Outcomes)
	if attempts > 0 {
		s.RetryRatio = float64(s.Decisions[string(attrs.DecisionRetry)]) / float64(attempts)
	}
	if operations > 0 {
		s.DeadlineRatio = float64(s.Outcomes[string(attrs.OutcomeDeadlineExceeded)]) / float64(operations)
	}
	// The three signals come from one event; if they disagree, say so.
	spanAttempts := int64(0)
	for _, op := range ops {
		spanAttempts += int64(len(op.Attempts))
	}
	if t.sampler == "" && (operations != int64(len(ops)) || attempts != spanAttempts) {
		return s, fmt.Errorf("metrics and spans disagree: %d/%d operations, %d/%d attempts", operations, len(ops), attempts, spanAttempts)
	}
	return s, nil
}

func counterBy(rm metricdata.ResourceMetrics, name string, key attribute.Key) map[string]int64 {
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, dp := range sum.DataPoints {
					v, _ := dp.Attributes.Value(key)
					out[v.AsString()] += dp.Value
				}
			}
		}
	}
	return out
}

// histogramCountBy counts the measurements of the histogram name by the
// value of key.
func histogramCountBy(rm metricdata.ResourceMetrics, name string, key attribute.Key) map[string]int64 {
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == name {
				for _, dp := range h.DataPoints {
					v, _ := dp.Attributes.Value(key)
					out[v.AsString()] += int64(dp.Count)
				}
			}
		}
	}
	return out
}

func total(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// printTables writes, per operation, what the caller got and the table
// of its attempt events as retryinspect prints it from the spans (rep),
// then the summary, keeping decisions, failures and outcomes apart.
func printTables(w io.Writer, s summary, rep *htmlreport.Report) error {
	for i, op := range s.Operations {
		result := fmt.Sprintf("response %d", op.Status)
		if op.Status == 0 {
			result = "error: " + op.Error
		}
		fmt.Fprintf(w, "\n[%d] %s\n    operation %s  %s %s\n    outcome %s; %s", i+1, op.Scenario, op.OperationID, op.Method, op.URL, op.Outcome, result)
		if op.StateCheck != "" {
			fmt.Fprintf(w, "; state check: %s", op.StateCheck)
		}
		if op.Method != "GET" {
			fmt.Fprintf(w, "; writes seen by the server: %d", op.WritesSeen)
		}
		fmt.Fprintln(w)
		found, err := rep.WriteAttempts(w, op.spanID, "    ")
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("retryinspect did not read operation %s (span %s)", op.OperationID, op.spanID)
		}
	}
	if s.Sampler == "" {
		fmt.Fprintf(w, "\nSummary (from the retry metrics; spans agree)\n")
	} else {
		fmt.Fprintf(w, "\nSummary (from the retry metrics; spans sampled by OTEL_TRACES_SAMPLER=%s)\n", s.Sampler)
	}
	fmt.Fprintf(w, "  operations %d by outcome:   %s\n", total(s.Outcomes), shares(s.Outcomes))
	fmt.Fprintf(w, "  attempts %d by decision:    %s\n", total(s.Decisions), shares(s.Decisions))
	fmt.Fprintf(w, "  failed attempts %d by class or status:  %s\n", total(s.FailedAttempts), shares(s.FailedAttempts))
	fmt.Fprintf(w, "  retry ratio %.3f (attempts with decision retry / all attempts)\n", s.RetryRatio)
	fmt.Fprintf(w, "  deadline ratio %.3f (operations ending deadline_exceeded / all operations)\n", s.DeadlineRatio)
	return nil
}

func shares(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b)) })
	n := total(m)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d (%.0f%%)", k, m[k], 100*float64(m[k])/float64(n)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
