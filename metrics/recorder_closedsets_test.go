// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

// recordedSets is every attribute set recorded, by instrument.
func recordedSets(t *testing.T, got map[string]metricdata.Metrics) map[string][]attribute.Set {
	out := map[string][]attribute.Set{}
	for name, m := range got {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				out[name] = append(out[name], p.Attributes)
			}
		case metricdata.Histogram[int64]:
			for _, p := range d.DataPoints {
				out[name] = append(out[name], p.Attributes)
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				out[name] = append(out[name], p.Attributes)
			}
		}
	}
	return out
}

// doc.go: labels come only from closed sets. A caller's Recorder fed
// values outside them (a URL as a decision, an outcome, an error class)
// labelled its series with them; they are _OTHER now (a reviewer's find,
// as the four tests after it).
func TestLabelsStayInTheirClosedSets(t *testing.T) {
	rec, reader := newRecorder(t)
	ctx := context.Background()
	const hostile = "https://user:secret@example.com/path?token=abc"
	rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.Decision(hostile), ErrorClass: attrs.ErrorClass(hostile)})
	rec.RecordOperation(ctx, metrics.Operation{Method: "GET", Outcome: attrs.Outcome(hostile), Attempts: 1})
	others := map[attribute.Key]bool{}
	for name, sets := range recordedSets(t, collect(t, reader)) {
		for _, s := range sets {
			for _, kv := range s.ToSlice() {
				v := kv.Value.Emit()
				others[kv.Key] = others[kv.Key] || v == "_OTHER"
				if v != "_OTHER" && !inClosedSet(kv.Key, v) {
					t.Errorf("%s: %s=%q, outside its closed set", name, kv.Key, v)
				}
			}
		}
	}
	for _, k := range []attribute.Key{attrs.DecisionKey, attrs.OutcomeKey, attrs.ErrorClassKey} {
		if !others[k] {
			t.Errorf("no %s=_OTHER recorded", k)
		}
	}
}

// error.type is an error class, a status code or an operation's outcome;
// a URL passed as one is _OTHER.
func TestErrorTypeCarriesNoURL(t *testing.T) {
	rec, reader := newRecorder(t)
	ctx := context.Background()
	const url = "https://user:secret@example.com/path?token=abc"
	rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.DecisionStop, ErrorClass: attrs.ErrorClassOther, ErrorType: url})
	rec.RecordOperation(ctx, metrics.Operation{Method: "GET", Outcome: attrs.OutcomeStop, ErrorType: url, Attempts: 1})
	kept := []string{"timeout", "503", "deadline_exceeded"} // a class, a status, an outcome
	for _, v := range kept {
		rec.RecordOperation(ctx, metrics.Operation{Method: "GET", Outcome: attrs.OutcomeDeadlineExceeded, ErrorType: v, Attempts: 1})
	}
	seen := map[string]bool{}
	for name, sets := range recordedSets(t, collect(t, reader)) {
		for _, s := range sets {
			for _, kv := range s.ToSlice() {
				if strings.Contains(kv.Value.Emit(), "secret") {
					t.Errorf("%s: label %s=%q carries a URL", name, kv.Key, kv.Value.Emit())
				}
				if kv.Key == attrs.ErrorTypeKey {
					seen[kv.Value.Emit()] = true
				}
			}
		}
	}
	for _, v := range append(kept, "_OTHER") {
		if !seen[v] {
			t.Errorf("error.type %q not recorded; recorded %v", v, seen)
		}
	}
}

// retry.attempts carries retry.error_class or http.response.status_code,
// never both (attrs.ErrorClassKey): given both, the status code.
func TestAnAttemptIsNeverLabelledWithAClassAndAStatus(t *testing.T) {
	rec, reader := newRecorder(t)
	rec.RecordAttempt(context.Background(), metrics.Attempt{Method: "GET", Decision: attrs.DecisionStop,
		ErrorClass: attrs.ErrorClassTimeout, StatusCode: 503})
	for name, sets := range recordedSets(t, collect(t, reader)) {
		for _, s := range sets {
			_, c := s.Value(attrs.ErrorClassKey)
			_, st := s.Value(attrs.HTTPResponseStatusCodeKey)
			if c && st {
				t.Errorf("%s: both retry.error_class and http.response.status_code: %v", name, s.ToSlice())
			}
		}
	}
}

// Labels built without NewLabels carry no id or URL either: the Recorder
// filters them as NewLabels does.
func TestLabelsNotMadeByNewLabelsCarryNoIDs(t *testing.T) {
	rec, reader := newRecorder(t)
	raw := attribute.NewSet(attrs.OperationIDKey.String("op-1"), attrs.URLFullKey.String("https://example.com/?token=secret"))
	rec.RecordOperation(context.Background(), metrics.Operation{Method: "GET", Outcome: attrs.OutcomeReturn, Attempts: 1, Labels: raw})
	for name, sets := range recordedSets(t, collect(t, reader)) {
		for _, s := range sets {
			for _, k := range []attribute.Key{attrs.OperationIDKey, attrs.URLFullKey} {
				if v, ok := s.Value(k); ok {
					t.Errorf("%s: label %s=%q", name, k, v.Emit())
				}
			}
		}
	}
}

// inClosedSet reports whether v is in the closed set of the label k (any
// value for a label without one).
func inClosedSet(k attribute.Key, v string) bool {
	switch k {
	case attrs.DecisionKey:
		return attrs.Decision(v).Valid()
	case attrs.OutcomeKey:
		return attrs.Outcome(v).Valid()
	case attrs.ErrorClassKey:
		return attrs.ErrorClass(v).Valid()
	}
	return true
}
