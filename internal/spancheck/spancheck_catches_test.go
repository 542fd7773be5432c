// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package spancheck

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/internal/spantest"
)

// recordingTB stands in for the test a helper checks: it records what the
// helper reports, and a Fatal ends the helper's goroutine as testing's does.
type recordingTB struct {
	testing.TB
	msgs []string
}

func (r *recordingTB) Helper()                      {}
func (r *recordingTB) Errorf(f string, args ...any) { r.msgs = append(r.msgs, fmt.Sprintf(f, args...)) }
func (r *recordingTB) Fatalf(f string, args ...any) { r.Errorf(f, args...); runtime.Goexit() }
func (r *recordingTB) Error(args ...any)            { r.msgs = append(r.msgs, fmt.Sprint(args...)) }
func (r *recordingTB) Fatal(args ...any)            { r.Error(args...); runtime.Goexit() }
func (r *recordingTB) Logf(string, ...any)          {}
func (r *recordingTB) Failed() bool                 { return len(r.msgs) > 0 }

// reports runs check against a recording TB and returns what it reported.
func reports(check func(testing.TB)) []string {
	r := &recordingTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.msgs
}

// record ends one span per attribute set, in order, and returns the recorder.
func record(sets ...[]attribute.KeyValue) *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	for _, kv := range sets {
		_, s := tp.Tracer("spancheck").Start(context.Background(), "span")
		s.SetAttributes(kv...)
		s.End()
	}
	return rec
}

func op(attempts int) []attribute.KeyValue {
	return []attribute.KeyValue{attrs.OutcomeKey.String(string(attrs.OutcomeReturn)), attrs.AttemptsKey.Int(attempts)}
}

func attempt(n int, kv ...attribute.KeyValue) []attribute.KeyValue {
	return append([]attribute.KeyValue{attrs.AttemptKey.Int(n)}, kv...)
}

// Each helper must fail a test whose spans break what it checks: a helper
// that cannot fail would let every classifier test it serves pass.
func TestSpancheckHelpersFailWhatTheyCheck(t *testing.T) {
	answered := []attribute.KeyValue{attrs.DecisionKey.String(string(attrs.DecisionReturn)), attrs.HTTPResponseStatusCodeKey.Int(200)}
	cases := []struct {
		name  string
		check func(testing.TB)
	}{
		{"two operation spans", func(tb testing.TB) {
			AssertOperation(tb, record(op(1), op(1), attempt(1)), attrs.OutcomeReturn, 1)
		}},
		{"more attempt spans than attempts", func(tb testing.TB) {
			AssertOperation(tb, record(op(1), attempt(1), attempt(2)), attrs.OutcomeReturn, 1)
		}},
		{"evidence code that is not an int", func(tb testing.TB) {
			rec := record(attempt(1,
				attrs.ErrorClassKey.String(string(attrs.ErrorClassRefusedStream)), attrs.DecisionKey.String(string(attrs.DecisionRetry)),
				attrs.EvidenceProtocolKey.String("h2"), attrs.EvidenceNameKey.String("NO_ERROR"), attrs.EvidenceCodeKey.String("0"),
				attrs.ReasonKey.String(string(attrs.ReasonClassifier))))
			AssertRefused(tb, spantest.Attempts(rec.Ended())[0], attrs.DecisionRetry, "h2", 0, "NO_ERROR")
		}},
		{"answered attempt with an error class", func(tb testing.TB) {
			rec := record(attempt(1, append(answered, attrs.ErrorClassKey.String("timeout"))...))
			AssertAnswered(tb, spantest.Attempts(rec.Ended())[0])
		}},
		{"evidence code alone", func(tb testing.TB) {
			rec := record(attempt(1, attrs.EvidenceCodeKey.Int(7)))
			AssertNoEvidence(tb, spantest.Attempts(rec.Ended())[0])
		}},
	}
	for _, c := range cases {
		if msgs := reports(c.check); len(msgs) == 0 {
			t.Errorf("%s: the helper reported nothing", c.name)
		}
	}
	// And the spans of a clean operation pass.
	if msgs := reports(func(tb testing.TB) {
		rec := record(op(1), attempt(1, answered...))
		AssertOperation(tb, rec, attrs.OutcomeReturn, 1)
		AssertAnswered(tb, spantest.Attempts(rec.Ended())[0])
	}); len(msgs) != 0 {
		t.Errorf("a clean operation was reported: %q", msgs)
	}
}
