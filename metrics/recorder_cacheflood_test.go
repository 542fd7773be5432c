// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

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
