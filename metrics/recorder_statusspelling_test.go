// Copyright The otelretry Authors
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelretry/otelretry-go/attrs"
	"github.com/otelretry/otelretry-go/metrics"
)

// error.type is closed: an error class, an outcome, or an HTTP status
// code as the semantic conventions spell one (its decimal, no leading
// zero). A caller's value outside that set is _OTHER. "7", "07" and "007"
// are one status at most, never three series: the comment on isStatusCode
// bounds the set at "a thousand values at most" (a reviewer's find: each
// spelling was a series of its own).
func TestAStatusSpelledWithZerosIsOneSeries(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	rec, err := metrics.NewRecorder(mp.Meter("t"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := 0; i < 1000; i++ {
		for _, f := range []string{"%d", "%02d", "%03d"} {
			rec.RecordAttempt(context.Background(), metrics.Attempt{Method: "GET", Decision: attrs.DecisionRetry,
				StatusCode: 503, ErrorType: fmt.Sprintf(f, i), Duration: time.Millisecond})
			n++
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "retry.attempt.duration" {
				continue
			}
			points := m.Data.(metricdata.Histogram[float64]).DataPoints
			series := len(points)
			for _, p := range points {
				if v, _ := p.Attributes.Value(attrs.ErrorTypeKey); v.AsString() == "07" || v.AsString() == "007" || v.AsString() == "00" {
					t.Errorf("error.type %q, want the code without its leading zeros", v.AsString())
				}
			}
			t.Logf("%d recordings, %d series", n, series)
			if series != 1000 {
				t.Errorf("retry.attempt.duration has %d series from %d error.type spellings of 1000 status codes; want 1000, one per code", series, n)
			}
		}
	}
}

// http.response.status_code is as closed as error.type: a status net/http's
// client reads (1 to 999) labels retry.attempts; any other value a
// caller's Recorder is fed (negative, four digits and more) labels no
// series, as 0 does, where each made a series of its own (a reviewer's
// find: 5,000 values, 5,000 series).
func TestAStatusOutsideWhatHTTPReadsLabelsNoSeries(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	rec, err := metrics.NewRecorder(mp.Meter("t"))
	if err != nil {
		t.Fatal(err)
	}
	codes := []int{-1, -503, 1000, 1001, 5030, 99999, 1 << 40}
	for _, code := range codes {
		rec.RecordAttempt(context.Background(), metrics.Attempt{Method: "GET", Decision: attrs.DecisionReturn,
			StatusCode: code, Duration: time.Millisecond})
	}
	rec.RecordAttempt(context.Background(), metrics.Attempt{Method: "GET", Decision: attrs.DecisionReturn,
		StatusCode: 999, Duration: time.Millisecond})
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "retry.attempts" {
				continue
			}
			got := map[int64]int64{}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				v, _ := p.Attributes.Value(attrs.HTTPResponseStatusCodeKey)
				got[v.AsInt64()] += p.Value
			}
			if want := map[int64]int64{0: int64(len(codes)), 999: 1}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("retry.attempts by status code (0: none) = %v, want %v", got, want)
			}
		}
	}
}
