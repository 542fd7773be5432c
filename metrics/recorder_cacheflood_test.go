// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

// Values that their labels collapse into one (a caller's own error types,
// error classes, decisions and outcomes outside their closed sets: one
// _OTHER) make one label combination, so they fill no cache: 4,200 of them
// filled the Recorder's sets (4,096 at most), and every combination seen
// after them allocated on each record (a reviewer's find; metrics/doc.go
// promises none once a combination was seen).
func TestValuesThatLabelAsOneFillNoCache(t *testing.T) {
	rec, reader := newRecorder(t)
	ctx := context.Background()
	for i := range 4200 {
		own := fmt.Sprintf("caller.Error%d", i)
		rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.Decision(own), ErrorClass: attrs.ErrorClass(own), ErrorType: own, Duration: time.Millisecond})
		rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Decision: attrs.DecisionReturn, StatusCode: 200, ErrorClass: attrs.ErrorClass(own), Duration: time.Millisecond})
		rec.RecordOperation(ctx, metrics.Operation{Method: "GET", Outcome: attrs.Outcome(own), ErrorType: own, Attempts: 1, Duration: time.Millisecond})
	}
	series := 0
	for _, sets := range recordedSets(t, collect(t, reader)) {
		series += len(sets)
	}
	if series > 8 {
		t.Errorf("%d series after 4,200 values of a caller's own; want the few their _OTHER labels make", series)
	}
	recordSeed(rec) // the seed's combinations are seen now
	if n := testing.AllocsPerRun(200, func() { recordSeed(rec) }); n != 0 {
		t.Fatalf("recording one warm operation allocated %v times after 4,200 values of a caller's own, want 0", n)
	}
}

// A Labels set made otherwise than with NewLabels is filtered as NewLabels
// filters (Attempt.Labels): an operation id in it labels nothing, so its
// 4,200 values make one label combination and fill no cache either (a
// reviewer's find: the keys held the set as given); a warm combination,
// with labels of its own too, then allocates nothing (metrics/doc.go).
func TestLabelsItFiltersFillNoCache(t *testing.T) {
	rec, reader := newRecorder(t)
	ctx := context.Background()
	for i := range 4200 {
		set := attribute.NewSet(attrs.OperationIDKey.String(fmt.Sprintf("op-%d", i)))
		rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Labels: set, Decision: attrs.DecisionReturn, StatusCode: 200, Duration: time.Millisecond})
		rec.RecordOperation(ctx, metrics.Operation{Method: "GET", Labels: set, Outcome: attrs.OutcomeReturn, Attempts: 1, Duration: time.Millisecond})
		rec.RecordBackoff(ctx, metrics.Backoff{Method: "GET", Labels: set, Duration: time.Millisecond})
	}
	series := 0
	for _, sets := range recordedSets(t, collect(t, reader)) {
		series += len(sets)
	}
	if series > 8 {
		t.Errorf("%d series after 4,200 filtered ids; want the few one label set makes", series)
	}
	recordSeed(rec)
	tier := metrics.NewLabels(attribute.String("tenant.tier", "gold"))
	labeled := func() {
		recordSeed(rec)
		rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Labels: tier, Decision: attrs.DecisionReturn, StatusCode: 200, Duration: time.Millisecond})
	}
	labeled()
	if n := testing.AllocsPerRun(200, labeled); n != 0 {
		t.Fatalf("recording one warm operation allocated %v times after 4,200 operation ids the labels filter away, want 0", n)
	}
}

// A flood of label sets made without NewLabels whose distinct keys
// NewLabels drops (url.*) labels one series, fills no set cache, and takes
// no place from the keys NewLabels allows: a NewLabels set whose key is
// first seen after it still allocates nothing once seen (metrics/doc.go;
// a reviewer's find: the memo of keys filled with dropped ones).
func TestAKeyFloodLeavesWarmNewLabelsSetsFree(t *testing.T) {
	rec, reader := newRecorder(t)
	ctx := context.Background()
	// control: before the flood, a warm NewLabels set allocates nothing
	zone := metrics.NewLabels(attribute.String("zone", "a"))
	warm := func() {
		rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Labels: zone, Decision: attrs.DecisionReturn, StatusCode: 200, Duration: time.Millisecond})
	}
	warm()
	if n := testing.AllocsPerRun(200, warm); n != 0 {
		t.Fatalf("control: warm set allocated %v before the flood", n)
	}
	for i := range 4200 {
		set := attribute.NewSet(attribute.String(fmt.Sprintf("url.q%d", i), "v"))
		rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Labels: set, Decision: attrs.DecisionReturn, StatusCode: 200, Duration: time.Millisecond})
	}
	series := 0
	for _, sets := range recordedSets(t, collect(t, reader)) {
		series += len(sets)
	}
	if series > 8 {
		t.Errorf("%d series after 4,200 dropped keys; want one label set's few", series)
	}
	tier := metrics.NewLabels(attribute.String("tenant.tier", "gold"))
	record := func() {
		rec.RecordAttempt(ctx, metrics.Attempt{Method: "GET", Labels: tier, Decision: attrs.DecisionReturn, StatusCode: 200, Duration: time.Millisecond})
	}
	record() // seen
	if n := testing.AllocsPerRun(200, record); n != 0 {
		t.Fatalf("a warm NewLabels set allocated %v times per record after 4,200 dropped keys; want 0", n)
	}
}
