// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

// Attempt.StatusCode: "A status code labels the series when it is one
// net/http's client reads (three digits: 1 to 999 ...)": both ends label.
func TestTheEndsOfTheStatusRangeLabel(t *testing.T) {
	rec, reader := newRecorder(t)
	for _, code := range []int{1, 999} {
		rec.RecordAttempt(context.Background(), metrics.Attempt{Method: "GET", Decision: attrs.DecisionReturn,
			StatusCode: code, Duration: time.Millisecond})
	}
	got := map[int64]bool{}
	for _, p := range collect(t, reader)["retry.attempts"].Data.(metricdata.Sum[int64]).DataPoints {
		if v, ok := p.Attributes.Value(attrs.HTTPResponseStatusCodeKey); ok {
			got[v.AsInt64()] = true
		}
	}
	for _, code := range []int64{1, 999} {
		if !got[code] {
			t.Errorf("status %d labels no retry.attempts series; got %v", code, got)
		}
	}
}

// error.type is a status code "of one to three digits, written without
// leading zeros": "0", "00" and "000" are status 0, labelled "0" (not
// dropped), and four digits are no status code, so _OTHER.
func TestErrorTypeDigitsAtTheEdges(t *testing.T) {
	for errorType, want := range map[string]string{"0": "0", "00": "0", "000": "0", "1000": "_OTHER", "0503": "_OTHER", "5030": "_OTHER"} {
		rec, reader := newRecorder(t)
		rec.RecordAttempt(context.Background(), metrics.Attempt{Method: "GET", Decision: attrs.DecisionStop,
			StatusCode: 503, ErrorType: errorType, Duration: time.Millisecond})
		points := collect(t, reader)["retry.attempt.duration"].Data.(metricdata.Histogram[float64]).DataPoints
		if len(points) != 1 {
			t.Fatalf("error.type %q: %d series", errorType, len(points))
		}
		if v, ok := points[0].Attributes.Value(attrs.ErrorTypeKey); !ok || v.AsString() != want {
			t.Errorf("error.type %q labels %q (present %v), want %q", errorType, v.AsString(), ok, want)
		}
	}
}

// NewRecorder: on the no-op meter "recording is skipped outright" (the
// off field): a cold label combination costs nothing there.
func TestANoopMeterRecorderBuildsNothing(t *testing.T) {
	rec, err := metrics.NewRecorder(noop.NewMeterProvider().Meter(scope))
	if err != nil {
		t.Fatal(err)
	}
	servers := make([]string, 200)
	for i := range servers {
		servers[i] = fmt.Sprintf("h%d.test", i)
	}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		rec.RecordAttempt(context.Background(), metrics.Attempt{Method: "GET", ServerAddress: servers[i],
			Decision: attrs.DecisionReturn, StatusCode: 200, Duration: time.Millisecond})
		i++
	})
	if allocs != 0 {
		t.Errorf("a Recorder on the no-op meter allocates %.1f per cold attempt; want 0 (recording skipped)", allocs)
	}
}
